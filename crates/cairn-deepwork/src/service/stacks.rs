//! A session's stacks — the main stack and, for a sub-agent, its own — loaded under the session's lock and written
//! back by the operations that move them.

use crate::session::StackFile;
use crate::session_store::SessionStore;

use super::{Error, Result, StackEntry};

/// A session's stacks, loaded under its lock.
pub(super) struct Stacks {
    store: SessionStore,
    session_id: String,
    agent_id: Option<String>,
    /// The session's main stack.
    pub(super) main: StackFile,
    /// The sub-agent's stack, when the call names one.
    pub(super) agent: Option<StackFile>,
}

impl Stacks {
    /// The stacks of `session_id` (and of `agent_id`, when given) as stored.
    pub(super) fn load(store: SessionStore, session_id: &str, agent_id: Option<&str>) -> Result<Self> {
        let main = store.read(session_id, None).map_err(Error::Failed)?;
        let agent = match agent_id {
            Some(agent) => Some(store.read(session_id, Some(agent)).map_err(Error::Failed)?),
            None => None,
        };
        Ok(Stacks { store, session_id: session_id.to_owned(), agent_id: agent_id.map(str::to_owned), main, agent })
    }

    /// The stack this call operates on.
    pub(super) fn own(&mut self) -> &mut StackFile {
        self.agent.as_mut().unwrap_or(&mut self.main)
    }

    /// Writes the stack this call operates on.
    pub(super) fn save_own(&self) -> Result<()> {
        let file = self.agent.as_ref().unwrap_or(&self.main);
        self.store.write(&self.session_id, self.agent_id.as_deref(), file)?;
        Ok(())
    }

    /// Writes the main stack.
    pub(super) fn save_main(&self) -> Result<()> {
        self.store.write(&self.session_id, None, &self.main)?;
        Ok(())
    }

    /// The stack as results show it: the main stack, then this agent's.
    pub(super) fn entries(&self) -> Vec<StackEntry> {
        let agent = self.agent.iter().flat_map(|a| a.workflow_stack.iter());
        self.main
            .workflow_stack
            .iter()
            .chain(agent)
            .map(|w| StackEntry { workflow: w.label(), step: w.current_step_id.clone() })
            .collect()
    }
}
