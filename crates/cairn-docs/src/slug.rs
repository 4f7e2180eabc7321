//! Heading ids as GitHub and rehype-slug make them (github-slugger): the id is the heading's plain text, lower-cased,
//! without punctuation, symbols, control and format characters (Unicode-aware), with each space turned into `-`.
//! Letters, marks, decimal and letter numbers, `_` and `-` stay. A repeated id on one page gets `-1`, `-2`, ….
//!
//! The character classes come from the `regex` crate's Unicode tables, which may be newer than the slugger's; the
//! only difference is for characters assigned since, which GitHub would drop and cairn keeps.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

/// What the slugger removes: other numbers, punctuation except `_` (and the plain `-`), symbols, control, private-use,
/// format and unassigned characters, separators except the plain space — unless the character is alphabetic.
static REMOVED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"[\p{No}\p{Pd}\p{Ps}\p{Pe}\p{Pi}\p{Pf}\p{Po}\p{S}\p{Cc}\p{Co}\p{Cf}\p{Cn}\p{Z}&&[^\p{Alphabetic}\x20\-]]",
    )
    .expect("the slug pattern compiles")
});

/// The id of one heading text, without de-duplication.
pub fn slug(text: &str) -> String {
    REMOVED
        .replace_all(&text.to_lowercase(), "")
        .replace(' ', "-")
}

/// Ids for the headings of one page, in order: a repeat of an earlier id gets the next free `-<n>` suffix.
#[derive(Clone, Debug, Default)]
pub struct Slugger {
    occurrences: HashMap<String, usize>,
}

impl Slugger {
    /// The id of the next heading with this text.
    pub fn slug(&mut self, text: &str) -> String {
        let base = slug(text);
        let mut id = base.clone();
        while self.occurrences.contains_key(&id) {
            let count = self.occurrences.entry(base.clone()).or_default();
            *count += 1;
            id = format!("{base}-{count}");
        }
        self.occurrences.insert(id.clone(), 0);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_slugs_like_github() {
        for (text, id) in [
            ("Hello World", "hello-world"),
            ("start_workflow", "start_workflow"),
            ("What's new in v1.2?", "whats-new-in-v12"),
            ("C++ & Rust: a fast guide!", "c--rust-a-fast-guide"),
            ("Привет non-latin 你好", "привет-non-latin-你好"),
            ("😄 emoji", "-emoji"),
            ("Über café", "über-café"),
            ("$ROSCOE_WORKFLOW_DIR", "roscoe_workflow_dir"),
            ("Node types → map", "node-types--map"),
            ("½ cup", "-cup"),
            ("Ⓐ circled", "ⓐ-circled"),
            ("a—b – c", "ab--c"),
            ("«quoted» “text”", "quoted-text"),
            ("Fish & Chips", "fish--chips"),
            ("ΣΑΣ", "σας"),
            ("zero\u{200b}width", "zerowidth"),
            ("non\u{a0}breaking", "nonbreaking"),
            ("a  b", "a--b"),
            ("-leading-", "-leading-"),
        ] {
            assert_eq!(slug(text), id, "{text:?}");
        }
    }

    #[test]
    fn repeats_get_numbered_suffixes() {
        let mut slugger = Slugger::default();
        let ids: Vec<String> = [
            "Example",
            "Example",
            "example",
            "Example 1",
            "Example-1",
            "Example",
        ]
        .iter()
        .map(|t| slugger.slug(t))
        .collect();
        assert_eq!(
            ids,
            [
                "example",
                "example-1",
                "example-2",
                "example-1-1",
                "example-1-2",
                "example-3"
            ]
        );
    }
}
