//! What a script node printed, as text at the terminal: the last lines of a failed script's stderr under its
//! progress line (`roscoe run`, `runs watch`, `roscoe test`), the tail of each script's streams in `runs show`, and
//! whole streams in `runs logs`. A node run's `output.stdout` / `output.stderr` are what the engine recorded (the
//! script node's output); terminal control sequences in them are dropped unless the stream is a terminal.

use serde_json::Value;

/// How many lines of a stream a summary shows.
pub(super) const TAIL_LINES: usize = 8;

/// A node run's recorded stream `name` (`stdout` or `stderr`), when it is a script's and not empty.
pub(super) fn stream<'a>(node: &'a Value, name: &str) -> Option<&'a str> {
    let output = &node["output"];
    output.get("exitCode")?;
    output[name].as_str().filter(|text| !text.trim().is_empty())
}

/// A node run's recorded streams that are not empty, `(name, text)`, stdout first; none for a node run that is not a
/// script's.
pub(super) fn streams(node: &Value) -> Vec<(&'static str, &str)> {
    ["stdout", "stderr"].into_iter().filter_map(|name| Some((name, stream(node, name)?))).collect()
}

/// The last `count` lines of `text` (trailing blank lines left out), and how many lines came before them.
pub(super) fn tail(text: &str, count: usize) -> (usize, Vec<&str>) {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let skipped = lines.len().saturating_sub(count);
    (skipped, lines[skipped..].to_vec())
}

/// The tail of a failed script's stderr (its stdout when it wrote no stderr), as lines to print under its progress
/// line; none for other node runs.
pub(super) fn failed_tail(node: &Value, indent: &str, keep_escapes: bool) -> Vec<String> {
    if node["status"] != "failed" {
        return Vec::new();
    }
    let shown = ["stderr", "stdout"].into_iter().find_map(|name| Some((name, stream(node, name)?)));
    shown.map_or_else(Vec::new, |(name, text)| framed(text, name, indent, keep_escapes))
}

/// The last lines of `text`, each under `indent` and a bar, headed by the stream's name (and how much was left out).
pub(super) fn framed(text: &str, name: &str, indent: &str, keep_escapes: bool) -> Vec<String> {
    let (skipped, lines) = tail(text, TAIL_LINES);
    let more = if skipped > 0 { format!(" (last {} of {} lines)", lines.len(), skipped + lines.len()) } else { String::new() };
    let mut out = vec![format!("{indent}{name}{more}:")];
    out.extend(lines.into_iter().map(|line| format!("{indent}│ {}", shown(line, keep_escapes))));
    out
}

/// `text` as printed: as recorded on a terminal, else without terminal control sequences.
pub(super) fn shown(text: &str, keep_escapes: bool) -> String {
    if keep_escapes { text.to_owned() } else { without_escapes(text) }
}

/// `text` without terminal escape sequences ([`strip`](cairn_roscoe::terminal_text::strip)) and carriage-return
/// overwrites.
pub(super) fn without_escapes(text: &str) -> String {
    let stripped = cairn_roscoe::terminal_text::strip(text);
    let mut out = String::with_capacity(stripped.len());
    let mut chars = stripped.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // A progress bar's carriage return overwrites its line: keep what was written last.
            '\r' if chars.peek() != Some(&'\n') => {
                let start = out.rfind('\n').map_or(0, |i| i + 1);
                out.truncate(start);
            }
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn escapes_and_overwritten_progress_are_dropped() {
        assert_eq!(without_escapes("\x1b[31merror\x1b[0m: bad\r\n"), "error: bad\n");
        assert_eq!(without_escapes("10%\r50%\r100%\ndone"), "100%\ndone");
        assert_eq!(without_escapes("\x1b]0;title\x07text"), "text");
    }

    #[test]
    fn a_failed_script_shows_the_last_lines_of_its_stderr() {
        let stderr: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        let node = json!({"status": "failed", "output": {"exitCode": 1, "stderr": stderr, "stdout": ""}});
        let lines = failed_tail(&node, "  ", false);
        assert_eq!(lines[0], "  stderr (last 8 of 12 lines):");
        assert_eq!(lines[1], "  │ line 5");
        assert_eq!(lines.last().unwrap(), "  │ line 12");
        let quiet = json!({"status": "failed", "output": {"exitCode": 2, "stderr": "\n", "stdout": "usage: x"}});
        assert_eq!(failed_tail(&quiet, "", false), ["stdout:", "│ usage: x"], "stdout when stderr is empty");
        let done = json!({"status": "completed", "output": {"exitCode": 0, "stderr": "warning"}});
        assert!(failed_tail(&done, "", false).is_empty(), "only failed nodes in progress");
        let agent = json!({"status": "failed", "output": {"stderr": "not a script"}});
        assert!(stream(&agent, "stderr").is_none(), "only scripts have streams");
    }
}
