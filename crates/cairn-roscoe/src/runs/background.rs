//! The work every `cairn serve` and `roscoe mcp` of a database repeats in the background for as long as it runs:
//! firing timers (`timers.rs`), sending notifications (`notify/deliver.rs`), starting scheduled runs
//! (`scheduler.rs`). A round that fails is logged and the next one comes on time; rounds never overlap.

use std::future::Future;
use std::time::Duration;

use super::Runs;
use crate::error::Error;

impl Runs {
    /// Runs `round` on a clone of these runs every `period` (the first at once) in a task of its own; `what` names
    /// the work in the warning a failed round logs.
    pub(super) fn every<F, Fut>(&self, period: Duration, what: &'static str, round: F) -> tokio::task::JoinHandle<()>
    where
        F: Fn(Runs) -> Fut + Send + 'static,
        Fut: Future<Output = Result<usize, Error>> + Send,
    {
        let runs = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(error) = round(runs.clone()).await {
                    tracing::warn!("could not {what}: {error}");
                }
            }
        })
    }
}
