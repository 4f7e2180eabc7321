//! A reader that stops early (`cairn completions bash | head`, `roscoe docs show SLUG | less` quit at once) closes
//! the pipe the command prints to. Printing to it then fails, and Rust's `print!` panics on that failure; this hook
//! turns that one panic into a quiet exit 0, as other command-line programs end when their reader has gone. Every
//! other panic keeps the default report.

use std::panic::PanicHookInfo;

/// Installs the hook; called first by each of the program's entries.
pub(crate) fn end_quietly_when_the_reader_goes() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if is_closed_stdout(info) {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Whether the panic is `print!`'s failure to write to a closed standard output.
fn is_closed_stdout(info: &PanicHookInfo<'_>) -> bool {
    let payload = info.payload();
    let message = payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied());
    message.is_some_and(|m| m.starts_with("failed printing to stdout") && m.contains("Broken pipe"))
}
