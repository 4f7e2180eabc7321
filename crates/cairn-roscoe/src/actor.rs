//! Who acts on workflows and runs: the principal behind a call, where the call came from, and whether it may make
//! the server run `script` nodes.
//!
//! The facades take an [`Actor`] wherever an action is recorded (starts, human decisions, cancels, retries, workflow
//! writes: `audit_events`, and `principal` in a human node's output) or where scripts could run. A run remembers
//! whether its starter could run scripts (`exec_allowed`, inherited by its subworkflow runs), and the runs layer
//! runs no script for a run that could not, so a script never runs on the word of someone who lacks `roscoe:exec`.

/// The principal behind one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Where the call came from: `mcp`, `web` (the web UI and the REST API) or `cli` (the seed's `decidedBy`).
    pub via: &'static str,
    /// The principal's id (`prn_…`).
    pub principal_id: String,
    /// How people know it: `Ada (person)`.
    pub name: String,
    /// Whether it may make the server run `script` nodes (it holds `roscoe:exec`).
    pub may_exec: bool,
}

impl Actor {
    /// The local user (stdio, a loopback-only server, the command line), who may do everything.
    pub fn local(via: &'static str) -> Actor {
        Actor { via, principal_id: "prn_local_person".into(), name: "local person".into(), may_exec: true }
    }

    /// The refusal when this actor may not make the server run scripts; `what` names what it tried.
    pub(crate) fn exec_refusal(&self, what: &str) -> String {
        format!(
            "{what} has `script` nodes, which run shell commands on the server, and {} lacks the roscoe:exec scope; \
             use a token that has it, or replace the script nodes",
            self.name
        )
    }
}
