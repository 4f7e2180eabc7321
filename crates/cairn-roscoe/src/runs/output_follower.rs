//! Reading what running scripts print, for live views: a run page's log of one script node run
//! ([`Runs::live_script_output`]) and the new lines of every script of a run tree as they come
//! ([`OutputFollower`], for `roscoe run --verbose`). A script this process runs is read from
//! [`live_output`](super::live_output) at once; one another process runs, from the store's `script_output` rows, which
//! that process writes once a second. Once a node run has ended its stored output is the whole of it
//! ([`OutputFollower::finish`] gives what a follower had not seen). Nothing here writes.

use std::collections::HashMap;
use std::time::Duration;

use cairn_store::observe;
use cairn_store::runs as rows;
use tokio::sync::watch;
use tokio::time::Instant;

use super::Runs;
use super::live_output::{Stream, StreamTail};
use crate::error::Error;
use crate::scope::Scope;

/// How often a follower reads the store for the scripts other processes run.
const POLL_EVERY: Duration = Duration::from_secs(1);

/// What a running script node run printed so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveLog {
    /// Its standard output so far.
    pub stdout: StreamTail,
    /// Its standard error so far.
    pub stderr: StreamTail,
}

/// New output of one stream of a script: whole lines (a stream's last piece may lack its newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptText {
    /// The workflow node.
    pub node_id: String,
    /// Its node run.
    pub node_run_id: String,
    /// Which stream.
    pub stream: Stream,
    /// Bytes printed before `text` that are no longer kept (the follower fell behind the bounded tail).
    pub skipped_bytes: u64,
    /// The new text.
    pub text: String,
}

impl Runs {
    /// What script node run `node_run_id` of run `run_id` (in `scope`) printed so far while it runs — from this
    /// process when it runs the script, else as another process last wrote it (at most about a second old). `None`
    /// when it does not run (it ended, and its output is stored with it) or has printed nothing yet.
    pub async fn live_script_output(
        &self,
        scope: &Scope,
        run_id: &str,
        node_run_id: &str,
    ) -> Result<Option<LiveLog>, Error> {
        self.load_scoped(scope, run_id).await?;
        if let Some(script) = self.inner.live.get(node_run_id).filter(|s| s.run_id == run_id) {
            let [stdout, stderr] = script.streams();
            return Ok(Some(LiveLog { stdout, stderr }));
        }
        let mut conn = self.inner.store.read().await?;
        let found = rows::script_output(&mut conn, node_run_id).await?;
        let mut log = None;
        for row in found.iter().filter(|r| r.run_id == run_id) {
            let log: &mut LiveLog = log.get_or_insert_with(LiveLog::default);
            match row.stream.as_str() {
                "stdout" => log.stdout = StreamTail::of_row(row),
                _ => log.stderr = StreamTail::of_row(row),
            }
        }
        Ok(log)
    }

    /// A follower of the output of every script of `run_id`'s tree from now on.
    pub fn follow_script_output(&self, run_id: &str) -> OutputFollower {
        OutputFollower {
            runs: self.clone(),
            run_id: run_id.to_owned(),
            root: None,
            seen: HashMap::new(),
            attempts: HashMap::new(),
            wake: self.inner.live.subscribe(),
            next_poll: Instant::now(),
        }
    }
}

/// Follows what the scripts of one run tree print; see [`Runs::follow_script_output`].
#[derive(Debug)]
pub struct OutputFollower {
    runs: Runs,
    run_id: String,
    root: Option<String>,
    /// Bytes passed on of each node run's streams.
    seen: HashMap<(String, Stream), u64>,
    /// The attempt of each node run this process runs (or ran), as last read (a new one starts from nothing
    /// printed); the store's rows of these are not read.
    attempts: HashMap<String, u64>,
    wake: watch::Receiver<u64>,
    next_poll: Instant,
}

impl OutputFollower {
    /// Waits for new output of the tree's running scripts: at once for the scripts this process runs, within about a
    /// second for other processes'. Cancel-safe: dropped while waiting, it loses nothing.
    pub async fn next(&mut self) -> Result<Vec<ScriptText>, Error> {
        loop {
            let poll = tokio::select! {
                changed = self.wake.changed() => {
                    if changed.is_err() {
                        tokio::time::sleep_until(self.next_poll).await;
                    }
                    false
                }
                () = tokio::time::sleep_until(self.next_poll) => true,
            };
            let texts = self.read(poll).await?;
            if !texts.is_empty() {
                return Ok(texts);
            }
        }
    }

    /// What node run `node_run_id` (of node `node_id`), which has ended with `stdout` and `stderr` stored, printed
    /// that was not passed on yet; it is not followed any more.
    pub fn finish(&mut self, node_run_id: &str, node_id: &str, stdout: &str, stderr: &str) -> Vec<ScriptText> {
        let mut texts = Vec::new();
        for (stream, stored) in [(Stream::Stdout, stdout), (Stream::Stderr, stderr)] {
            self.attempts.remove(node_run_id);
            let seen = self.seen.remove(&(node_run_id.to_owned(), stream)).unwrap_or(0);
            let rest = usize::try_from(seen).ok().and_then(|seen| stored.get(seen..)).unwrap_or_default();
            if !rest.is_empty() {
                texts.push(ScriptText {
                    node_id: node_id.to_owned(),
                    node_run_id: node_run_id.to_owned(),
                    stream,
                    skipped_bytes: 0,
                    text: rest.to_owned(),
                });
            }
        }
        texts
    }

    /// The new output of the scripts this process runs, and with `poll` of those the store has.
    async fn read(&mut self, poll: bool) -> Result<Vec<ScriptText>, Error> {
        let root = match &self.root {
            Some(root) => root.clone(),
            None => {
                let mut conn = self.runs.inner.store.read().await?;
                let found = observe::root_run_id(&mut conn, &self.run_id).await?;
                self.root.insert(found.unwrap_or_else(|| self.run_id.clone())).clone()
            }
        };
        let mut streams: Vec<(String, String, Stream, StreamTail)> = Vec::new();
        let local = self.runs.inner.live.of_tree(&root);
        for script in &local {
            if self.attempts.insert(script.node_run_id.clone(), script.attempt).is_some_and(|a| a != script.attempt) {
                for stream in Stream::BOTH {
                    self.seen.remove(&(script.node_run_id.clone(), stream));
                }
            }
            for (stream, tail) in Stream::BOTH.into_iter().zip(script.streams()) {
                streams.push((script.node_run_id.clone(), script.node_id.clone(), stream, tail));
            }
        }
        if poll {
            let mut conn = self.runs.inner.store.read().await?;
            let stored = rows::tree_script_output(&mut conn, &root).await?;
            self.next_poll = Instant::now() + POLL_EVERY;
            // What this process runs is read above, at once: its rows lag behind.
            for row in stored.iter().filter(|r| !self.attempts.contains_key(&r.node_run_id)) {
                let stream = if row.stream == "stdout" { Stream::Stdout } else { Stream::Stderr };
                let seen = self.seen.entry((row.node_run_id.clone(), stream)).or_insert(0);
                if u64::try_from(row.total_bytes).is_ok_and(|total| total < *seen) {
                    // Fewer bytes than already passed on: the script began again (a retry).
                    *seen = 0;
                }
                streams.push((row.node_run_id.clone(), row.node_id.clone(), stream, StreamTail::of_row(row)));
            }
        }
        let mut texts = Vec::new();
        for (node_run_id, node_id, stream, tail) in streams {
            let seen = self.seen.entry((node_run_id.clone(), stream)).or_insert(0);
            let (skipped_bytes, text) = tail.after(*seen);
            if !text.is_empty() || skipped_bytes > 0 {
                texts.push(ScriptText { node_id, node_run_id, stream, skipped_bytes, text: text.to_owned() });
            }
            *seen = (*seen).max(tail.total_bytes);
        }
        Ok(texts)
    }
}
