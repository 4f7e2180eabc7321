//! The limits every YAML text is read under, and their refusals in plain words.
//!
//! YAML can ask a reader for far more work than its size suggests: an alias (`*name`) repeats a whole anchored
//! subtree, so a few hundred bytes of nested anchors (a "billion laughs" bomb) expand to billions of values, and deep
//! nesting costs stack. The parser enforces a budget while it reads; this module sets that budget explicitly (so a
//! dependency update cannot loosen it) and turns each breach into a message that says what was refused and why.

use serde_saphyr::budget::BudgetBreach;

/// The largest YAML text read, in bytes (16 MiB). Longer text is refused before parsing.
pub const MAX_TEXT_BYTES: usize = 16 * 1024 * 1024;

/// The deepest nesting of mappings and sequences. Real files nest about 10 deep; each level costs the reader stack
/// (some 40 KiB in a debug build), and 32 levels stay well inside a 2 MiB thread stack in any build.
pub const MAX_DEPTH: usize = 32;

/// The most values (scalars, mappings, sequences) one document may hold, each use of an alias counted in full.
pub const MAX_NODES: usize = 250_000;

/// The most values aliases may repeat in one document, all aliases together.
pub const MAX_ALIAS_EXPANSION: usize = 100_000;

/// The parser's budget: the limits above, the parser's own defaults for the rest.
pub(crate) fn budget() -> serde_saphyr::Budget {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.flow_nesting_limit = MAX_DEPTH;
    budget.max_nodes = MAX_NODES;
    budget.max_documents = 1;
    budget
}

/// The parser's limits on replaying aliases.
pub(crate) fn alias_limits() -> serde_saphyr::options::AliasLimits {
    let mut limits = serde_saphyr::options::AliasLimits::default();
    limits.max_total_replayed_events = MAX_ALIAS_EXPANSION;
    limits
}

/// The refusal of a text longer than [`MAX_TEXT_BYTES`].
pub(crate) fn too_long(len: usize) -> String {
    format!(
        "the YAML text is {len} bytes, more than the {} MiB this reader accepts; split it into smaller files",
        MAX_TEXT_BYTES / (1024 * 1024)
    )
}

const ALIAS_BOMB: &str = "aliases (`*name`) repeat anchored content so often that the document would expand \
     beyond what this reader accepts (an alias bomb, or a runaway file); write the values out or use fewer aliases";

/// The message of a parse error: a limit the text broke, in plain words, or the parser's own message.
pub(crate) fn describe(err: &serde_saphyr::Error) -> String {
    use serde_saphyr::Error;
    let at = err
        .location()
        .map(|l| format!("line {} column {}: ", l.line(), l.column()))
        .unwrap_or_default();
    // The parser wraps an error in its source snippet and in the aliases it came through: look at the error itself.
    let mut inner = err;
    while let Error::WithSnippet { error, .. } | Error::AliasError { error, .. } = inner {
        inner = error;
    }
    let too_deep =
        || format!("the YAML nests mappings and sequences more than {MAX_DEPTH} levels deep; flatten the structure");
    let what = match inner {
        Error::ExternalMessage { source, .. }
            if matches!(&**source, serde_saphyr::ExternalMessageSource::Parser(scan)
                if *scan.kind() == serde_saphyr::granit_parser::ErrorKind::RecursionLimitExceeded) =>
        {
            too_deep()
        }
        Error::Budget { breach, .. } => match breach {
            BudgetBreach::Depth { .. } => too_deep(),
            BudgetBreach::Nodes { .. } => format!(
                "the YAML holds more than {MAX_NODES} values (each use of an alias counted in full), more than \
                 this reader accepts; make the file smaller, and if it uses aliases (`*name`), use fewer"
            ),
            BudgetBreach::Documents { .. } => {
                "the text holds more than one YAML document (a `---` line starts a second); keep one".to_owned()
            }
            BudgetBreach::Aliases { .. }
            | BudgetBreach::AliasAnchorRatio { .. }
            | BudgetBreach::RecordedAnchorEvents { .. }
            | BudgetBreach::RecordedAnchorBytes { .. } => ALIAS_BOMB.to_owned(),
            other => format!("the YAML is larger or more complex than this reader accepts ({other:?}); simplify it"),
        },
        Error::AliasReplayLimitExceeded { .. }
        | Error::AliasExpansionLimitExceeded { .. }
        | Error::AliasReplayStackDepthExceeded { .. }
        | Error::AliasReplayCounterOverflow { .. } => ALIAS_BOMB.to_owned(),
        _ => return err.to_string(),
    };
    format!("{at}{what}")
}
