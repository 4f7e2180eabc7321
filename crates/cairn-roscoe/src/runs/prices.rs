//! The prices cairn ships for Claude models, used for every model `roscoe.yaml`'s `pricing` does not name.
//!
//! USD per million tokens: input, output, 5-minute cache writes and cache reads, as Anthropic's pricing page
//! (platform.claude.com/docs/en/about-claude/pricing) listed them on 2026-12-02. Prices change: a `pricing` entry in
//! `roscoe.yaml` replaces the built-in one of its model (docs/roscoe/reference/roscoe-yaml.md shows this table).

use std::collections::BTreeMap;

use crate::engine::Price;

/// Model id, input, output, cache write, cache read.
const CLAUDE: &[(&str, f64, f64, f64, f64)] = &[
    ("claude-opus-5", 5.0, 25.0, 6.25, 0.50),
    ("claude-opus-4-8", 5.0, 25.0, 6.25, 0.50),
    ("claude-opus-4-7", 5.0, 25.0, 6.25, 0.50),
    ("claude-opus-4-6", 5.0, 25.0, 6.25, 0.50),
    ("claude-opus-4-5", 5.0, 25.0, 6.25, 0.50),
    ("claude-opus-4-1", 15.0, 75.0, 18.75, 1.50),
    ("claude-opus-4-0", 15.0, 75.0, 18.75, 1.50),
    ("claude-sonnet-4-5", 3.0, 15.0, 3.75, 0.30),
    ("claude-sonnet-4-0", 3.0, 15.0, 3.75, 0.30),
    ("claude-haiku-4-5", 1.0, 5.0, 1.25, 0.10),
    ("claude-3-5-haiku-latest", 0.80, 4.0, 1.0, 0.08),
];

/// The built-in prices by model id.
pub(crate) fn builtin() -> BTreeMap<String, Price> {
    CLAUDE
        .iter()
        .map(|&(model, input, output, write, read)| {
            (model.to_owned(), Price { input, output, cache_read: Some(read), cache_write: Some(write) })
        })
        .collect()
}
