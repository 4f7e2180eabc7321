//! A human step asked at the terminal: the step's prompt as the engine words it for every host (the node's prompt,
//! then its choices numbered with their labels), and a line read from standard input (a choice's number or name;
//! anything else asks again). Lines are read by one thread for the whole process, so the question can be left when
//! Ctrl-C comes.

use std::io::BufRead;
use std::sync::OnceLock;

use cairn_roscoe::engine::PendingStep;
use tokio::sync::{Mutex, mpsc};

use super::output::{Output, Paint};

/// What the person did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Asked {
    /// Chose this transition.
    Chose(String),
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
        let line = tokio::select! {
            line = lines.recv() => line,
            _ = tokio::signal::ctrl_c() => None,
        };
        let Some(line) = line else {
            eprintln!();
            return Asked::Left;
        };
        let answer = line.trim();
        let chosen = answer
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| choices.get(i))
            .or_else(|| choices.iter().find(|event| *event == answer));
        match chosen {
            Some(event) => return Asked::Chose(event.clone()),
            None => eprintln!("'{answer}' is not one of the choices; type its number or its name."),
        }
    }
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
