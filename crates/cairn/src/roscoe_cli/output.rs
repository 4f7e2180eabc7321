//! How roscoe commands print: JSON on stdout with `--json` (and nothing else there), otherwise tables and text on
//! stdout and progress and notes on stderr; colours only on a terminal and never when `NO_COLOR` is set (and not
//! empty); `--quiet` drops the notes and keeps lists to their ids.

use std::io::{IsTerminal, Write};

use serde::Serialize;

use super::GlobalOptions;

/// Where and how a command prints.
#[derive(Debug, Clone, Copy)]
pub(super) struct Output {
    /// `--json`.
    pub(super) json: bool,
    /// `--quiet`.
    pub(super) quiet: bool,
    /// `--verbose` (`run`, `runs watch`): scripts' lines are shown as they are printed.
    pub(super) verbose: bool,
    /// Whether stderr is a terminal (live progress, the spinner).
    pub(super) err_tty: bool,
    color_err: bool,
    color_out: bool,
}

/// A colour (or weight) for text.
#[derive(Debug, Clone, Copy)]
pub(super) enum Paint {
    Green,
    Red,
    Yellow,
    Cyan,
    Bold,
    Dim,
}

impl Paint {
    fn code(self) -> &'static str {
        match self {
            Paint::Green => "32",
            Paint::Red => "31",
            Paint::Yellow => "33",
            Paint::Cyan => "36",
            Paint::Bold => "1",
            Paint::Dim => "2",
        }
    }

    /// The colour of a run or node status.
    pub(super) fn of_status(status: &str) -> Paint {
        match status {
            "completed" => Paint::Green,
            "failed" | "cancelled" => Paint::Red,
            "paused" => Paint::Yellow,
            _ => Paint::Cyan,
        }
    }
}

impl Output {
    /// The output `options` ask for on this process's streams and environment.
    pub(super) fn new(options: &GlobalOptions) -> Output {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let err_tty = std::io::stderr().is_terminal();
        Output {
            json: options.json,
            quiet: options.quiet,
            verbose: false,
            err_tty,
            color_err: err_tty && !no_color,
            color_out: std::io::stdout().is_terminal() && !no_color,
        }
    }

    /// `text` in `paint`, for stderr.
    pub(super) fn paint(&self, paint: Paint, text: &str) -> String {
        painted(self.color_err, paint, text)
    }

    /// `text` in `paint`, for stdout.
    pub(super) fn paint_out(&self, paint: Paint, text: &str) -> String {
        painted(self.color_out, paint, text)
    }

    /// `value` as pretty JSON on stdout.
    pub(super) fn print_json(&self, value: &impl Serialize) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(value)?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{text}")?;
        Ok(())
    }

    /// A note on stderr, unless `--quiet`.
    pub(super) fn note(&self, text: &str) {
        if !self.quiet {
            eprintln!("{text}");
        }
    }

    /// Rows under `headers` on stdout, columns aligned; with `--quiet` only the first column, without headers.
    pub(super) fn table(&self, headers: &[&str], rows: &[Vec<String>]) {
        let mut stdout = std::io::stdout().lock();
        if self.quiet {
            for row in rows {
                let _ = writeln!(stdout, "{}", row.first().map_or("", String::as_str));
            }
            return;
        }
        let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
        for row in rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let line = |cells: Vec<String>| {
            let last = cells.len().saturating_sub(1);
            let mut text = String::new();
            for (i, cell) in cells.into_iter().enumerate() {
                let pad = widths[i].saturating_sub(cell.chars().count());
                text.push_str(&cell);
                if i < last {
                    text.push_str(&" ".repeat(pad + 2));
                }
            }
            text.trim_end().to_owned()
        };
        let header = line(headers.iter().map(|h| (*h).to_owned()).collect());
        let _ = writeln!(stdout, "{}", self.paint_out(Paint::Bold, &header));
        for row in rows {
            let _ = writeln!(stdout, "{}", line(row.clone()));
        }
    }
}

fn painted(on: bool, paint: Paint, text: &str) -> String {
    if on { format!("\x1b[{}m{text}\x1b[0m", paint.code()) } else { text.to_owned() }
}
