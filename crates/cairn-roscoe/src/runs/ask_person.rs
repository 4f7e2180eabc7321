//! Human steps answered through the host's own form (MCP elicitation), for a run started with `ask_person`: when a
//! call leaves such a run paused at a human step and the calling client can ask its person, the step's question goes
//! to them, and their choice is recorded as their decision (`decidedBy: elicitation`, by the call's principal) — the
//! agent never answers it. A declined or dismissed form leaves the step pending as it would be without the option.

use std::future::Future;

use super::Runs;
use super::view::AdvanceResult;
use crate::actor::Actor;
use crate::engine::PendingStep;
use crate::error::Error;
use crate::scope::Scope;

/// The most human steps one call asks in a row (a loop of human steps still ends the call).
const MAX_QUESTIONS: usize = 20;

/// Asks the person behind the call: their choice (a valid transition) and comment, or `None` when nothing was
/// decided (and why).
pub trait AskPerson: Sync {
    /// Asks the human step `step`.
    fn ask(&self, step: &PendingStep) -> impl Future<Output = Result<(String, Option<String>), String>> + Send;
}

impl Runs {
    /// Answers the human steps `result` pauses at through `asker` (the calling client's, when it can ask) while its
    /// run asks its person, for as long as the person answers; the result after the last answer.
    pub async fn ask_person(
        &self,
        scope: &Scope,
        mut result: AdvanceResult,
        asker: Option<&impl AskPerson>,
        actor: &Actor,
    ) -> Result<AdvanceResult, Error> {
        let Some(asker) = asker else { return Ok(result) };
        let person = Actor { via: "elicitation", ..actor.clone() };
        for _ in 0..MAX_QUESTIONS {
            let Some(step) = result.pending_step.clone().filter(|s| result.ask_person && s.node_type == "human") else {
                break;
            };
            match asker.ask(&step).await {
                Ok((choice, comment)) => {
                    let run_id = result.run_id.clone();
                    result = self.resume(scope, &run_id, Some(step.node_id.clone()), choice, comment, &person).await?;
                }
                Err(why) => {
                    let (node, run) = (&step.node_id, &result.run_id);
                    tracing::info!("human step '{node}' of run {run} was not answered in the form: {why}");
                    break;
                }
            }
        }
        Ok(result)
    }
}
