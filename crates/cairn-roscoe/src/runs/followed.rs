//! The run tree a call works on, for whoever follows it while the call runs (the MCP tools' progress
//! notifications): [`following`] runs a call with a channel that the facade fills with the root of the tree the call
//! starts or reads — a new top-level run as it is inserted, an existing one once the caller's scope has been checked
//! (`Runs::current_tree`) — and [`Runs::node_states`] reads that tree's node runs. Nothing is noted outside a
//! [`following`] call, and a follower learns of no tree the caller could not read.

use std::future::Future;

use cairn_store::runs as rows;
use tokio::sync::watch;

use super::Runs;
use crate::error::Error;

tokio::task_local! {
    /// Where the current call notes the root of the tree it works on.
    static FOLLOWED: watch::Sender<Option<String>>;
}

/// Runs `call`, noting on `followed` the root run of the tree it starts or reads (the last one, if several).
pub async fn following<F: Future>(followed: watch::Sender<Option<String>>, call: F) -> F::Output {
    FOLLOWED.scope(followed, call).await
}

/// Notes `root_run_id` for the current [`following`] call, if there is one.
pub(super) fn note(root_run_id: &str) {
    let _ = FOLLOWED.try_with(|followed| {
        followed.send_if_modified(|current| {
            let changed = current.as_deref() != Some(root_run_id);
            if changed {
                *current = Some(root_run_id.to_owned());
            }
            changed
        })
    });
}

/// One node run of a tree, as a follower reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeState {
    /// The node run's id.
    pub id: String,
    /// Its node.
    pub node_id: String,
    /// The node's type.
    pub node_type: String,
    /// `running`, `paused`, `completed`, `failed`, `cancelled`.
    pub status: String,
    /// When it started (epoch ms).
    pub started_at: i64,
    /// How deep its run is in the tree (0: the root's own node runs).
    pub depth: i64,
}

impl Runs {
    /// Every node run of the tree rooted at `root_run_id`, runs in tree order, each run's in execution order. For
    /// the ids a [`following`] call noted (the scope was checked there).
    pub async fn node_states(&self, root_run_id: &str) -> Result<Vec<NodeState>, Error> {
        let mut conn = self.inner.store.read().await?;
        let mut states = Vec::new();
        for run in rows::runs_in_tree(&mut conn, root_run_id).await? {
            for node in rows::node_runs(&mut conn, &run.id).await? {
                states.push(NodeState {
                    id: node.id,
                    node_id: node.node_id,
                    node_type: node.node_type,
                    status: node.status,
                    started_at: node.started_at,
                    depth: run.depth,
                });
            }
        }
        Ok(states)
    }
}
