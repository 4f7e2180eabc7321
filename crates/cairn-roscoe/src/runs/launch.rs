//! Starting a run in two halves, for a caller that watches the run while it is driven (the roscoe command line):
//! [`Runs::create_run`] makes the run and answers its id at once, before anything executes, so the caller can show
//! its progress and cancel it on Ctrl-C; [`Runs::drive_created`] then drives it to its first pause or its end, as
//! `start_workflow` does in one call ([`Runs::create_user_run`] is the half both share).

use cairn_store::runs::RunRow;
use serde_json::{Value, json};

use super::prepare::{Prepared, Starter};
use super::view::AdvanceResult;
use super::{Runs, run_subject};
use crate::actor::Actor;
use crate::definition::NodeType;
use crate::engine::Event;
use crate::error::Error;
use crate::scope::Scope;
use crate::source::Source;

impl Runs {
    /// Creates a top-level run of workflow `id` in `scope` with `input`, started by `actor` (recorded), and returns
    /// its id; nothing runs until [`Runs::drive_created`]. Until then the run is `running`, held by this process: if
    /// the process ends first, the next look at the run fails it (`runner_lost`).
    pub async fn create_run(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
        input: Option<Value>,
        actor: &Actor,
    ) -> Result<String, Error> {
        let (_, row) = self.create_user_run(scope, id, source, input, actor, super::view::host(None)).await?;
        Ok(row.id)
    }

    /// Drives a run made by [`Runs::create_run`] from its start to its first pause or its end: the AdvanceResult.
    pub async fn drive_created(&self, scope: &Scope, run_id: &str) -> Result<AdvanceResult, Error> {
        let mut tree = self.load_tree(scope, run_id).await?;
        self.drive(run_id, Event::Start, &mut tree).await?;
        self.result(&tree, scope).await
    }

    /// Resolves and checks workflow `id`, then inserts its new top-level run (for the host `host`) and records that
    /// `actor` started it: the prepared workflow and the run's row. A workflow with `script` nodes needs an actor
    /// that may run scripts.
    pub(super) async fn create_user_run(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
        input: Option<Value>,
        actor: &Actor,
        host: Value,
    ) -> Result<(Prepared, RunRow), Error> {
        let prepared = self.prepare(scope, id, source)?;
        if !actor.may_exec && prepared.workflow.nodes.iter().any(|n| n.kind == NodeType::Script) {
            return Err(Error::InsufficientScope(actor.exec_refusal(&format!("workflow '{id}'"))));
        }
        let starter = Starter::of(actor);
        let mut row = self.new_run_row(scope, &prepared, input.as_ref(), &starter, "user", None)?;
        row.host = Some(host.to_string());
        self.insert(&row).await?;
        self.record(actor, "start", &run_subject(&row.id), json!({ "workflowId": prepared.workflow.id })).await?;
        Ok((prepared, row))
    }
}

