//! Starting a run, and who runs its AI steps. The start's own `execution` wins, then the workflow's `execution`,
//! then `roscoe.yaml`'s `hosts.<client>.execution` for the MCP client that starts it; otherwise a run an MCP host
//! starts hands its AI steps back (`host`), and one started from the REST API, the web UI or the command line has
//! them run by the server (`server`). The run's budget is the start's, else the workflow's, else `roscoe.yaml`'s
//! `budget`. A child run inherits both from its tree. `hosts.<client>`'s `subagents` and `billing` also override
//! what is guessed of the client from its name (for `hostHint`).
//!
//! A server-executed run started with `wait` is driven in the call until it completes, fails, or pauses (for a
//! person, a host, or its budget); without it, the call returns once the first model calls are under way and the run
//! goes on in the background.

use serde_json::json;

use cairn_store::runs::RunRow;

use super::prepare::{Prepared, Starter};
use super::settings::{Settings, read_budget};
use super::effects::Executor;
use super::tree::Tree;
use super::{Runs, Started, WorkflowInfo, run_subject, trigger_exec, view};
use crate::actor::Actor;
use crate::definition::NodeType;
use crate::engine::{Budget, Event, Execution};
use crate::error::Error;
use crate::scope::Scope;
use crate::source::Source;
use serde_json::Value;

/// What a start asks for: workflow `id` in `scope` (from `source`; default: repo first) with `input`, started by
/// `actor` (through `actor.via`: `mcp`, `web`, `cli`).
#[derive(Clone, Copy, Debug)]
pub struct StartRequest<'a> {
    /// Where the workflow is looked up and the run belongs.
    pub scope: &'a Scope,
    /// The workflow id.
    pub id: &'a str,
    /// Its source.
    pub source: Option<Source>,
    /// The run input (the workflow's defaults fill what it leaves out).
    pub input: Option<&'a Value>,
    /// Who starts it.
    pub actor: &'a Actor,
}

/// How a run is started, beyond its workflow and input.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StartOptions {
    /// The MCP client that starts it (for `hostHint` and `roscoe.yaml`'s `hosts`).
    pub client: Option<String>,
    /// Who runs its AI steps (default: see the module's rules).
    pub execution: Option<Execution>,
    /// Its budget (default: the workflow's, else `roscoe.yaml`'s).
    pub budget: Option<Budget>,
    /// Drive a server-executed run in this call until it stops, instead of in the background.
    pub wait: bool,
    /// Its human steps go to the person through the calling client's form (elicitation), when it has one.
    pub ask_person: bool,
    /// For a run a trigger starts (a schedule, a webhook) of a repo workflow: the SHA-256 of the workflow text an
    /// exec holder approved. The run may run scripts only when the file it reads is that text.
    pub approved_text: Option<String>,
}

/// A run just made by [`Runs::create_started`], before anything of it runs.
pub(super) struct Created {
    /// Its resolved workflow.
    pub prepared: Prepared,
    /// Its row, as inserted.
    pub row: RunRow,
    /// What is known of the host that started it.
    pub host: Value,
    /// Who runs its AI steps.
    pub execution: Execution,
}

impl Runs {
    /// Starts the run `start` asks for with `options` (see [`StartOptions`]) and drives it to its first pause, its
    /// end, or — for a server-executed run not started with `wait` — its first model calls. A workflow with `script`
    /// nodes needs an actor that may run scripts.
    pub async fn start_workflow_with(
        &self,
        start: StartRequest<'_>,
        options: StartOptions,
    ) -> Result<Started, Error> {
        let Created { prepared, row, host, execution } = self.create_started(start, &options).await?;
        let scope = start.scope;
        let run_id = row.id.clone();
        let mut tree = Tree::new(&run_id, vec![row]);
        let effects = Executor { background: !options.wait };
        self.drive_with(&run_id, Event::Start, &effects, &mut tree).await?;
        let mut result = self.result(&tree, scope).await?;
        if execution == Execution::Host && prepared.workflow.nodes.iter().any(|n| n.kind.is_fanout()) {
            result.host_hint = result.host_hint.take().or_else(|| view::host_hint(&host));
        }
        let name = prepared.workflow.id.clone();
        let description = prepared.workflow.description.clone();
        let follow = match &result.url_note {
            None => format!("Follow along live: {}", result.url),
            Some(_) => format!("Its page, once `cairn serve` serves it: {}", result.url),
        };
        let narration =
            format!("Running **{name}**{}. {follow}", description.as_deref().map(|d| format!(" — {d}")).unwrap_or_default());
        Ok(Started { workflow: WorkflowInfo { id: name.clone(), name, description }, narration, result })
    }

    /// The first half of every start: resolves and checks the workflow `start` names, decides who runs its AI steps
    /// and its budget, inserts its new top-level run and records that its actor started it. Nothing of the run
    /// executes yet.
    pub(super) async fn create_started(
        &self,
        start: StartRequest<'_>,
        options: &StartOptions,
    ) -> Result<Created, Error> {
        let StartRequest { scope, id, source, input, actor } = start;
        let read = Settings::read(self.home(), scope.root());
        let prepared = self.prepare_read(scope, id, source, &read)?;
        let approved = options.approved_text.as_ref().is_some_and(|sha| *sha == prepared.text_sha256);
        let actor = &Actor { may_exec: actor.may_exec || approved, ..actor.clone() };
        if !actor.may_exec && prepared.workflow.nodes.iter().any(|n| n.kind == NodeType::Script) {
            if matches!(actor.via, "schedule" | "webhook") {
                return Err(trigger_exec::unapproved(id, actor));
            }
            return Err(Error::InsufficientScope(actor.exec_refusal(&format!("workflow '{id}'"))));
        }
        let settings = read.map_err(|e| Error::refused("invalid_config", e))?;
        let client = options.client.as_deref();
        let configured = client.and_then(|c| settings.host(c)).and_then(|h| h.execution);
        let named = prepared.workflow.execution.as_deref().and_then(Execution::from_name);
        let fallback = if actor.via == "mcp" { Execution::Host } else { Execution::Server };
        let execution = options.execution.or(named).or(configured).unwrap_or(fallback);
        let budget = match (options.budget, &prepared.workflow.budget) {
            (Some(budget), _) => Some(budget),
            (None, Some(value)) => Some(read_budget(value).map_err(Error::InvalidInput)?),
            (None, None) => settings.budget,
        };
        let starter = Starter::of(actor);
        let mut row = self.new_run_row(scope, &prepared, input, &starter, "user", None)?;
        let mut host = view::host(client);
        if let Some(set) = client.and_then(|c| settings.host(c)) {
            if let Some(subagents) = set.subagents {
                host["subagents"] = subagents.into();
            }
            if let Some(billing) = &set.billing {
                host["billing"] = billing.as_str().into();
            }
        }
        if options.ask_person {
            host["askPerson"] = true.into();
        }
        row.host = Some(host.to_string());
        row.execution = execution.as_str().to_owned();
        row.budget = budget.map(|b| serde_json::to_string(&b).expect("a budget serializes"));
        self.insert(&row).await?;
        let detail = json!({ "workflowId": prepared.workflow.id, "execution": execution.as_str(), "budget": budget });
        self.record(actor, "start", &run_subject(&row.id), detail).await?;
        Ok(Created { prepared, row, host, execution })
    }
}
