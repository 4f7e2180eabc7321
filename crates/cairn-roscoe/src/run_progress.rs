//! The progress of the run tools that can take long (`start_workflow`, the `advance_*` tools, `resume_run`,
//! `retry_run`, `fork_run`, `test_workflow`): when the request asked for progress (cairn-mcp's [`Progress`]), the
//! call runs inside [`following`], and a reporter follows the run tree the call starts or reads, sending a
//! notification as its node runs start and end (`build (script) started`, `build (script) completed`) and, while one
//! runs, every [`BEAT`] (`build (script) running, 6 s`). The last changes are sent before the call's answer. Without
//! it the call runs as it is.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use cairn_mcp::progress::Progress;
use tokio::sync::{oneshot, watch};

use crate::runs::observe::TreeWatcher;
use crate::runs::{NodeState, Runs, following};

/// How often a running node is reported while nothing else changes.
const BEAT: Duration = Duration::from_secs(2);

/// A call's progress: where it goes, and the runs it follows.
pub(crate) struct RunProgress {
    progress: Progress,
    runs: Runs,
}

impl RunProgress {
    /// Runs `call`, reporting the progress of its run tree while it runs when `progress` is given.
    pub(crate) async fn around<F: Future>(progress: Option<Progress>, runs: &Runs, call: F) -> F::Output {
        let Some(progress) = progress else { return call.await };
        let progress = RunProgress { progress, runs: runs.clone() };
        let (followed, tree) = watch::channel(None);
        let (stop, stopped) = oneshot::channel();
        let reporter = tokio::spawn(progress.report(tree, stopped));
        let output = following(followed, call).await;
        let _ = stop.send(());
        let _ = reporter.await;
        output
    }

    /// Follows the tree noted on `tree` until `stopped`, sending what changed.
    async fn report(self, mut tree: watch::Receiver<Option<String>>, mut stopped: oneshot::Receiver<()>) {
        let mut board = Board::default();
        let mut sent = 0;
        let mut watcher: Option<(String, TreeWatcher)> = None;
        let mut beat = tokio::time::interval(BEAT);
        beat.tick().await;
        loop {
            let (stopping, beating) = tokio::select! {
                _ = &mut stopped => (true, false),
                changed = tree.changed() => {
                    if changed.is_err() {
                        // The call has ended; its stop comes next.
                        let _ = (&mut stopped).await;
                        (true, false)
                    } else {
                        (false, false)
                    }
                }
                () = changes(&mut watcher) => (false, false),
                _ = beat.tick() => (false, true),
            };
            let root = tree.borrow_and_update().clone();
            if let Some(root) = root.filter(|r| watcher.as_ref().is_none_or(|(w, _)| w != r)) {
                watcher = Some((root.clone(), self.runs.watch_tree(root, 0)));
            }
            if let Some((root, _)) = &watcher
                && let Ok(states) = self.runs.node_states(root).await
            {
                for message in board.news(&states, beating) {
                    sent += 1;
                    self.progress.send(sent, message).await;
                }
            }
            if stopping {
                return;
            }
        }
    }
}

/// Waits for the followed tree's log to grow (forever while no tree is followed).
async fn changes(watcher: &mut Option<(String, TreeWatcher)>) {
    match watcher {
        Some((_, watcher)) => {
            if watcher.changed().await.is_err() {
                tokio::time::sleep(BEAT).await;
            }
        }
        None => std::future::pending().await,
    }
}

/// What has been reported of a tree: each node run's last status.
#[derive(Default)]
struct Board {
    statuses: HashMap<String, String>,
}

impl Board {
    /// The messages for what changed in `states` since the last call; on a `beat`, also each node still running.
    fn news(&mut self, states: &[NodeState], beat: bool) -> Vec<String> {
        let now = crate::clock::now_ms();
        let mut news = Vec::new();
        for state in states {
            let name = format!("{}{} ({})", "  ".repeat(state.depth as usize), state.node_id, state.node_type);
            let before = self.statuses.insert(state.id.clone(), state.status.clone());
            let message = match (before.as_deref(), state.status.as_str()) {
                (None, "running") => format!("{name} started"),
                (Some("running"), "running") if beat => {
                    format!("{name} running, {} s", (now - state.started_at).max(0) / 1000)
                }
                (Some(before), now) if before == now => continue,
                (_, status) => format!("{name} {status}"),
            };
            news.push(message);
        }
        news
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(id: &str, status: &str) -> NodeState {
        NodeState {
            id: id.into(),
            node_id: format!("n{id}"),
            node_type: "script".into(),
            status: status.into(),
            started_at: crate::clock::now_ms() - 6_000,
            depth: 0,
        }
    }

    #[test]
    fn a_board_reports_starts_ends_and_running_nodes_on_a_beat() {
        let mut board = Board::default();
        assert_eq!(board.news(&[state("1", "running")], false), ["n1 (script) started"]);
        assert!(board.news(&[state("1", "running")], false).is_empty(), "nothing new");
        let beat = board.news(&[state("1", "running")], true);
        assert!(beat[0].starts_with("n1 (script) running, ") && beat[0].ends_with(" s"), "{beat:?}");
        assert_eq!(board.news(&[state("1", "completed"), state("2", "paused")], true), [
            "n1 (script) completed",
            "n2 (script) paused"
        ]);
    }
}
