//! The state the engine works on: a run ([`Run`]), the node run it is sitting on ([`NodeRun`]), the step it hands to
//! the host ([`PendingStep`]) and the context templates read ([`Context`]).
//!
//! These are plain values; loading them from rows and writing them back is the run service's job.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::definition::{Node, Workflow};

/// Run status (§6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Executing synchronous nodes now.
    Running,
    /// Waiting for the host, a human or a child run.
    Paused,
    /// Finished successfully.
    Completed,
    /// Finished with an error.
    Failed,
    /// Stopped by `cancel_run` (or a test timeout).
    Cancelled,
}

impl RunStatus {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Paused => "paused",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// Parses the lower-case name.
    pub fn from_name(name: &str) -> Option<Self> {
        [
            RunStatus::Running,
            RunStatus::Paused,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }

    /// Completed, failed or cancelled: nothing changes it any more (except `retry_run`).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled
        )
    }
}

/// Node-run status (§6.2): the same five names as a run's.
pub type NodeStatus = RunStatus;

/// What templates and conditions read, persisted with the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// The latest completed-or-failed output of each node.
    #[serde(default)]
    pub nodes: Map<String, Value>,
    /// Visits per node.
    #[serde(default)]
    pub iterations: BTreeMap<String, u32>,
    /// Node executions so far (the safety cap counts these).
    #[serde(default)]
    pub steps: u32,
    /// Node runs created so far (their order numbers).
    #[serde(default)]
    pub seq: i64,
}

/// Model settings snapshotted at start: the default model, aliases and prices (USD per million tokens).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettings {
    /// Used when neither the node nor the workflow names a model.
    pub default: String,
    /// Short name → model id.
    #[serde(default)]
    pub aliases: BTreeMap<String, String>,
    /// Model id → `{ input, output }` price per million tokens.
    #[serde(default)]
    pub pricing: BTreeMap<String, Price>,
}

/// A model's price in USD per million tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the prompt cache (default: a tenth of `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Input tokens written to the prompt cache (default: 1.25 × `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

impl Price {
    /// The USD of a call's reported usage: `input_tokens` counts every input token, cache reads and writes
    /// included, each kind at its own price.
    pub fn usd(&self, input_tokens: i64, output_tokens: i64, cache_read: i64, cache_write: i64) -> f64 {
        let plain = (input_tokens - cache_read - cache_write).max(0) as f64;
        let read = self.cache_read.unwrap_or(self.input * 0.1);
        let write = self.cache_write.unwrap_or(self.input * 1.25);
        (plain * self.input + cache_read as f64 * read + cache_write as f64 * write + output_tokens as f64 * self.output)
            / 1e6
    }
}

impl ModelSettings {
    /// The model a node uses: its own `model`, else the workflow default, else the settings' default; aliases expanded.
    pub fn for_node(&self, workflow: &Workflow, node: &Node) -> String {
        let named = node
            .config_str("model")
            .or_else(|| workflow.defaults.get("model").and_then(Value::as_str))
            .unwrap_or(&self.default);
        self.resolve(named)
    }

    /// Expands an alias.
    pub fn resolve(&self, name: &str) -> String {
        self.aliases
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_owned())
    }
}

/// Accumulated cost (§12): USD split by who pays, tokens as reported (or estimated for the host's work), and how
/// many calls made it — so the billing mode says what happened, and a call whose price is unknown is counted, never
/// taken for free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Cost {
    /// Billed to an API key by the server.
    pub metered_usd: f64,
    /// List-price equivalent of subscription work: the host's (estimated) and the `claude` CLI's (as it reports).
    pub subscription_usd: f64,
    /// Input tokens (cache reads and writes included).
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Input tokens read from the provider's prompt cache.
    pub cache_read_tokens: i64,
    /// Input tokens written to the provider's prompt cache.
    pub cache_creation_tokens: i64,
    /// Model calls billed to an API key.
    pub metered_calls: i64,
    /// Steps answered by the host and `claude` CLI calls (subscription work).
    pub subscription_calls: i64,
    /// Calls whose USD cost is unknown (no price for their model): their tokens count, their cost is not in the USD
    /// figures.
    pub unpriced_calls: i64,
}

impl Cost {
    /// Adds `other`.
    pub fn add(&mut self, other: Cost) {
        self.metered_usd += other.metered_usd;
        self.subscription_usd += other.subscription_usd;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_creation_tokens += other.cache_creation_tokens;
        self.metered_calls += other.metered_calls;
        self.subscription_calls += other.subscription_calls;
        self.unpriced_calls += other.unpriced_calls;
    }

    /// The cost of one model call.
    pub fn of_call(call: &ModelCall) -> Cost {
        let usd = call.cost_usd.unwrap_or(0.0);
        let metered = call.billing == Billing::Metered;
        Cost {
            metered_usd: if metered { usd } else { 0.0 },
            subscription_usd: if metered { 0.0 } else { usd },
            input_tokens: call.input_tokens,
            output_tokens: call.output_tokens,
            cache_read_tokens: call.cache_read_tokens,
            cache_creation_tokens: call.cache_creation_tokens,
            metered_calls: i64::from(metered),
            subscription_calls: i64::from(!metered),
            unpriced_calls: i64::from(call.cost_usd.is_none()),
        }
    }

    /// Metered plus subscription USD.
    pub fn total_usd(&self) -> f64 {
        self.metered_usd + self.subscription_usd
    }

    /// Input plus output tokens.
    pub fn total_tokens(&self) -> i64 {
        self.input_tokens + self.output_tokens
    }

    /// `none`, `subscription`, `metered` or `mixed`.
    pub fn billing_mode(&self) -> &'static str {
        let subscription = self.subscription_calls > 0 || self.subscription_usd > 0.0;
        let metered = self.metered_calls > 0 || self.metered_usd > 0.0;
        match (subscription, metered) {
            (false, false) => "none",
            (true, false) => "subscription",
            (false, true) => "metered",
            (true, true) => "mixed",
        }
    }
}

/// Who runs a run's AI steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Execution {
    /// They are handed back to the host (the MCP client that started the run).
    #[default]
    Host,
    /// The server calls model providers for them.
    Server,
}

impl Execution {
    /// `host` or `server`.
    pub fn as_str(self) -> &'static str {
        match self {
            Execution::Host => "host",
            Execution::Server => "server",
        }
    }

    /// Parses `host` or `server`.
    pub fn from_name(name: &str) -> Option<Self> {
        [Execution::Host, Execution::Server].into_iter().find(|e| e.as_str() == name)
    }
}

/// How a model call is paid for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Billing {
    /// Billed to an API key.
    Metered,
    /// Paid by a subscription (the `claude` CLI's login).
    Subscription,
}

/// One model call the server made for a node run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCall {
    /// The model id.
    pub model: String,
    /// The provider that served it (`anthropic`, `claude-cli`, `openai`, or a name from `roscoe.yaml`).
    pub provider: String,
    /// Who pays.
    pub billing: Billing,
    /// Input tokens as reported (cache reads and writes included).
    pub input_tokens: i64,
    /// Output tokens as reported.
    pub output_tokens: i64,
    /// Cache reads as reported.
    #[serde(default)]
    pub cache_read_tokens: i64,
    /// Cache writes as reported.
    #[serde(default)]
    pub cache_creation_tokens: i64,
    /// USD: reported usage × `roscoe.yaml` price, or what the `claude` CLI reported; `None` when unknown.
    pub cost_usd: Option<f64>,
    /// From the first request to the answer, retries included.
    pub latency_ms: i64,
    /// Requests made (1 + retries).
    pub attempts: u32,
}

/// A run tree's budget: at most this much USD and these many tokens over all its model calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// USD limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
    /// Token limit (input + output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<i64>,
}

/// Why a server-executed run paused before its next model calls: they could take its tree past its budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetHold {
    /// `budget_exceeded`.
    pub code: String,
    /// What happened and how to continue.
    pub message: String,
    /// The tree's budget.
    pub limit: Budget,
    /// USD spent so far by the tree.
    pub spent_usd: f64,
    /// Tokens spent so far by the tree.
    pub spent_tokens: i64,
    /// The worst case of the calls about to be made; `None` when it cannot be known (then it never fits a USD
    /// budget).
    pub next_usd: Option<f64>,
    /// Their worst case in tokens; `None` when unknown.
    pub next_tokens: Option<i64>,
}

/// One run: its identity, its snapshotted workflow and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// Lower-case alphanumeric id.
    pub id: String,
    /// `""` for the global namespace.
    pub project_id: String,
    /// The project root (script working directory), `None` in the global namespace.
    pub project_root: Option<String>,
    /// The top of the run tree.
    pub root_run_id: String,
    /// The parent of a subworkflow child.
    pub parent_run_id: Option<String>,
    /// The parent's subworkflow node run.
    pub parent_node_run_id: Option<String>,
    /// 0 for a top-level run.
    pub depth: u32,
    /// The workflow as it was at start.
    pub workflow: Arc<Workflow>,
    /// Model settings as they were at start.
    pub models: Arc<ModelSettings>,
    /// `global` or `repo`.
    pub workflow_source: String,
    /// The workflow file at start.
    pub workflow_path: String,
    /// `ROSCOE_WORKFLOW_DIR`.
    pub workflow_dir: String,
    /// `mcp`, `web`, `cli` or `test`.
    pub source: String,
    /// `user` or `test`.
    pub kind: String,
    /// The principal that started it (a subworkflow run: its parent's starter).
    pub started_by: Option<String>,
    /// Whether it may run `script` nodes (its starter held `roscoe:exec`); the engine carries it, the runs layer
    /// acts on it.
    pub exec_allowed: bool,
    /// Who runs its AI steps (a child run: as its parent).
    pub execution: Execution,
    /// Status.
    pub status: RunStatus,
    /// The node the run is at (after a failure: the node that failed).
    pub current_node: Option<String>,
    /// The step handed to the host, while paused at a handback node.
    pub pending: Option<PendingStep>,
    /// The child run a subworkflow node waits for.
    pub awaiting_child: Option<String>,
    /// The run input (defaults applied).
    pub input: Value,
    /// Outputs, iterations, steps.
    pub context: Context,
    /// The run output, once completed.
    pub output: Option<Value>,
    /// Failure or cancel reason.
    pub error: Option<String>,
    /// Failure code (§19).
    pub error_code: Option<String>,
    /// Cost of this run's own node runs.
    pub cost: Cost,
    /// Epoch ms.
    pub started_at: i64,
    /// Epoch ms.
    pub completed_at: Option<i64>,
    /// 1 + retries.
    pub attempt: u32,
    /// The top-level node run the run is sitting on (running script, paused step, waiting subworkflow).
    pub open: Option<NodeRun>,
}

/// One visit of a node (or one child of a fan-out node run: an agent, a matchup, a branch).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRun {
    /// Lower-case alphanumeric id.
    pub id: String,
    /// The fan-out node run this is a child of.
    pub parent: Option<String>,
    /// Order within the run.
    pub seq: i64,
    /// The workflow node.
    pub node_id: String,
    /// The executor type or child kind.
    pub node_type: String,
    /// Status.
    pub status: NodeStatus,
    /// 1-based visit number.
    pub iteration: u32,
    /// Submissions or executions so far.
    pub attempts: u32,
    /// Current fan-out phase.
    pub phase: Option<String>,
    /// Executor bookkeeping.
    pub phase_state: Value,
    /// Model used.
    pub model: Option<String>,
    /// What the node was given (rendered prompt, command, …).
    pub input: Option<Value>,
    /// What it produced.
    pub output: Option<Value>,
    /// Why it failed.
    pub error: Option<String>,
    /// The event it emitted.
    pub event: Option<String>,
    /// Non-fatal problems (e.g. a template field without a value).
    pub warnings: Vec<String>,
    /// The child run of a subworkflow node.
    pub child_run_id: Option<String>,
    /// Epoch ms.
    pub started_at: i64,
    /// Epoch ms.
    pub completed_at: Option<i64>,
    /// Cost of this node run.
    pub cost: Cost,
    /// The model calls the server made for it.
    pub calls: Vec<ModelCall>,
}

/// One transition of a pending step's node, for the host to show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransitionInfo {
    /// The event.
    pub event: String,
    /// Its target.
    pub target: String,
    /// The target node's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_label: Option<String>,
    /// The text a human node's `labels` gives this choice (`Ship it` for `ship`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub label: Option<String>,
}

/// One subagent of a fan-out phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSpec {
    /// The model to run.
    pub model: String,
    /// Its full prompt.
    pub prompt: String,
    /// Its original position (consensus retry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
}

/// One round-robin pairing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Matchup {
    /// `m<k>` or `r<k>`.
    pub id: String,
    /// Candidate shown as A.
    pub a: String,
    /// Candidate shown as B.
    pub b: String,
    /// The fully rendered judge prompt.
    pub prompt: String,
    /// For a reversed re-judge: the matchup it reverses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reversed_of: Option<String>,
}

/// The step a paused run hands to the host (§9.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingStep {
    /// The run that owns the step (a child's id when nested).
    pub run_id: String,
    /// The node.
    pub node_id: String,
    /// Its type.
    pub node_type: String,
    /// The full prompt or host instructions.
    pub prompt: String,
    /// The answers or events that make sense.
    pub valid_transitions: Vec<String>,
    /// The node's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The node's transitions.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub transitions: Vec<TransitionInfo>,
    /// Fan-out: how many subagents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_count: Option<usize>,
    /// The model to use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Fan-out: one entry per subagent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<AgentSpec>>,
    /// Consensus phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consensus_phase: Option<String>,
    /// Round-robin criterion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criterion: Option<String>,
    /// Round-robin matchups still outstanding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matchups: Option<Vec<Matchup>>,
    /// Round-robin phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_robin_phase: Option<String>,
    /// Map phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_phase: Option<String>,
    /// Visit number of the node.
    pub iteration: u32,
    /// Submissions so far for this phase.
    pub attempt: u32,
    /// The owning run's workflow.
    pub workflow_id: String,
    /// Set while a server-executed run waits for a larger budget before making this step's calls.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub budget_exceeded: Option<BudgetHold>,
    /// Set when the server was to run this AI step but no provider serves its model: why, while it waits for a host.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub handed_back: Option<String>,
    /// A human step whose node sets `allowComment: false`: `false` (a comment sent with the choice is dropped).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub allow_comment: Option<bool>,
}
