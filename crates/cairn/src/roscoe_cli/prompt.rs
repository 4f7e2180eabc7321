//! A human step asked at the terminal: the step's prompt as the engine words it for every host (the node's prompt,
//! then its choices numbered with their labels), and a line read from standard input (a choice's number, event or
//! label, in any case, as `roscoe runs resume` takes them; anything else asks again), then an optional comment (unless
//! the node sets `allowComment: false`). Lines are read by one thread for the whole process, so the question can be left when
//! Ctrl-C comes.

use std::io::BufRead;
use std::sync::OnceLock;

use cairn_roscoe::engine::PendingStep;
use tokio::sync::{Mutex, mpsc};

use super::output::{Output, Paint};

/// What the person did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Asked {
    /// Chose this transition, with this comment.
    Chose(String, Option<String>),
    /// Ended the input (end of file) or pressed Ctrl-C.
    Left,
}

/// Lines of standard input, read by one thread started at the first question.
static LINES: OnceLock<Mutex<mpsc::UnboundedReceiver<String>>> = OnceLock::new();

/// Asks the person at the terminal to choose among `step`'s transitions.
pub(super) async fn ask(step: &PendingStep, out: &Output) -> Asked {
    let choices = &step.valid_transitions;
    eprintln!();
    eprintln!("{} {}", out.paint(Paint::Yellow, "?"), out.paint(Paint::Bold, &format!("{} (human step)", step.node_id)));
    for line in step.prompt.lines() {
        eprintln!("  {line}");
    }
    let mut lines = LINES.get_or_init(|| Mutex::new(read_lines())).lock().await;
    loop {
        eprint!("Choose 1–{} (or type the choice): ", choices.len());
        let Some(line) = next_line(&mut lines).await else {
            eprintln!();
            return Asked::Left;
        };
        let answer = line.trim();
        let Some(event) = choice(step, answer) else {
            eprintln!("'{answer}' is not one of the choices; type its number, its name or its label.");
            continue;
        };
        if step.allow_comment == Some(false) {
            return Asked::Chose(event, None);
        }
        eprint!("Comment (optional; Enter for none): ");
        let Some(comment) = next_line(&mut lines).await else {
            eprintln!();
            return Asked::Left;
        };
        let comment = comment.trim();
        return Asked::Chose(event, (!comment.is_empty()).then(|| comment.to_owned()));
    }
}

/// The next line typed; `None` at the end of the input or when Ctrl-C comes first.
async fn next_line(lines: &mut mpsc::UnboundedReceiver<String>) -> Option<String> {
    tokio::select! {
        line = lines.recv() => line,
        _ = tokio::signal::ctrl_c() => None,
    }
}

/// The transition `answer` names among `step`'s choices: its number (1-based), its event or its label, in any case.
fn choice(step: &PendingStep, answer: &str) -> Option<String> {
    let choices = &step.valid_transitions;
    if let Some(event) = answer.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| choices.get(i)) {
        return Some(event.clone());
    }
    let label = |event: &str| step.transitions.iter().find(|t| t.event == event).and_then(|t| t.label.clone());
    choices
        .iter()
        .find(|event| event.eq_ignore_ascii_case(answer))
        .or_else(|| choices.iter().find(|event| label(event).is_some_and(|l| l.eq_ignore_ascii_case(answer))))
        .cloned()
}

/// Starts the thread that reads standard input a line at a time.
fn read_lines() -> mpsc::UnboundedReceiver<String> {
    let (send, receive) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}
