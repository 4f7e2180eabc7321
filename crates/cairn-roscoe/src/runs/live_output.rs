//! What the scripts this process runs print, while they run: each stream's whole lines are kept as a bounded tail
//! ([`StreamTail`]: the last [`TAIL_BYTES`] and the count of bytes printed in all) in [`LiveScripts`], where followers
//! in this process read them as they come (woken at each read), and written to the store's `script_output` rows at
//! most once every [`FLUSH_EVERY`] (only when something was printed since), where any other process reads them. The
//! node run's end supersedes both: its whole output is stored with it (1 MiB a stream, as before) and the rows go.
//! Nothing here touches the run's row, so these writes never meet its compare-and-swap.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_store::Store;
use cairn_store::runs::{ScriptOutputRow, put_script_output};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::clock::now_ms;

/// How much of each stream is kept while the script runs: the last 64 KiB of whole lines.
pub const TAIL_BYTES: usize = 64 * 1024;
/// How often a running script's streams are written to the store, at most.
const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// A line longer than this is passed on in pieces rather than held until its end.
const LONGEST_HELD_LINE: usize = 16 * 1024;

/// One of a script's two output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    /// Both, stdout first.
    pub const BOTH: [Stream; 2] = [Stream::Stdout, Stream::Stderr];

    /// `stdout` or `stderr`, as stored.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What one stream has printed so far: the end of it, starting at a line's start, and how many bytes it printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamTail {
    /// The last whole lines, at most [`TAIL_BYTES`] (one longer line is cut at its start).
    pub text: String,
    /// Bytes printed in all; `text` is the end of them.
    pub total_bytes: u64,
}

impl StreamTail {
    /// The tail as stored in a `script_output` row.
    pub(crate) fn of_row(row: &ScriptOutputRow) -> StreamTail {
        StreamTail { text: row.tail.clone(), total_bytes: u64::try_from(row.total_bytes).unwrap_or_default() }
    }

    /// Whether bytes printed before the tail are no longer kept.
    pub fn is_cut(&self) -> bool {
        self.total_bytes > self.text.len() as u64
    }

    /// What came after the first `seen` bytes of the stream, as far as the tail reaches: how many bytes of it are no
    /// longer kept, and the text kept (nothing when `seen` is not before the end).
    pub fn after(&self, seen: u64) -> (u64, &str) {
        if seen >= self.total_bytes {
            return (0, "");
        }
        let start = self.total_bytes - self.text.len() as u64;
        if seen <= start {
            return (start - seen, &self.text);
        }
        let from = (seen - start) as usize;
        match self.text.get(from..) {
            Some(text) => (0, text),
            None => (0, ""),
        }
    }

    /// Appends `text` (whole lines, or the last piece of the stream) and drops whole lines from the front beyond
    /// [`TAIL_BYTES`].
    fn push(&mut self, text: &str) {
        self.total_bytes += text.len() as u64;
        self.text.push_str(text);
        if self.text.len() > TAIL_BYTES {
            let over = self.text.len() - TAIL_BYTES;
            let cut = match self.text[over..].find('\n') {
                Some(newline) => over + newline + 1,
                None => (over..self.text.len()).find(|&i| self.text.is_char_boundary(i)).unwrap_or(self.text.len()),
            };
            self.text.drain(..cut);
        }
    }
}

/// One attempt of a script this process runs: who it is and what it printed so far.
#[derive(Debug)]
pub(super) struct LiveScript {
    /// Tells this attempt from the node run's others (a retry starts from nothing printed).
    pub(super) attempt: u64,
    pub(super) root_run_id: String,
    pub(super) run_id: String,
    pub(super) node_run_id: String,
    pub(super) node_id: String,
    state: Mutex<Printed>,
    wake: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct Printed {
    streams: [StreamTail; 2],
    /// The bytes after each stream's last newline, not passed on yet.
    held: [Vec<u8>; 2],
    /// Printed since the last write to the store.
    unwritten: bool,
}

impl LiveScript {
    /// Takes `bytes` the script wrote on `stream`: its whole lines are passed on, the rest held until its newline.
    pub(super) fn feed(&self, stream: Stream, bytes: &[u8]) {
        let mut state = self.state.lock().expect("live output lock");
        let held = &mut state.held[stream.index()];
        held.extend_from_slice(bytes);
        let whole = match held.iter().rposition(|&b| b == b'\n') {
            Some(newline) => newline + 1,
            None if held.len() > LONGEST_HELD_LINE => utf8_prefix(held),
            None => return,
        };
        let text = String::from_utf8_lossy(&held[..whole]).into_owned();
        held.drain(..whole);
        state.streams[stream.index()].push(&text);
        state.unwritten = true;
        drop(state);
        self.wake.send_modify(|n| *n += 1);
    }

    /// The stream ended: what was held after its last newline is passed on.
    pub(super) fn end(&self, stream: Stream) {
        let mut state = self.state.lock().expect("live output lock");
        let held = std::mem::take(&mut state.held[stream.index()]);
        if held.is_empty() {
            return;
        }
        state.streams[stream.index()].push(&String::from_utf8_lossy(&held));
        state.unwritten = true;
        drop(state);
        self.wake.send_modify(|n| *n += 1);
    }

    /// Both streams as printed so far, stdout first.
    pub(super) fn streams(&self) -> [StreamTail; 2] {
        self.state.lock().expect("live output lock").streams.clone()
    }

    /// The rows to write when something was printed since the last write.
    fn unwritten_rows(&self) -> Option<Vec<ScriptOutputRow>> {
        let mut state = self.state.lock().expect("live output lock");
        if !std::mem::take(&mut state.unwritten) {
            return None;
        }
        let now = now_ms();
        let rows = Stream::BOTH
            .iter()
            .map(|&stream| {
                let tail = &state.streams[stream.index()];
                ScriptOutputRow {
                    node_run_id: self.node_run_id.clone(),
                    stream: stream.name().to_owned(),
                    run_id: self.run_id.clone(),
                    node_id: self.node_id.clone(),
                    tail: tail.text.clone(),
                    total_bytes: i64::try_from(tail.total_bytes).unwrap_or(i64::MAX),
                    updated_at: now,
                }
            })
            .collect();
        Some(rows)
    }
}

/// The longest prefix of `bytes` that does not end inside a UTF-8 sequence.
fn utf8_prefix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        _ => bytes.len(),
    }
}

/// The scripts this process runs now, by node run, and a counter bumped whenever one of them prints.
#[derive(Debug)]
pub(super) struct LiveScripts {
    scripts: Mutex<HashMap<String, Arc<LiveScript>>>,
    wake: watch::Sender<u64>,
    attempts: AtomicU64,
}

impl Default for LiveScripts {
    fn default() -> LiveScripts {
        LiveScripts { scripts: Mutex::default(), wake: watch::Sender::new(0), attempts: AtomicU64::new(0) }
    }
}

impl LiveScripts {
    /// Registers an attempt of node run `node_run_id` (replacing an earlier attempt's output).
    pub(super) fn start(&self, root_run_id: &str, run_id: &str, node_run_id: &str, node_id: &str) -> Arc<LiveScript> {
        let script = Arc::new(LiveScript {
            attempt: self.attempts.fetch_add(1, Ordering::Relaxed),
            root_run_id: root_run_id.to_owned(),
            run_id: run_id.to_owned(),
            node_run_id: node_run_id.to_owned(),
            node_id: node_id.to_owned(),
            state: Mutex::default(),
            wake: self.wake.clone(),
        });
        self.scripts.lock().expect("live scripts lock").insert(node_run_id.to_owned(), script.clone());
        self.wake.send_modify(|n| *n += 1);
        script
    }

    /// Forgets `script` (its attempt ended).
    pub(super) fn end(&self, script: &LiveScript) {
        let mut scripts = self.scripts.lock().expect("live scripts lock");
        if scripts.get(&script.node_run_id).is_some_and(|s| std::ptr::eq(&**s, script)) {
            scripts.remove(&script.node_run_id);
        }
        drop(scripts);
        self.wake.send_modify(|n| *n += 1);
    }

    /// Node run `node_run_id`'s script, when this process runs it now.
    pub(super) fn get(&self, node_run_id: &str) -> Option<Arc<LiveScript>> {
        self.scripts.lock().expect("live scripts lock").get(node_run_id).cloned()
    }

    /// The scripts of run tree `root_run_id` this process runs now.
    pub(super) fn of_tree(&self, root_run_id: &str) -> Vec<Arc<LiveScript>> {
        let scripts = self.scripts.lock().expect("live scripts lock");
        scripts.values().filter(|s| s.root_run_id == root_run_id).cloned().collect()
    }

    /// A receiver that sees a change whenever a script of this process starts, prints or ends.
    pub(super) fn subscribe(&self) -> watch::Receiver<u64> {
        self.wake.subscribe()
    }
}

/// The task writing one script attempt's output to the store while it runs; [`Flusher::stop`] ends it.
pub(super) struct Flusher {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Flusher {
    /// Writes what `script` printed to `store` every [`FLUSH_EVERY`] when it printed something since the last write.
    pub(super) fn start(store: Store, script: Arc<LiveScript>) -> Flusher {
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    () = tokio::time::sleep(FLUSH_EVERY) => {}
                }
                if let Some(rows) = script.unwritten_rows()
                    && let Err(error) = store.write(put_script_output(&rows)).await
                {
                    tracing::debug!("node run {}: its live output was not written: {error}", script.node_run_id);
                }
            }
        });
        Flusher { stop, task }
    }

    /// Stops writing (a write under way finishes first). The end of the node run supersedes what was written.
    pub(super) async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(chunks: &[&[u8]]) -> (StreamTail, Vec<u8>) {
        let scripts = LiveScripts::default();
        let script = scripts.start("r", "r", "n", "build");
        for chunk in chunks {
            script.feed(Stream::Stdout, chunk);
        }
        let held = script.state.lock().unwrap().held[0].clone();
        (script.streams()[0].clone(), held)
    }

    #[test]
    fn whole_lines_are_passed_on_and_the_rest_held() {
        let (tail, held) = check(&[b"one\ntw", b"o\nthr"]);
        assert_eq!((tail.text.as_str(), tail.total_bytes), ("one\ntwo\n", 8));
        assert_eq!(held, b"thr");
        assert_eq!(tail.after(4), (0, "two\n"), "what a reader that saw the first line has not seen");
        assert_eq!(tail.after(8), (0, ""));
        assert_eq!(tail.after(20), (0, ""), "a reader ahead of a late copy sees nothing new");
    }

    #[test]
    fn the_tail_keeps_the_last_whole_lines_within_its_bound() {
        let line = format!("{}\n", "x".repeat(999));
        let many = line.repeat(100);
        let (tail, _) = check(&[many.as_bytes()]);
        assert_eq!(tail.total_bytes, 100_000);
        assert!(tail.text.len() <= TAIL_BYTES && tail.text.len() > TAIL_BYTES - 1000, "{}", tail.text.len());
        assert!(tail.text.starts_with('x') && tail.text.len() % 1000 == 0, "cut at a line's start");
        assert!(tail.is_cut());
        let (skipped, text) = tail.after(0);
        assert_eq!(skipped as usize + text.len(), 100_000, "a reader from the start is told what it missed");
    }

    #[test]
    fn a_very_long_line_is_passed_on_in_pieces_never_inside_a_character() {
        let mut long = "é".repeat(LONGEST_HELD_LINE / 2).into_bytes();
        long.push(0xc3);
        let (tail, held) = check(&[&long]);
        assert_eq!(held, [0xc3], "the half character waits for its end");
        assert_eq!(tail.total_bytes as usize, long.len() - 1);
    }
}
