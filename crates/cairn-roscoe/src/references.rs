//! Who uses a workflow: the subworkflow nodes whose `config.workflow` names an id, found in a workflow's raw YAML.
//!
//! The scan reads the document as written (not the validated model), so a referrer with integrity errors still
//! counts. A node's explicit `config.source` is returned too, because a rename or delete only concerns the nodes
//! that can resolve to the workflow being changed. Walking the files of a scope is the service's job.

use serde_json::Value;

use crate::source::Source;

/// One subworkflow node pointing at the id searched for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NodeRef {
    /// The node id.
    pub(crate) node_id: String,
    /// The node's explicit `config.source`, when it names a valid one.
    pub(crate) source: Option<Source>,
}

impl NodeRef {
    /// JSON pointer of the node's `config.workflow` scalar.
    pub(crate) fn pointer(&self) -> String {
        format!(
            "/nodes/{}/config/workflow",
            self.node_id.replace('~', "~0").replace('/', "~1")
        )
    }

    /// Whether this node can resolve to a workflow stored in `source`.
    pub(crate) fn can_reach(&self, source: Source) -> bool {
        self.source.is_none_or(|s| s == source)
    }
}

/// The subworkflow nodes of `text` that name `target`; `Err` with the YAML error when the text cannot be read.
pub(crate) fn subworkflow_refs(text: &str, target: &str) -> Result<Vec<NodeRef>, String> {
    let doc = cairn_yaml::parse(text)?;
    let Some(nodes) = doc.value.get("nodes").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    Ok(nodes
        .iter()
        .filter(|(_, node)| node.get("type").and_then(Value::as_str) == Some("subworkflow"))
        .filter(|(_, node)| {
            node.pointer("/config/workflow").and_then(Value::as_str) == Some(target)
        })
        .map(|(id, node)| NodeRef {
            node_id: id.clone(),
            source: node
                .pointer("/config/source")
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok()),
        })
        .collect())
}

/// Every workflow id the subworkflow nodes of a parsed workflow document call, in node order.
pub(crate) fn subworkflow_targets(doc: &Value) -> Vec<String> {
    let Some(nodes) = doc.get("nodes").and_then(Value::as_object) else {
        return Vec::new();
    };
    nodes
        .values()
        .filter(|node| node.get("type").and_then(Value::as_str) == Some("subworkflow"))
        .filter_map(|node| node.pointer("/config/workflow").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, target: &str) -> Vec<(String, Option<Source>)> {
        subworkflow_refs(text, target)
            .unwrap()
            .into_iter()
            .map(|r| (r.node_id, r.source))
            .collect()
    }

    #[test]
    fn finds_subworkflow_nodes_naming_the_target() {
        let text = "nodes:\n  a: { type: subworkflow, config: { workflow: child } }\n  b: { type: subworkflow, config: { workflow: other } }\n  c: { type: subworkflow, config: { workflow: child, source: global } }\n  d: { type: script, config: { workflow: child } }\n";
        assert_eq!(
            check(text, "child"),
            [("a".into(), None), ("c".into(), Some(Source::Global))]
        );
        assert!(check("name: x\n", "child").is_empty());
        assert!(subworkflow_refs("nodes: [", "child").is_err());
        assert_eq!(subworkflow_targets(&cairn_yaml::parse(text).unwrap().value), ["child", "other", "child"]);
        assert!(subworkflow_targets(&serde_json::json!({"nodes": []})).is_empty());
    }

    #[test]
    fn reach_respects_an_explicit_source() {
        let r = NodeRef {
            node_id: "a/b".into(),
            source: Some(Source::Repo),
        };
        assert!(r.can_reach(Source::Repo));
        assert!(!r.can_reach(Source::Global));
        assert_eq!(r.pointer(), "/nodes/a~1b/config/workflow");
    }
}
