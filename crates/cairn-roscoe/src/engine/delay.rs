//! A node's `delayMs`: the run waits before the node starts. Entering such a node opens its node run in the `delay`
//! phase and pauses the run with no pending step ([`Engine::start_delay`]); the timer the server keeps for it
//! (`runs/timers.rs`) fires `TimerFired` when the time is up, and the node then starts as it would have without the
//! delay, from that moment ([`Engine::end_delay`]). Cancelling a waiting run cancels the wait.

use serde_json::{Value, json};

use super::{Engine, Run, RunStatus};

/// The phase of a node run waiting out its node's `delayMs`.
pub const DELAY_PHASE: &str = "delay";

impl Run {
    /// When the wait before the run's open node ends (epoch ms), while the run waits.
    pub fn delayed_until(&self) -> Option<i64> {
        let open = self.open.as_ref().filter(|_| self.status == RunStatus::Paused)?;
        if open.phase.as_deref() != Some(DELAY_PHASE) {
            return None;
        }
        open.phase_state["until"].as_i64()
    }
}

impl Engine<'_> {
    /// Pauses the run `ms` milliseconds before its open node starts.
    pub(super) fn start_delay(&mut self, ms: u64) {
        let until = self.env.now().saturating_add(i64::try_from(ms).unwrap_or(i64::MAX));
        let open = self.run.open.as_mut().expect("a delay belongs to an open node run");
        open.status = RunStatus::Paused;
        open.phase = Some(DELAY_PHASE.to_owned());
        open.phase_state = json!({ "until": until });
        self.run.status = RunStatus::Paused;
    }

    /// The wait is over: the open node starts now.
    pub(super) fn end_delay(&mut self) {
        let now = self.env.now();
        let open = self.run.open.as_mut().expect("a delay belongs to an open node run");
        open.status = RunStatus::Running;
        open.phase = None;
        open.phase_state = Value::Null;
        open.started_at = now;
        let node_id = open.node_id.clone();
        self.run.status = RunStatus::Running;
        let workflow = self.run.workflow.clone();
        let node = workflow.node(&node_id).expect("an open node run names a node of the snapshot");
        let step = self.enter(node);
        self.settle(step);
    }
}
