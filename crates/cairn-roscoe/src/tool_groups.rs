//! Tool groups: which of roscoe's tools a server offers, for hosts that put every tool into every model request.
//! `roscoe mcp --tools runs,docs` and `/roscoe/mcp?tools=runs,docs` offer only those groups (`all`, the default,
//! offers every tool); a tool outside them is neither listed nor callable.

/// One group of tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// Starting, answering and following runs (and listing the workflows to start).
    Runs,
    /// Reading, writing, checking, drawing and testing workflows.
    Authoring,
    /// Importing a skill as a workflow.
    Skills,
    /// cairn's documentation.
    Docs,
}

/// The group names, as `--tools` takes them.
pub const NAMES: &[&str] = &["runs", "authoring", "skills", "docs", "all"];

/// Each tool's groups.
const TOOLS: &[(&str, &[Group])] = &[
    ("list_workflows", &[Group::Runs, Group::Authoring]),
    ("get_workflow", &[Group::Authoring]),
    ("create_workflow", &[Group::Authoring]),
    ("update_workflow", &[Group::Authoring]),
    ("delete_workflow", &[Group::Authoring]),
    ("list_workflow_references", &[Group::Authoring]),
    ("move_workflow", &[Group::Authoring]),
    ("duplicate_workflow", &[Group::Authoring]),
    ("rename_workflow", &[Group::Authoring]),
    ("get_workflow_schema", &[Group::Authoring, Group::Skills]),
    ("validate_workflow", &[Group::Authoring, Group::Skills]),
    ("lint_workflow", &[Group::Authoring]),
    ("get_workflow_diagram", &[Group::Authoring, Group::Runs]),
    ("test_workflow", &[Group::Authoring]),
    ("start_workflow", &[Group::Runs]),
    ("get_run_status", &[Group::Runs]),
    ("advance_run", &[Group::Runs]),
    ("advance_consensus", &[Group::Runs]),
    ("advance_round_robin", &[Group::Runs]),
    ("advance_map", &[Group::Runs]),
    ("resume_run", &[Group::Runs]),
    ("cancel_run", &[Group::Runs]),
    ("retry_run", &[Group::Runs]),
    ("fork_run", &[Group::Runs]),
    ("set_run_budget", &[Group::Runs]),
    ("list_runs", &[Group::Runs]),
    ("get_run_history", &[Group::Runs]),
    ("list_skills", &[Group::Skills]),
    ("convert_skill", &[Group::Skills]),
    ("finalize_skill_conversion", &[Group::Skills]),
    ("list_docs", &[Group::Docs]),
    ("get_doc", &[Group::Docs]),
    ("search_docs", &[Group::Docs]),
    ("ask_docs", &[Group::Docs]),
    ("answer_docs", &[Group::Docs]),
];

/// The groups a server offers; `None` inside means all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolGroups(Option<Vec<Group>>);

impl ToolGroups {
    /// Every tool.
    pub fn all() -> Self {
        ToolGroups(None)
    }

    /// The groups `list` names, comma-separated (`runs,docs`), or what is wrong with it.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut groups = Vec::new();
        for name in list.split(',').map(str::trim) {
            let group = match name {
                "all" => return Ok(ToolGroups::all()),
                "runs" => Group::Runs,
                "authoring" => Group::Authoring,
                "skills" => Group::Skills,
                "docs" => Group::Docs,
                _ => {
                    return Err(format!(
                        "unknown tool group {name:?}: give one or more of {}, separated by commas (e.g. runs,docs)",
                        NAMES.join(", ")
                    ));
                }
            };
            groups.push(group);
        }
        Ok(ToolGroups(Some(groups)))
    }

    /// Whether `tool` is offered (a tool no group names is offered only with `all`).
    pub fn offers(&self, tool: &str) -> bool {
        let Some(groups) = &self.0 else { return true };
        TOOLS.iter().any(|(name, of)| *name == tool && of.iter().any(|g| groups.contains(g)))
    }
}

/// The groups a request's query asks for (`tools=runs,docs`), `None` when it names none.
pub fn requested(query: &str) -> Option<Result<ToolGroups, String>> {
    let value = query.split('&').find_map(|pair| pair.strip_prefix("tools="))?;
    let value = value.replace("%2C", ",").replace("%2c", ",").replace('+', " ");
    Some(ToolGroups::parse(&value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_offer_their_tools_and_all_offers_everything() {
        let runs = ToolGroups::parse("runs").unwrap();
        assert!(runs.offers("start_workflow") && runs.offers("list_workflows") && !runs.offers("create_workflow"));
        let two = ToolGroups::parse("skills, docs").unwrap();
        assert!(two.offers("convert_skill") && two.offers("get_doc") && !two.offers("advance_run"));
        assert!(ToolGroups::parse("docs,all").unwrap().offers("advance_run"));
        assert!(ToolGroups::all().offers("anything"));
    }

    #[test]
    fn an_unknown_group_is_refused_naming_the_groups() {
        let error = ToolGroups::parse("runs,workflows").unwrap_err();
        assert!(error.contains("\"workflows\"") && error.contains("runs, authoring, skills, docs, all"), "{error}");
        assert!(ToolGroups::parse("").is_err());
    }

    #[test]
    fn a_query_asks_for_groups_by_tools() {
        assert_eq!(requested("tools=runs%2Cdocs"), Some(ToolGroups::parse("runs,docs")));
        assert_eq!(requested("project=p&tools=docs"), Some(ToolGroups::parse("docs")));
        assert_eq!(requested("project=p"), None);
        assert!(requested("tools=nope").is_some_and(|r| r.is_err()));
    }
}
