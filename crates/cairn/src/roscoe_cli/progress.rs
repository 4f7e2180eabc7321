//! The live progress of a run tree on stderr: one line per node run as it finishes — status, node, type, duration,
//! tokens and cost, from the node runs the facade records (subworkflow nodes' child runs indented under them), with a
//! failed script's last lines of stderr under its line (`script_output`) — and, on a terminal, a spinner line for the
//! node in flight. With `--verbose`, the lines scripts print as they come instead of the tail (`script_lines`). It
//! follows the tree through the facade's watcher (`Runs::watch_tree`: woken by this process's own writes, and by
//! other processes' through the store's changes feed), so `roscoe run` and `roscoe runs watch` show the same thing.
//! Held while a question is asked at the terminal, resumed after; `--quiet` shows none of it.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use cairn_roscoe::runs::OutputFollower;
use cairn_roscoe::{Runs, Scope};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::context::Ctx;
use super::output::{Output, Paint};
use super::{script_lines, script_output};

/// The spinner's frames.
const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// How often the spinner turns.
const TICK: Duration = Duration::from_millis(120);

/// The progress display of one run tree: running (a task following the tree) or held.
#[derive(Debug)]
pub(super) struct Progress {
    board: Option<Board>,
    running: Option<(oneshot::Sender<()>, JoinHandle<Board>)>,
    runs: Runs,
    scope: Scope,
}

impl Progress {
    /// The progress of run `run_id`'s tree, shown from now on (nothing with `--quiet`); with `only_new`, the node
    /// runs that had finished already are not shown again (a resume or retry shows what it does).
    pub(super) async fn start(ctx: &Ctx, run_id: &str, only_new: bool) -> Progress {
        let mut printed = HashSet::new();
        if only_new {
            let mut lines = Vec::new();
            collect(&ctx.runs, &ctx.scope, run_id.to_owned(), 0, &mut lines).await;
            let finished = |l: &Line| matches!(l.node["status"].as_str(), Some("completed" | "failed" | "cancelled"));
            printed.extend(lines.into_iter().filter(finished).map(|l| l.id));
        }
        let board = Board {
            root: run_id.to_owned(),
            out: ctx.out,
            printed,
            since: HashMap::new(),
            frame: 0,
            spinning: None,
            follower: ctx.out.verbose.then(|| ctx.runs.follow_script_output(run_id)),
        };
        let mut progress = Progress { board: Some(board), running: None, runs: ctx.runs.clone(), scope: ctx.scope.clone() };
        progress.resume();
        progress
    }

    /// Shows the progress again after [`Progress::hold`].
    pub(super) fn resume(&mut self) {
        let Some(mut board) = self.board.take().filter(|b| !b.out.quiet) else { return };
        let (stop, mut stopped) = oneshot::channel();
        let (runs, scope) = (self.runs.clone(), self.scope.clone());
        let task = tokio::spawn(async move {
            let mut watcher = runs.watch_tree(board.root.clone(), 0);
            let mut follower = board.follower.take();
            loop {
                board.render(&runs, &scope, follower.as_mut()).await;
                let mut tick = tokio::time::interval(TICK);
                tick.tick().await;
                loop {
                    tokio::select! {
                        _ = &mut stopped => {
                            board.render(&runs, &scope, follower.as_mut()).await;
                            board.clear();
                            board.follower = follower;
                            return board;
                        }
                        texts = script_lines::next(follower.as_mut()) => {
                            board.clear();
                            script_lines::print(&texts, &board.out);
                            board.spin();
                        }
                        changed = watcher.changed() => {
                            if changed.is_err() {
                                tokio::time::sleep(Duration::from_secs(1)).await;
                            }
                            break;
                        }
                        _ = tick.tick(), if board.out.err_tty => board.spin(),
                    }
                }
            }
        });
        self.running = Some((stop, task));
    }

    /// Prints every node run finished so far and stops showing progress (before a question, or at the end).
    pub(super) async fn hold(&mut self) {
        if let Some((stop, task)) = self.running.take() {
            let _ = stop.send(());
            if let Ok(board) = task.await {
                self.board = Some(board);
            }
        }
    }
}

/// What has been shown of a tree.
#[derive(Debug)]
struct Board {
    root: String,
    out: Output,
    /// Node runs whose line was printed.
    printed: HashSet<String>,
    /// When each node run in flight was first seen.
    since: HashMap<String, Instant>,
    frame: usize,
    /// The spinner's node and type, while one is drawn.
    spinning: Option<(String, String, Instant)>,
    /// With `--verbose`, what follows the scripts' lines (held here while the display is).
    follower: Option<OutputFollower>,
}

/// A node run as shown: its id, depth in the tree and recorded fields.
pub(super) struct Line {
    id: String,
    /// How deep in subworkflow runs (0: the run's own node runs).
    pub(super) depth: usize,
    /// The node run, as `get_run_history` gives it.
    pub(super) node: Value,
}

impl Board {
    /// Prints the lines of node runs finished since the last render (with `follower`, after the last lines their
    /// scripts printed) and redraws the spinner for the one in flight.
    async fn render(&mut self, runs: &Runs, scope: &Scope, mut follower: Option<&mut OutputFollower>) {
        let mut lines = Vec::new();
        collect(runs, scope, self.root.clone(), 0, &mut lines).await;
        let mut flight = None;
        for line in lines {
            let status = line.node["status"].as_str().unwrap_or_default().to_owned();
            match status.as_str() {
                "completed" | "failed" | "cancelled" if self.printed.insert(line.id.clone()) => {
                    self.clear();
                    if let Some(follower) = follower.as_deref_mut() {
                        script_lines::print(&script_lines::rest(follower, &line.node), &self.out);
                        eprintln!("{}", self.finished(&line, &status));
                        continue;
                    }
                    eprintln!("{}", self.finished(&line, &status));
                    let indent = "  ".repeat(line.depth + 1);
                    for text in script_output::failed_tail(&line.node, &indent, self.out.err_tty) {
                        eprintln!("{text}");
                    }
                }
                "running" => {
                    let since = *self.since.entry(line.id.clone()).or_insert_with(Instant::now);
                    let name = format!("{}{}", "  ".repeat(line.depth), text(&line.node, "nodeId"));
                    flight = Some((name, text(&line.node, "nodeType"), since));
                }
                _ => {}
            }
        }
        self.spinning = flight;
        self.spin();
    }

    /// The line of a finished node run.
    fn finished(&self, line: &Line, status: &str) -> String {
        let node = &line.node;
        let (icon, paint) = match status {
            "completed" => ('✓', Paint::Green),
            "cancelled" => ('⊘', Paint::Red),
            _ => ('✗', Paint::Red),
        };
        let name = format!("{}{}", "  ".repeat(line.depth), text(node, "nodeId"));
        let duration = node["durationMs"].as_i64().map_or_else(|| "-".to_owned(), seconds);
        let tokens = format!(
            "{}/{} tok",
            node["inputTokens"].as_i64().unwrap_or(0),
            node["outputTokens"].as_i64().unwrap_or(0)
        );
        let cost = format!("${:.4}", node["costUsd"].as_f64().unwrap_or(0.0));
        let mut text_line = format!(
            "{} {name:<20} {:<10} {} {duration:>7}  {tokens:>12}  {cost:>9}",
            self.out.paint(paint, &icon.to_string()),
            text(node, "nodeType"),
            self.out.paint(paint, &format!("{status:<9}")),
        );
        if let Some(error) = node["error"].as_str().filter(|_| status != "completed") {
            text_line.push_str(&format!("  {}", self.out.paint(Paint::Red, error)));
        }
        text_line
    }

    /// Turns and draws the spinner (on a terminal, while a node is in flight).
    fn spin(&mut self) {
        let Some((name, kind, since)) = &self.spinning else { return };
        if !self.out.err_tty {
            return;
        }
        self.frame = (self.frame + 1) % FRAMES.len();
        let frame = self.out.paint(Paint::Cyan, &FRAMES[self.frame].to_string());
        let elapsed = seconds(since.elapsed().as_millis() as i64);
        eprint!("\r\x1b[2K{frame} {name:<20} {kind:<10} running   {elapsed:>7}");
    }

    /// Removes the spinner line.
    fn clear(&mut self) {
        if self.spinning.is_some() && self.out.err_tty {
            eprint!("\r\x1b[2K");
        }
        self.spinning = None;
    }
}

/// The node runs of run `run_id` and of its child runs (each child's before the node that called it), in order.
pub(super) fn collect<'a>(
    runs: &'a Runs,
    scope: &'a Scope,
    run_id: String,
    depth: usize,
    lines: &'a mut Vec<Line>,
) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
    Box::pin(async move {
        let Ok(history) = runs.get_run_history(scope, &run_id).await else { return };
        for node in history.nodes {
            if let Some(child) = node["childRunId"].as_str() {
                collect(runs, scope, child.to_owned(), depth + 1, lines).await;
            }
            lines.push(Line { id: text(&node, "id"), depth, node });
        }
    })
}

/// A text field of a node run.
fn text(node: &Value, field: &str) -> String {
    node[field].as_str().unwrap_or_default().to_owned()
}

/// Milliseconds as `0.4s`, `12.0s`, `3m05s`.
pub(super) fn seconds(ms: i64) -> String {
    if ms < 60_000 { format!("{:.1}s", ms as f64 / 1000.0) } else { format!("{}m{:02}s", ms / 60_000, ms / 1000 % 60) }
}
