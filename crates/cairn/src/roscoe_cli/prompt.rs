//! A human step asked at the terminal: the step's prompt, its choices numbered with the labels of the nodes they
//! lead to, and a line read from standard input (a number or a choice's name; anything else asks again). Lines are
//! read by one thread for the whole process, so the question can be left when Ctrl-C comes.

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
    let choices = choices(step);
    eprintln!();
    eprintln!("{} {}", out.paint(Paint::Yellow, "?"), out.paint(Paint::Bold, &format!("{} (human step)", step.node_id)));
    for line in step.prompt.lines() {
        eprintln!("  {line}");
    }
    for (i, (event, label)) in choices.iter().enumerate() {
        let label = label.as_deref().map(|l| format!(" — {l}")).unwrap_or_default();
        eprintln!("  {}) {event}{}", i + 1, out.paint(Paint::Dim, &label));
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
            .or_else(|| choices.iter().find(|(event, _)| event == answer));
        match chosen {
            Some((event, _)) => return Asked::Chose(event.clone()),
            None => eprintln!("'{answer}' is not one of the choices; type its number or its name."),
        }
    }
}

/// The step's choices: each transition with the label of the node it leads to.
fn choices(step: &PendingStep) -> Vec<(String, Option<String>)> {
    if step.transitions.is_empty() {
        return step.valid_transitions.iter().map(|t| (t.clone(), None)).collect();
    }
    step.valid_transitions
        .iter()
        .map(|event| {
            let info = step.transitions.iter().find(|t| &t.event == event);
            let label = info.map(|t| t.target_label.clone().unwrap_or_else(|| t.target.clone()));
            (event.clone(), label)
        })
        .collect()
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
