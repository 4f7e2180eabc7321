//! What a row's state cell claims (§6.5): the cell normalized (trimmed, lower-case, whitespace collapsed, a trailing
//! `:` and any emoji or punctuation at either end removed) and mapped onto implemented / merged / partial / planned.
//! An exact spelling wins; otherwise the longest known spelling the text starts with, followed by a non-letter
//! (`Implemented (v2)` is implemented).

/// A claimed (or shown) state, ordered planned < partial < merged < implemented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Planned,
    Partial,
    Merged,
    Implemented,
}

impl Level {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Level::Planned => "planned",
            Level::Partial => "partial",
            Level::Merged => "merged",
            Level::Implemented => "implemented",
        }
    }
}

const SPELLINGS: [(Level, &[&str]); 4] = [
    (
        Level::Implemented,
        &["implemented", "done", "complete", "completed", "live", "shipped", "deployed", "released", "in production", "rolled out"],
    ),
    (Level::Merged, &["merged", "landed", "code complete"]),
    (
        Level::Partial,
        &["partial", "partially implemented", "partly done", "in progress", "in-progress", "wip", "started", "ongoing"],
    ),
    (Level::Planned, &["planned", "todo", "to do", "not started", "proposed", "backlog", "next", "later", "future"]),
];

/// A header or state cell normalized for comparison.
pub(crate) fn normalize(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    text.trim_end_matches(':').trim().to_owned()
}

/// The level a state cell claims, or `None` when it is not a known state.
pub(crate) fn claimed(cell: &str) -> Option<Level> {
    let text = normalize(cell);
    let text = text.trim_matches(|c: char| !c.is_alphanumeric());
    let mut best: Option<(usize, Level)> = None;
    for (level, spellings) in SPELLINGS {
        for spelling in spellings {
            if text == *spelling {
                return Some(level);
            }
            let starts = text.strip_prefix(spelling).is_some_and(|rest| !rest.starts_with(char::is_alphabetic));
            if starts && best.is_none_or(|(len, _)| spelling.len() > len) {
                best = Some((spelling.len(), level));
            }
        }
    }
    best.map(|(_, level)| level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_emoji_and_prefixes() {
        assert_eq!(claimed("✅ Implemented"), Some(Level::Implemented));
        assert_eq!(claimed("Implemented (v2)"), Some(Level::Implemented));
        assert_eq!(claimed("  In   Progress: "), Some(Level::Partial));
        assert_eq!(claimed("Partially implemented"), Some(Level::Partial));
        assert_eq!(claimed("code complete"), Some(Level::Merged));
        assert_eq!(claimed("Not started"), Some(Level::Planned));
        assert_eq!(claimed("nextgen"), None);
        assert_eq!(claimed("maybe"), None);
    }
}
