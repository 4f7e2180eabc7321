//! What `get_workflow_schema` returns (§13.2, seed "Authoring helpers"): the JSON Schema, the executor list, the
//! models `roscoe.yaml` permits, and the authoring gotchas.
//!
//! [`workflow_schema_info`] assembles the result; [`load_models`] reads the `models` section of the global and project
//! `roscoe.yaml` files (§2.2). This module takes file *text*, never paths: finding and reading the files is the
//! service's job, which passes `None` for a file that does not exist. The executor list is built from
//! [`NodeType::config_keys`], so the keys are written down once, in the model.

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::definition::{self, ConfigKey, NodeType};

/// The model every node uses when neither the node, `defaults.model` nor `roscoe.yaml` names one.
pub const BUILTIN_DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// The models permitted when no `roscoe.yaml` has a `models` section.
pub const BUILTIN_AVAILABLE_MODELS: &[&str] =
    &["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"];

/// The short names accepted when no `roscoe.yaml` has a `models` section: alias → model id.
pub const BUILTIN_MODEL_ALIASES: &[(&str, &str)] = &[
    ("sonnet", "claude-sonnet-4-5"),
    ("opus", "claude-opus-4-1"),
    ("haiku", "claude-haiku-4-5"),
];

/// The result of `get_workflow_schema`, with the seed's field names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkflowSchemaInfo {
    /// The workflow JSON Schema (draft 2020-12), as [`definition::schema`] holds it.
    #[serde(rename = "jsonSchema")]
    pub schema: Value,
    /// Every node type, in the spec's order.
    pub executors: Vec<ExecutorSummary>,
    /// The models `roscoe.yaml` permits, or why they could not be read.
    pub models: ModelsInfo,
    /// The runtime gotchas worth reading before writing a workflow.
    #[serde(rename = "authoring")]
    pub gotchas: Vec<&'static str>,
}

/// One executor (node type) as `get_workflow_schema` describes it (§7).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutorSummary {
    /// The `type` written in YAML.
    #[serde(rename = "type")]
    pub kind: NodeType,
    /// One line on what the node does.
    pub description: &'static str,
    /// Whether the node pauses the run and hands a step to the host (or a human).
    pub hands_back: bool,
    /// Whether the node fans out (the one classifier, [`NodeType::is_fanout`]).
    pub fanout: bool,
    /// The keys its `config` accepts.
    pub config_keys: &'static [ConfigKey],
    /// The events it emits.
    pub events: Events,
}

/// The events a node type emits: a fixed list, or names that come from the node's own config or transitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Events {
    /// Always these events (plus `max_iterations` when the node has `maxIterations`).
    Fixed(&'static [&'static str]),
    /// Events named by the node itself (verdicts, case events, transition keys); serialized as `"dynamic"`.
    Dynamic,
}

impl Serialize for Events {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Events::Fixed(events) => events.serialize(s),
            Events::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

/// The `models` field: `{ available, default }`, or `{ error }` when a `roscoe.yaml` could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ModelsInfo {
    /// The permitted model ids and the default one.
    Models {
        /// Permitted model ids, as written in `roscoe.yaml` (or the built-in list).
        available: Vec<String>,
        /// The model used when a node names none.
        default: String,
    },
    /// Why the models are unknown; lint then skips `unknown_model`.
    Error {
        /// The problem, naming the file and, where known, the line and column.
        error: String,
    },
}

/// The effective `models` section: the project file's, else the global file's, else the built-in one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Models {
    /// The model used when a node names none (aliases expanded).
    pub default: String,
    /// Permitted model ids, in file order.
    pub available: Vec<String>,
    /// Short names: alias → model id, in file order.
    pub aliases: Vec<(String, String)>,
}

/// One `roscoe.yaml` file's text and where it came from (used in error messages only).
#[derive(Clone, Copy, Debug)]
pub struct ConfigFile<'a> {
    /// The file's path, as shown to the user.
    pub path: &'a str,
    /// Its contents.
    pub text: &'a str,
}

/// A `roscoe.yaml` that exists but cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file's path.
    pub path: String,
    /// What is wrong and how to fix it, with the line and column where known.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ConfigError {}

impl Default for Models {
    fn default() -> Self {
        Models {
            default: BUILTIN_DEFAULT_MODEL.to_owned(),
            available: BUILTIN_AVAILABLE_MODELS
                .iter()
                .map(|m| (*m).to_owned())
                .collect(),
            aliases: BUILTIN_MODEL_ALIASES
                .iter()
                .map(|(a, m)| ((*a).to_owned(), (*m).to_owned()))
                .collect(),
        }
    }
}

impl Models {
    /// The model id a name stands for: an alias expands, anything else is itself.
    pub fn resolve<'n>(&'n self, name: &'n str) -> &'n str {
        self.aliases
            .iter()
            .find(|(alias, _)| alias == name)
            .map_or(name, |(_, model)| model.as_str())
    }

    /// Every name a workflow may use as a `model`: the available ids and the aliases that lead to one of them.
    /// This is the list lint's `unknown_model` check takes ([`definition::Options::models`]).
    pub fn permitted(&self) -> Vec<String> {
        let mut names = self.available.clone();
        names.extend(
            self.aliases
                .iter()
                .filter(|(alias, model)| self.available.contains(model) && !names.contains(alias))
                .map(|(alias, _)| alias.clone())
                .collect::<Vec<_>>(),
        );
        names
    }
}

/// Reads the effective models from the global and the project `roscoe.yaml` (`None`: the file does not exist).
///
/// The project's `models` section replaces the global one as a whole (§2.2: shallow merge per top-level key); with
/// no section anywhere the built-in models apply. Inside a section, a missing `available` or `aliases` takes the
/// built-in value, and a missing `default` is the built-in default if it is available, else the first available
/// model. Either file failing to parse, or a `models` section of the wrong shape, is an error.
pub fn load_models(
    global: Option<ConfigFile<'_>>,
    project: Option<ConfigFile<'_>>,
) -> Result<Models, ConfigError> {
    let global = global.map(models_section).transpose()?.flatten();
    let project = project.map(models_section).transpose()?.flatten();
    match project.or(global) {
        Some(section) => Ok(section),
        None => Ok(Models::default()),
    }
}

/// Assembles the `get_workflow_schema` result from the models [`load_models`] produced.
pub fn workflow_schema_info(models: &Result<Models, ConfigError>) -> WorkflowSchemaInfo {
    let schema = serde_json::from_str(definition::schema())
        .expect("the bundled workflow schema is JSON (checked by the definition tests)");
    WorkflowSchemaInfo {
        schema,
        executors: executors(),
        models: match models {
            Ok(m) => ModelsInfo::Models {
                available: m.available.clone(),
                default: m.default.clone(),
            },
            Err(e) => ModelsInfo::Error {
                error: e.to_string(),
            },
        },
        gotchas: GOTCHAS.to_vec(),
    }
}

/// The executor list: every node type, in the spec's order.
pub fn executors() -> Vec<ExecutorSummary> {
    NodeType::ALL
        .into_iter()
        .map(|kind| {
            let (description, events) = about(kind);
            ExecutorSummary {
                kind,
                description,
                hands_back: kind.hands_back(),
                fanout: kind.is_fanout(),
                config_keys: kind.config_keys(),
                events,
            }
        })
        .collect()
}

/// The one-line meaning and the events of a node type (§7).
fn about(kind: NodeType) -> (&'static str, Events) {
    const SUCCESS_FAILURE: Events = Events::Fixed(&["success", "failure"]);
    match kind {
        NodeType::Script => (
            "Runs a shell command or a bundled script on the server; synchronous, never hands back.",
            SUCCESS_FAILURE,
        ),
        NodeType::Condition => (
            "Routes on a CEL expression (events true / false) or on the first matching case; synchronous.",
            Events::Dynamic,
        ),
        NodeType::AiAgent => (
            "Hands a task to the host's AI; any response is accepted and becomes the node's text.",
            SUCCESS_FAILURE,
        ),
        NodeType::AiJudge => (
            "Hands a question to the host's AI, which must answer {\"reasoning\", \"verdict\"}; the verdict is the event.",
            Events::Dynamic,
        ),
        NodeType::Consensus => (
            "Several independent agents answer the same prompt; a quorum decides (gate, answer or most_consistent).",
            Events::Dynamic,
        ),
        NodeType::RoundRobin => (
            "Pairwise tournament: judges every pair of candidates against a criterion and picks a winner.",
            SUCCESS_FAILURE,
        ),
        NodeType::Map => (
            "Runs one agent per item (optionally extracting the items first), then an optional reduce step.",
            SUCCESS_FAILURE,
        ),
        NodeType::Human => (
            "Waits for a person to pick one of the node's transitions; the AI host must never answer it.",
            Events::Dynamic,
        ),
        NodeType::Subworkflow => (
            "Runs another workflow as a child run; succeeds or fails with it.",
            SUCCESS_FAILURE,
        ),
    }
}

/// The authoring gotchas (the `authoring` array), in our own words.
pub const GOTCHAS: &[&str] = &[
    "Templates: `{{ node.field }}` reads the latest output of `node` (`{{ node }}` alone is its text); `{{ input.x }}` reads a run input, `{{ run.id }}` the run. Chain fallbacks with `||`: `{{ fix.summary || \"none\" }}`.",
    "Dominance: a template or condition may reference a node only if every path from `initial` to the referencing node passes through it. Otherwise (a node on one branch only, or the node itself) add a `||` fallback, or validation reports undominated_reference.",
    "Loops: every cycle needs `maxIterations` on at least one of its nodes, unless a human node is in the cycle. The visit after the last allowed one emits `max_iterations`; route it (e.g. to a human) or the run fails with max_iterations_exceeded.",
    "Ending a run: route to `$end` to complete it or to `$fail` to fail it (routed_to_fail); a node with no transitions is a sink and its own result ends the run. An event with no route fails the run, and a `failure` with no route fails it with the node's error.",
    "Quote the transition keys `\"true\"` and `\"false\"` (used by condition expressions): YAML 1.1 reads an unquoted `true:` key as a boolean, and cairn refuses such a key. The same goes for yes/no/on/off and for text values (`prompt: \"no\"`).",
    "ai_judge or consensus: use ai_judge for routine routing (one model call); use consensus (3–5 agents with a quorum) for gates where a wrong verdict is costly. Choices default to the transition keys minus the reserved events failure, max_iterations, no_consensus and timeout, which can never be choices.",
    "Scripts: template values in `command` are inserted shell-quoted, one word each, so write `grep {{ input.pattern }} file`; a value inside quotes (`\"note {{ x }}\"`), after `$` or in a here-document is refused (`script_hole_quoted`), because the shell would expand what it holds. To build a string, pass the value in `env` (`env: { NOTE: '{{ draft.text }}' }`, inserted raw into the variable, never through the shell) and write `\"note $NOTE\"`. Bundled scripts are reached through `$ROSCOE_WORKFLOW_DIR` (the workflow's asset folder).",
    "Fan-out nodes (consensus, round_robin, map, subworkflow) and ai_agent / ai_judge hand steps back to the host; test_workflow runs fan-out nodes only on mocks you supply (or with an API key), otherwise it rejects them with fanout_in_test_mode_unsupported.",
    "Human nodes wait for a person: a host must show the prompt and the numbered transitions and wait for the user's answer, never answer a human step itself.",
    "Runs snapshot the workflow when they start: editing or renaming the file changes new runs only.",
    "Node ids match ^[A-Za-z_][A-Za-z0-9_]*$ (no hyphens or dots) and cannot be input, run, item, index, results or env; workflow ids match ^[a-z0-9][a-z0-9_-]{0,63}$ and `name` must equal the file stem.",
    "Models: set `model` per node or in `defaults`; it must be one of the available models in `models` (or an alias from roscoe.yaml), else lint warns unknown_model.",
];

/// The `models` section of one file: `None` when the file has none.
pub(crate) fn models_section(file: ConfigFile<'_>) -> Result<Option<Models>, ConfigError> {
    let fail = |message: String| ConfigError {
        path: file.path.to_owned(),
        message,
    };
    let doc = cairn_yaml::parse(file.text).map_err(|e| fail(format!("not valid YAML: {e}")))?;
    let at = |pointer: &str| match doc.position(pointer) {
        Some((line, column)) => format!("line {line}, column {column}: "),
        None => String::new(),
    };
    let root = match &doc.value {
        Value::Null => return Ok(None),
        Value::Object(root) => root,
        _ => {
            return Err(fail(format!(
                "{}the file must be a mapping of sections (models, pricing, hosts)",
                at("")
            )));
        }
    };
    let models = match root.get("models") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(models)) => models,
        Some(_) => {
            return Err(fail(format!(
                "{}`models` must be a mapping with `default`, `available` and `aliases`",
                at("/models")
            )));
        }
    };
    if let Some(key) = models
        .keys()
        .find(|k| !["default", "available", "aliases", "providers"].contains(&k.as_str()))
    {
        return Err(fail(format!(
            "{}unknown key `models.{key}`; the models section accepts default, available, aliases and providers",
            at(&format!(
                "/models/{}",
                key.replace('~', "~0").replace('/', "~1")
            ))
        )));
    }
    let builtin = Models::default();
    let available = match models.get("available") {
        None => builtin.available,
        Some(Value::Array(items)) => {
            let mut ids = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item.as_str().map(str::trim) {
                    Some(id) if !id.is_empty() => ids.push(id.to_owned()),
                    _ => {
                        return Err(fail(format!(
                            "{}`models.available` entries must be non-empty model id strings",
                            at(&format!("/models/available/{i}"))
                        )));
                    }
                }
            }
            if ids.is_empty() {
                return Err(fail(format!(
                    "{}`models.available` is empty; list at least one model id",
                    at("/models/available")
                )));
            }
            ids
        }
        Some(_) => {
            return Err(fail(format!(
                "{}`models.available` must be a list of model ids",
                at("/models/available")
            )));
        }
    };
    let aliases = match models.get("aliases") {
        None => builtin.aliases,
        Some(Value::Object(map)) => string_map(map).ok_or_else(|| {
            fail(format!(
                "{}`models.aliases` must map each short name to a model id string",
                at("/models/aliases")
            ))
        })?,
        Some(_) => {
            return Err(fail(format!(
                "{}`models.aliases` must be a mapping of short name to model id",
                at("/models/aliases")
            )));
        }
    };
    let mut section = Models {
        default: String::new(),
        available,
        aliases,
    };
    section.default = match models.get("default") {
        None => {
            if section.available.iter().any(|m| m == BUILTIN_DEFAULT_MODEL) {
                BUILTIN_DEFAULT_MODEL.to_owned()
            } else {
                section.available[0].clone()
            }
        }
        Some(Value::String(name)) => {
            let id = section.resolve(name.trim()).to_owned();
            if !section.available.contains(&id) {
                return Err(fail(format!(
                    "{}`models.default` '{name}' is not in `models.available` ({}); add it there or pick one of them",
                    at("/models/default"),
                    section.available.join(", ")
                )));
            }
            id
        }
        Some(_) => {
            return Err(fail(format!(
                "{}`models.default` must be a model id string",
                at("/models/default")
            )));
        }
    };
    Ok(Some(section))
}

fn string_map(map: &Map<String, Value>) -> Option<Vec<(String, String)>> {
    map.iter()
        .map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> Option<ConfigFile<'_>> {
        Some(ConfigFile {
            path: "roscoe.yaml",
            text,
        })
    }

    fn error(global: Option<ConfigFile<'_>>, project: Option<ConfigFile<'_>>) -> String {
        load_models(global, project).unwrap_err().to_string()
    }

    #[test]
    fn executors_cover_all_nine_types_with_their_config_keys() {
        let list = executors();
        let types: Vec<_> = list.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(
            types,
            [
                "script",
                "condition",
                "ai_agent",
                "ai_judge",
                "consensus",
                "round_robin",
                "map",
                "human",
                "subworkflow"
            ]
        );
        for e in &list {
            assert_eq!(e.config_keys, e.kind.config_keys());
            assert!(!e.config_keys.is_empty() && !e.description.is_empty());
        }
        let json = serde_json::to_value(&list).unwrap();
        let judge = &json[3];
        assert_eq!(judge["type"], "ai_judge");
        assert_eq!(judge["handsBack"], true);
        assert_eq!(judge["fanout"], false);
        assert_eq!(judge["events"], "dynamic");
        assert_eq!(
            judge["configKeys"][0],
            serde_json::json!({"name": "prompt", "type": "string", "required": true, "description": "Question to judge (templated)."})
        );
        assert_eq!(json[0]["events"], serde_json::json!(["success", "failure"]));
        assert_eq!(json[8]["handsBack"], false);
        assert_eq!(json[8]["fanout"], true);
    }

    #[test]
    fn schema_info_has_the_seed_fields() {
        let info = serde_json::to_value(workflow_schema_info(&Ok(Models::default()))).unwrap();
        let keys: Vec<_> = info.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["jsonSchema", "executors", "models", "authoring"]);
        assert_eq!(
            info["jsonSchema"]["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(
            info["models"],
            serde_json::json!({"available": ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"], "default": "claude-sonnet-4-5"})
        );
        assert_eq!(info["executors"].as_array().unwrap().len(), 9);
        let authoring = info["authoring"].as_array().unwrap();
        for topic in [
            "||",
            "maxIterations",
            "$end",
            "$fail",
            "consensus",
            "\"true\"",
            "shell-quoted",
            "snapshot",
        ] {
            assert!(
                authoring
                    .iter()
                    .any(|g| g.as_str().unwrap().contains(topic)),
                "no gotcha mentions {topic}"
            );
        }
    }

    #[test]
    fn a_config_error_becomes_models_error() {
        let err = ConfigError {
            path: "/p/roscoe.yaml".into(),
            message: "not valid YAML".into(),
        };
        let info = serde_json::to_value(workflow_schema_info(&Err(err))).unwrap();
        assert_eq!(
            info["models"],
            serde_json::json!({"error": "/p/roscoe.yaml: not valid YAML"})
        );
    }

    #[test]
    fn missing_files_give_the_builtin_models() {
        assert_eq!(load_models(None, None).unwrap(), Models::default());
        assert_eq!(
            load_models(file(""), file("server: { port: 1 }\n")).unwrap(),
            Models::default()
        );
    }

    #[test]
    fn a_present_file_is_read() {
        let m = load_models(
            file("models:\n  default: opus\n  available: [claude-opus-4-1, gpt-x]\n  aliases: { opus: claude-opus-4-1, big: gpt-y }\npricing: {}\n"),
            None,
        )
        .unwrap();
        assert_eq!(m.default, "claude-opus-4-1");
        assert_eq!(m.available, ["claude-opus-4-1", "gpt-x"]);
        assert_eq!(m.resolve("opus"), "claude-opus-4-1");
        assert_eq!(m.resolve("gpt-x"), "gpt-x");
        // `big` leads to a model that is not available, so it is not a permitted name.
        assert_eq!(m.permitted(), ["claude-opus-4-1", "gpt-x", "opus"]);
    }

    #[test]
    fn the_project_section_replaces_the_global_one() {
        let global = file("models:\n  available: [a, b]\n  default: b\n");
        let project = file("models:\n  available: [c]\n");
        let m = load_models(global, project).unwrap();
        assert_eq!(
            (m.available, m.default),
            (vec!["c".to_owned()], "c".to_owned())
        );
        // A project file without a models section leaves the global one in force.
        let m = load_models(global, file("server: { port: 5 }\n")).unwrap();
        assert_eq!((m.available.len(), m.default.as_str()), (2, "b"));
        // A missing default is the built-in one when it is available.
        let m = load_models(
            file("models: { available: [x, claude-sonnet-4-5] }\n"),
            None,
        )
        .unwrap();
        assert_eq!(m.default, "claude-sonnet-4-5");
    }

    #[test]
    fn malformed_files_are_clear_errors() {
        let e = error(file("models: [a, b\n"), None);
        assert!(
            e.starts_with("roscoe.yaml: not valid YAML") && e.contains("line"),
            "{e}"
        );
        let e = error(None, file("- a\n- b\n"));
        assert!(e.contains("must be a mapping of sections"), "{e}");
        let e = error(file("models:\n  avaliable: [a]\n"), None);
        assert_eq!(
            e,
            "roscoe.yaml: line 2, column 14: unknown key `models.avaliable`; the models section accepts default, available, aliases and providers"
        );
        let e = error(file("models:\n  available: [a, 3]\n"), None);
        assert!(
            e.contains("line 2, column 18") && e.contains("non-empty model id strings"),
            "{e}"
        );
        let e = error(file("models:\n  available: []\n"), None);
        assert!(e.contains("is empty"), "{e}");
        let e = error(file("models:\n  available: [a]\n  default: b\n"), None);
        assert!(
            e.contains("line 3") && e.contains("'b' is not in `models.available` (a)"),
            "{e}"
        );
        let e = error(file("models: { aliases: { s: [1] } }\n"), None);
        assert!(e.contains("must map each short name"), "{e}");
        // A broken global file is an error even when the project file overrides its models.
        let e = error(file("models: {\n"), file("models: { available: [a] }\n"));
        assert!(e.contains("not valid YAML"), "{e}");
    }
}
