//! `test_workflow`'s live steps: with a model provider configured, a fan-out step without a mock — and any AI step
//! inside a subworkflow's child run — is answered by the server's own model calls ([`calls`](super::calls)),
//! charged as reported (`meteredCostUsd` for API calls), through the same engine path a host's answer takes. Mocks,
//! where given, always win; a step no provider serves stops the test with `missing_mock` as before.

use cairn_store::runs::{self as rows, RunRow};

use super::convert::run_from_row;
use super::drive::EffectRunner;
use super::tree::Tree;
use super::Runs;
use crate::engine::{Event, ModelJob, PendingStep};
use crate::error::Error;

/// Whether `test_workflow` may answer `step` live: a fan-out step anywhere, an `ai_agent` or `ai_judge` step inside a
/// child run; never a human step.
fn live_kind(step: &PendingStep, inside_child: bool) -> bool {
    match step.node_type.as_str() {
        "consensus" | "round_robin" | "map" => true,
        "ai_agent" | "ai_judge" => inside_child,
        _ => false,
    }
}

impl Runs {
    /// Answers `step`, paused in test run `owner`, with live model calls, driving on with `effects`. `false` when it
    /// cannot be answered live (its kind, or no provider serves its models): the test then stops at it.
    pub(super) async fn answer_live(
        &self,
        owner: &RunRow,
        step: &PendingStep,
        effects: &impl EffectRunner,
    ) -> Result<bool, Error> {
        if !live_kind(step, owner.parent_node_run_id.is_some()) {
            return Ok(false);
        }
        let mut conn = self.inner.store.read().await?;
        let open = rows::open_node_run(&mut conn, &owner.id).await?;
        drop(conn);
        let run = run_from_row(owner, open.as_ref(), &self.inner.snapshots)?;
        let Some(open) = &run.open else { return Ok(false) };
        let job = ModelJob { node_run_id: open.id.clone(), step: step.clone() };
        match self.call_models(&run, None, &job).await {
            // No provider serves it: the test stops at it.
            None | Some(Event::HandedBack { .. }) => Ok(false),
            Some(event) => {
                self.drive_with(&owner.id, event, effects, &mut Tree::unread(&owner.root_run_id)).await?;
                Ok(true)
            }
        }
    }
}
