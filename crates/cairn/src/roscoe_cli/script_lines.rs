//! `--verbose` (`roscoe run`, `roscoe runs watch`): the lines scripts print, as they come, on stderr among the
//! progress lines — each after its node's id, `[build] …`, standard error's marked `[build:stderr] …`. They come from
//! the run facade's [`OutputFollower`]: at once for the scripts this process runs, within about a second for those
//! another process runs (through the database); when a node run ends, what was not shown yet comes from its stored
//! output, before its progress line. Terminal control sequences are kept only when stderr is a terminal.

use std::time::Duration;

use cairn_roscoe::runs::{OutputFollower, ScriptText, Stream};
use serde_json::Value;

use super::output::{Output, Paint};
use super::script_output;

/// The next new output of the followed scripts; never, without a follower. A failed read waits a second and gives
/// nothing.
pub(super) async fn next(follower: Option<&mut OutputFollower>) -> Vec<ScriptText> {
    let Some(follower) = follower else { return std::future::pending().await };
    match follower.next().await {
        Ok(texts) => texts,
        Err(error) => {
            tracing::debug!("reading scripts' output: {error}");
            tokio::time::sleep(Duration::from_secs(1)).await;
            Vec::new()
        }
    }
}

/// What a finished node run (as `get_run_history` gives it) printed that was not shown yet; nothing for a node run
/// that is not a script's.
pub(super) fn rest(follower: &mut OutputFollower, node: &Value) -> Vec<ScriptText> {
    if node["nodeType"] != "script" {
        return Vec::new();
    }
    let text = |key: &str| node[key].as_str().unwrap_or_default().to_owned();
    let stream = |name: &str| node["output"][name].as_str().unwrap_or_default().to_owned();
    follower.finish(&text("id"), &text("nodeId"), &stream("stdout"), &stream("stderr"))
}

/// Prints `texts` on stderr, a line each.
pub(super) fn print(texts: &[ScriptText], out: &Output) {
    for text in texts {
        for line in lines(text, out.err_tty) {
            let (prefix, body) = line.split_at(line.find(']').map_or(0, |i| i + 1));
            eprintln!("{}{body}", out.paint(Paint::Dim, prefix));
        }
    }
}

/// `text` as the lines printed for it: `[node] line`, `[node:stderr] line`, after a line saying how much was
/// left out when the follower fell behind.
fn lines(text: &ScriptText, keep_escapes: bool) -> Vec<String> {
    let mark = match text.stream {
        Stream::Stdout => format!("[{}]", text.node_id),
        Stream::Stderr => format!("[{}:stderr]", text.node_id),
    };
    let mut out = Vec::new();
    if text.skipped_bytes > 0 {
        out.push(format!("{mark} … ({} bytes not shown)", text.skipped_bytes));
    }
    for line in text.text.lines() {
        out.push(format!("{mark} {}", script_output::shown(line, keep_escapes)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(stream: Stream, skipped_bytes: u64, text: &str) -> Vec<String> {
        let text = ScriptText {
            node_id: "build".into(),
            node_run_id: "n1".into(),
            stream,
            skipped_bytes,
            text: text.into(),
        };
        lines(&text, false)
    }

    #[test]
    fn each_line_is_shown_after_its_node_and_stderr_is_marked() {
        assert_eq!(check(Stream::Stdout, 0, "one\ntwo\n"), ["[build] one", "[build] two"]);
        assert_eq!(check(Stream::Stderr, 0, "\x1b[31mbad\x1b[0m\r\n"), ["[build:stderr] bad"]);
        assert_eq!(check(Stream::Stdout, 120, "last"), ["[build] … (120 bytes not shown)", "[build] last"]);
    }
}
