//! The workflow model (§4.1–4.3, §7): a workflow, its ordered nodes, their types, config keys and transitions.
//!
//! The model is what a schema-valid document means; it is built by `parse` and checked by `validate`. Node
//! configs stay JSON objects (`config`), because each executor reads its own keys; [`NodeType::config_keys`]
//! lists those keys for the schema tool and the validator.

use serde::Serialize;
use serde_json::{Map, Value};

use super::trigger::Trigger;

/// Names that cannot be node ids: they are template roots or reserved for later use.
pub const RESERVED_NODE_IDS: &[&str] = &["input", "run", "item", "index", "results", "env"];

/// Event names with a fixed meaning; they cannot be judge or consensus choices.
pub const RESERVED_EVENTS: &[&str] = &["failure", "max_iterations", "no_consensus", "timeout"];

/// A workflow: a state machine of nodes.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    /// The id (file stem), equal to `name`.
    pub id: String,
    /// Optional description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Schema version; only 1 exists.
    pub version: u32,
    /// Id of the first node.
    pub initial: String,
    /// Declared run inputs, in file order; `None` when there is no `inputs` block (any `input.x` is allowed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<Input>>,
    /// Run outputs: name → template (or any JSON value whose strings are templates), in file order.
    pub outputs: Map<String, Value>,
    /// Defaults applied to every node (e.g. `model`).
    pub defaults: Map<String, Value>,
    /// Who runs its AI steps when a start does not say: `host` or `server` (checked by the schema).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<String>,
    /// Its runs' budget when a start does not give one: `{ usd?, tokens? }` (checked by the schema).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Value>,
    /// The nodes, in file order.
    pub nodes: Vec<Node>,
    /// What starts runs besides a caller (schedules, intervals, webhooks), in file order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<Trigger>,
}

impl Workflow {
    /// The node with this id.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// Position of the node with this id in [`Workflow::nodes`].
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }
}

/// A declared run input.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Input {
    /// Its name (`input.<name>` in templates).
    pub name: String,
    /// Its JSON type.
    #[serde(rename = "type")]
    pub ty: InputType,
    /// Whether a run must supply it.
    pub required: bool,
    /// Value used when not supplied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Human description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Allowed values, when restricted.
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<Value>>,
}

/// The type of a run input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    /// A string.
    String,
    /// Any number.
    Number,
    /// A whole number.
    Integer,
    /// `true` / `false`.
    Boolean,
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
}

impl InputType {
    /// Parses the schema's spelling.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "string" => InputType::String,
            "number" => InputType::Number,
            "integer" => InputType::Integer,
            "boolean" => InputType::Boolean,
            "object" => InputType::Object,
            "array" => InputType::Array,
            _ => return None,
        })
    }
}

/// One node of the state machine.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// Its id, unique in the workflow.
    pub id: String,
    /// Its executor.
    #[serde(rename = "type")]
    pub kind: NodeType,
    /// Short label shown to hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Longer description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Executor-specific configuration (keys: [`NodeType::config_keys`]).
    pub config: Map<String, Value>,
    /// Event → target, in file order. Empty for a sink node.
    pub transitions: Vec<Transition>,
    /// Maximum visits per run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// Node timeout in milliseconds (meaning depends on the type).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl Node {
    /// A node with no transitions is terminal: its completion completes the run.
    pub fn is_sink(&self) -> bool {
        self.transitions.is_empty()
    }

    /// The target of `event`, if routed.
    pub fn target(&self, event: &str) -> Option<&Target> {
        self.transitions
            .iter()
            .find(|t| t.event == event)
            .map(|t| &t.target)
    }

    /// How long the run waits before this node starts (`config.delayMs`), when it does.
    pub fn delay_ms(&self) -> Option<u64> {
        self.config.get("delayMs").and_then(Value::as_u64).filter(|ms| *ms > 0)
    }

    /// A config value.
    pub fn config_str(&self, key: &str) -> Option<&str> {
        self.config.get(key).and_then(Value::as_str)
    }

    /// Judge and gate verdicts: `config.choices`, else the transition events minus the reserved ones.
    pub fn choices(&self) -> Vec<String> {
        match self.config.get("choices").and_then(Value::as_array) {
            Some(list) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            None => self
                .transitions
                .iter()
                .map(|t| t.event.clone())
                .filter(|e| !RESERVED_EVENTS.contains(&e.as_str()))
                .collect(),
        }
    }
}

/// One `event: target` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Transition {
    /// The event name.
    pub event: String,
    /// Where it leads.
    pub target: Target,
}

/// Where a transition leads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Target {
    /// Another node, by id (not checked to exist until integrity).
    Node(String),
    /// `$end`: the run completes.
    #[serde(serialize_with = "end")]
    End,
    /// `$fail`: the run fails with `routed_to_fail`.
    #[serde(serialize_with = "fail")]
    Fail,
}

fn end<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("$end")
}

fn fail<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("$fail")
}

impl Target {
    /// Reads a target as written in YAML.
    pub fn from_text(text: &str) -> Self {
        match text {
            "$end" => Target::End,
            "$fail" => Target::Fail,
            other => Target::Node(other.to_owned()),
        }
    }

    /// The text as written in YAML.
    pub fn as_str(&self) -> &str {
        match self {
            Target::Node(id) => id,
            Target::End => "$end",
            Target::Fail => "$fail",
        }
    }
}

/// The nine executor types (§7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeType {
    /// Runs a shell command or a bundled script; synchronous.
    Script,
    /// Evaluates a CEL expression or cases; synchronous.
    Condition,
    /// Hands a task to the host's AI.
    AiAgent,
    /// Hands a verdict question to the host's AI.
    AiJudge,
    /// Several agents vote (fan-out).
    Consensus,
    /// Pairwise tournament over candidates (fan-out).
    RoundRobin,
    /// One branch per item, optional reduce (fan-out).
    Map,
    /// Waits for a human decision.
    Human,
    /// Runs another workflow as a child run (fan-out classification).
    Subworkflow,
}

/// One config key of an executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ConfigKey {
    /// Key name.
    pub name: &'static str,
    /// Type, as the schema tool shows it.
    #[serde(rename = "type")]
    pub ty: &'static str,
    /// Whether the schema requires it.
    pub required: bool,
    /// What it means.
    pub description: &'static str,
}

const fn key(
    name: &'static str,
    ty: &'static str,
    required: bool,
    description: &'static str,
) -> ConfigKey {
    ConfigKey {
        name,
        ty,
        required,
        description,
    }
}

/// The config key every node type has: a durable wait before the node starts.
const DELAY_KEY: ConfigKey = key(
    "delayMs",
    "integer",
    false,
    "Wait this many milliseconds before the node starts (a durable timer: the run is paused meanwhile).",
);
const SCRIPT_KEYS: &[ConfigKey] = &[
    key(
        "command",
        "string",
        false,
        "Shell command. Each template value becomes one shell-quoted word: write holes outside quotes, or pass values in `env` and use \"$NAME\". One of command/script.",
    ),
    key(
        "script",
        "string",
        false,
        "Path relative to $ROSCOE_WORKFLOW_DIR. One of command/script.",
    ),
    key(
        "interpreter",
        "string",
        false,
        "Interpreter for `script`, e.g. python3.",
    ),
    key(
        "args",
        "string[]",
        false,
        "Extra arguments for `script` (templated, no shell).",
    ),
    key(
        "env",
        "map string→string",
        false,
        "Extra environment (values templated raw).",
    ),
    key("cwd", "string", false, "Working directory (templated)."),
    key(
        "timeoutMs",
        "integer",
        false,
        "Kill after this many milliseconds (default 300000).",
    ),
    key(
        "successExitCodes",
        "integer[]",
        false,
        "Exit codes that mean success (default [0]).",
    ),
    key(
        "retry",
        "{maxAttempts, backoffMs, backoffRate}",
        false,
        "Retry on failure.",
    ),
    DELAY_KEY,
];
const CONDITION_KEYS: &[ConfigKey] = &[
    key(
        "expression",
        "string (CEL)",
        false,
        "Boolean expression; events true / false.",
    ),
    key(
        "cases",
        "[{when, event}]",
        false,
        "First matching case's event wins.",
    ),
    key(
        "default",
        "string",
        false,
        "Event when no case matches (with cases).",
    ),
    DELAY_KEY,
];
const AI_AGENT_KEYS: &[ConfigKey] = &[
    key("prompt", "string", true, "Task prompt (templated)."),
    key("model", "string", false, "Model hint for the host."),
    key(
        "system",
        "string",
        false,
        "System / persona text (templated).",
    ),
    DELAY_KEY,
];
const AI_JUDGE_KEYS: &[ConfigKey] = &[
    key("prompt", "string", true, "Question to judge (templated)."),
    key(
        "choices",
        "string[]",
        false,
        "Verdicts; default: transition keys minus reserved events.",
    ),
    key("model", "string", false, "Model hint."),
    key(
        "maxAttempts",
        "integer",
        false,
        "Invalid responses tolerated before failing (default 3).",
    ),
    DELAY_KEY,
];
const CONSENSUS_KEYS: &[ConfigKey] = &[
    key(
        "mode",
        "gate | answer | most_consistent",
        false,
        "Default gate.",
    ),
    key(
        "prompt",
        "string",
        true,
        "Prompt for every agent (templated).",
    ),
    key("model", "string", false, "Model when `agents` is absent."),
    key(
        "agentCount",
        "integer 2..10",
        false,
        "Default 3; ignored when `agents` is given.",
    ),
    key(
        "agents",
        "[{model?, prompt?, persona?}]",
        false,
        "Per-agent settings; its length is the agent count.",
    ),
    key(
        "quorum",
        "integer ≥1 | number in (0,1] | \"majority\"",
        false,
        "Default majority.",
    ),
    key(
        "choices",
        "string[]",
        false,
        "Gate verdicts; default: transition keys minus reserved events.",
    ),
    key(
        "maxRetries",
        "integer 0..3",
        false,
        "Retry rounds for invalid agents (default 1).",
    ),
    key(
        "aggregate",
        "{model?, prompt?}",
        false,
        "most_consistent aggregator overrides.",
    ),
    DELAY_KEY,
];
const ROUND_ROBIN_KEYS: &[ConfigKey] = &[
    key(
        "candidates",
        "string[] | template",
        false,
        "Literal list (2–8) or a template rendering to one.",
    ),
    key(
        "candidatesPrompt",
        "string",
        false,
        "Ask one agent to produce the candidates instead.",
    ),
    key("criterion", "string", true, "What to judge on (templated)."),
    key("model", "string", false, "Judge model."),
    key(
        "mode",
        "single | contested",
        false,
        "contested re-judges with A/B reversed.",
    ),
    key(
        "contestThreshold",
        "integer 0..101",
        false,
        "Re-judge matchups whose margin is below this (101 = all).",
    ),
    key("maxCandidates", "integer 2..16", false, "Default 8."),
    DELAY_KEY,
];
const MAP_KEYS: &[ConfigKey] = &[
    key(
        "items",
        "array | template",
        false,
        "Branch items; other text triggers the extract phase.",
    ),
    key(
        "extract",
        "{prompt?, model?}",
        false,
        "Force or override the extract step.",
    ),
    key(
        "prompt",
        "string",
        true,
        "Per-branch prompt; may use {{ item }} and {{ index }}.",
    ),
    key("model", "string", false, "Branch model."),
    key(
        "reduce",
        "{prompt, model?}",
        false,
        "Optional synthesis; may use {{ results }}.",
    ),
    key("maxItems", "integer 1..1000", false, "Default 20."),
    key(
        "minSuccess",
        "integer 0..1000",
        false,
        "Branches that must succeed (default 1).",
    ),
    DELAY_KEY,
];
const HUMAN_KEYS: &[ConfigKey] = &[
    key(
        "prompt",
        "string",
        true,
        "What the human decides (templated).",
    ),
    key("labels", "map transition→text", false, "Option texts."),
    key("allowComment", "boolean", false, "Default true."),
    DELAY_KEY,
];
const SUBWORKFLOW_KEYS: &[ConfigKey] = &[
    key("workflow", "string", true, "Id of the child workflow."),
    key("source", "global | repo", false, "Default: repo first."),
    key("inputs", "map input→template", false, "Child inputs."),
    DELAY_KEY,
];

impl NodeType {
    /// All nine, in the spec's order.
    pub const ALL: [NodeType; 9] = [
        NodeType::Script,
        NodeType::Condition,
        NodeType::AiAgent,
        NodeType::AiJudge,
        NodeType::Consensus,
        NodeType::RoundRobin,
        NodeType::Map,
        NodeType::Human,
        NodeType::Subworkflow,
    ];

    /// The name used in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeType::Script => "script",
            NodeType::Condition => "condition",
            NodeType::AiAgent => "ai_agent",
            NodeType::AiJudge => "ai_judge",
            NodeType::Consensus => "consensus",
            NodeType::RoundRobin => "round_robin",
            NodeType::Map => "map",
            NodeType::Human => "human",
            NodeType::Subworkflow => "subworkflow",
        }
    }

    /// Parses the YAML name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// The one classifier of fan-out types (seed: never re-list them by hand).
    pub fn is_fanout(self) -> bool {
        matches!(
            self,
            NodeType::Consensus | NodeType::RoundRobin | NodeType::Map | NodeType::Subworkflow
        )
    }

    /// Whether the node pauses and hands a step to the host (subworkflow pauses through its child instead).
    pub fn hands_back(self) -> bool {
        !matches!(
            self,
            NodeType::Script | NodeType::Condition | NodeType::Subworkflow
        )
    }

    /// The config keys this type accepts.
    pub fn config_keys(self) -> &'static [ConfigKey] {
        match self {
            NodeType::Script => SCRIPT_KEYS,
            NodeType::Condition => CONDITION_KEYS,
            NodeType::AiAgent => AI_AGENT_KEYS,
            NodeType::AiJudge => AI_JUDGE_KEYS,
            NodeType::Consensus => CONSENSUS_KEYS,
            NodeType::RoundRobin => ROUND_ROBIN_KEYS,
            NodeType::Map => MAP_KEYS,
            NodeType::Human => HUMAN_KEYS,
            NodeType::Subworkflow => SUBWORKFLOW_KEYS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_type_names_round_trip() {
        for t in NodeType::ALL {
            assert_eq!(NodeType::from_name(t.as_str()), Some(t));
            assert!(t.config_keys().iter().all(|k| !k.name.is_empty()));
        }
        assert_eq!(NodeType::from_name("agent"), None);
    }

    #[test]
    fn fanout_classifier() {
        let fanout: Vec<_> = NodeType::ALL
            .into_iter()
            .filter(|t| t.is_fanout())
            .map(NodeType::as_str)
            .collect();
        assert_eq!(fanout, ["consensus", "round_robin", "map", "subworkflow"]);
    }

    #[test]
    fn targets() {
        assert_eq!(Target::from_text("$end"), Target::End);
        assert_eq!(Target::from_text("$fail").as_str(), "$fail");
        assert_eq!(Target::from_text("fix"), Target::Node("fix".into()));
        assert_eq!(serde_json::to_value(Target::End).unwrap(), "$end");
    }
}
