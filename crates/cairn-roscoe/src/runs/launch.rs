//! Starting a run in two halves, for a caller that watches the run while it is driven (the roscoe command line):
//! [`Runs::create_run`] makes the run and answers its id at once, before anything executes, so the caller can show
//! its progress and cancel it on Ctrl-C; [`Runs::drive_created`] then drives it to its first pause or its end, as
//! `start_workflow` does in one call ([`Runs::create_started`] is the half both share).

use super::effects::Executor;
use super::view::AdvanceResult;
use super::{Runs, StartOptions, StartRequest};
use crate::engine::Event;
use crate::error::Error;
use crate::scope::Scope;

impl Runs {
    /// Creates the top-level run `start` asks for with `options` (who runs its AI steps, its budget; `wait` is
    /// ignored: [`Runs::drive_created`] always drives in the call), records who started it, and returns its id;
    /// nothing runs until [`Runs::drive_created`]. Until then the run is `running`, held by this process: if the
    /// process ends first, the next look at the run fails it (`runner_lost`).
    pub async fn create_run(&self, start: StartRequest<'_>, options: &StartOptions) -> Result<String, Error> {
        Ok(self.create_started(start, options).await?.row.id)
    }

    /// Drives a run made by [`Runs::create_run`] from its start, in this call, to its first pause (for a person, a
    /// host or its budget) or its end: the AdvanceResult. A server-executed run's model calls are made here.
    pub async fn drive_created(&self, scope: &Scope, run_id: &str) -> Result<AdvanceResult, Error> {
        let mut tree = self.load_tree(scope, run_id).await?;
        self.drive_with(run_id, Event::Start, &Executor { background: false }, &mut tree).await?;
        self.result(&tree, scope).await
    }
}
