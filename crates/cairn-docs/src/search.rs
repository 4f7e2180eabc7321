//! Ranking sections for a query (§16.3): BM25 (k1 1.2, b 0.75) over every section of every page, with the page
//! title counted twice and the heading one and a half times, plus two ordering rules in front of the score: a section
//! whose heading *is* the query comes first (so a tool name finds its reference entry), then sections containing
//! every query token.
//!
//! Tokens are lower-cased runs of letters, digits and `_`; a run with `_` (an identifier such as `start_workflow`)
//! also yields its parts, so both the identifier and its words match.

use std::collections::{HashMap, HashSet};

use crate::corpus::Page;
use crate::slug::slug;

const K1: f64 = 1.2;
const B: f64 = 0.75;
const TITLE_WEIGHT: f64 = 2.0;
const HEADING_WEIGHT: f64 = 1.5;

/// Words too common to help `ask_docs` (kept when a question has nothing else).
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from",
    "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "should",
    "so", "that", "the", "their", "then", "there", "this", "to", "was", "we", "what", "when",
    "where", "which", "who", "why", "will", "with", "you", "your",
];

/// A token and its byte range in the text it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) text: String,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The tokens of `text`, in order.
pub(crate) fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut run_start: Option<usize> = None;
    let push_run = |start: usize, end: usize, out: &mut Vec<Token>| {
        let run = &text[start..end];
        let whole = run.trim_matches('_');
        if whole.is_empty() {
            return;
        }
        let lead = run.len() - run.trim_start_matches('_').len();
        out.push(Token {
            text: whole.to_lowercase(),
            start: start + lead,
            end: start + lead + whole.len(),
        });
        if whole.contains('_') {
            let mut offset = start + lead;
            for part in whole.split('_') {
                if !part.is_empty() {
                    out.push(Token {
                        text: part.to_lowercase(),
                        start: offset,
                        end: offset + part.len(),
                    });
                }
                offset += part.len() + 1;
            }
        }
    };
    for (i, c) in text.char_indices() {
        let word = c.is_alphanumeric() || c == '_';
        match (word, run_start) {
            (true, None) => run_start = Some(i),
            (false, Some(start)) => {
                push_run(start, i, &mut out);
                run_start = None;
            }
            _ => {}
        }
    }
    if let Some(start) = run_start {
        push_run(start, text.len(), &mut out);
    }
    out
}

/// The distinct query tokens, without stop words when `drop_stop_words` (unless nothing else is left).
pub(crate) fn query_tokens(query: &str, drop_stop_words: bool) -> Vec<String> {
    let mut seen = HashSet::new();
    let all: Vec<String> = tokens(query)
        .into_iter()
        .map(|t| t.text)
        .filter(|t| seen.insert(t.clone()))
        .collect();
    if !drop_stop_words {
        return all;
    }
    let kept: Vec<String> = all
        .iter()
        .filter(|t| !STOP_WORDS.contains(&t.as_str()))
        .cloned()
        .collect();
    if kept.is_empty() { all } else { kept }
}

/// Term counts of one section, per field.
struct Entry {
    page: usize,
    section: usize,
    body: HashMap<String, usize>,
    heading: HashMap<String, usize>,
    title: HashMap<String, usize>,
    length: usize,
    /// The heading as typed, lower-cased, for the exact-heading rule.
    heading_key: Option<String>,
}

/// A ranked section.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hit {
    /// Index of the page.
    pub(crate) page: usize,
    /// Index of the section in the page.
    pub(crate) section: usize,
    /// The BM25 score.
    pub(crate) score: f64,
}

/// The BM25 index over every section of the corpus.
pub(crate) struct Index {
    entries: Vec<Entry>,
    document_frequency: HashMap<String, usize>,
    average_length: f64,
}

fn counts<'a>(tokens: impl Iterator<Item = &'a str>) -> HashMap<String, usize> {
    let mut map = HashMap::new();
    for token in tokens {
        *map.entry(token.to_owned()).or_default() += 1;
    }
    map
}

impl Index {
    /// Indexes every section of `pages`.
    pub(crate) fn new(pages: &[Page]) -> Index {
        let mut entries = Vec::new();
        for (p, page) in pages.iter().enumerate() {
            let title: Vec<Token> = tokens(&page.title);
            for (s, section) in page.sections.iter().enumerate() {
                let body = tokens(&section.plain);
                let heading = tokens(section.heading_text.as_deref().unwrap_or(""));
                entries.push(Entry {
                    page: p,
                    section: s,
                    length: body.len() + heading.len() + title.len(),
                    body: counts(body.iter().map(|t| t.text.as_str())),
                    heading: counts(heading.iter().map(|t| t.text.as_str())),
                    title: counts(title.iter().map(|t| t.text.as_str())),
                    heading_key: section.heading_text.as_deref().map(normalize),
                });
            }
        }
        let mut document_frequency: HashMap<String, usize> = HashMap::new();
        for entry in &entries {
            let terms: HashSet<&String> = entry
                .body
                .keys()
                .chain(entry.heading.keys())
                .chain(entry.title.keys())
                .collect();
            for term in terms {
                *document_frequency.entry(term.clone()).or_default() += 1;
            }
        }
        let average_length = if entries.is_empty() {
            1.0
        } else {
            entries.iter().map(|e| e.length as f64).sum::<f64>() / entries.len() as f64
        };
        Index {
            entries,
            document_frequency,
            average_length: average_length.max(1.0),
        }
    }

    /// Sections with a positive score for `terms`, best first; `query` is the text as typed (exact-heading rule).
    pub(crate) fn rank(&self, query: &str, terms: &[String]) -> Vec<Hit> {
        let n = self.entries.len() as f64;
        let key = normalize(query);
        let query_slug = slug(query.trim());
        let mut ranked: Vec<(bool, bool, Hit)> = Vec::new();
        for entry in &self.entries {
            let mut score = 0.0;
            let mut all = true;
            for term in terms {
                let tf = *entry.body.get(term).unwrap_or(&0) as f64
                    + HEADING_WEIGHT * *entry.heading.get(term).unwrap_or(&0) as f64
                    + TITLE_WEIGHT * *entry.title.get(term).unwrap_or(&0) as f64;
                if tf == 0.0 {
                    all = false;
                    continue;
                }
                let df = *self.document_frequency.get(term).unwrap_or(&0) as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                let norm = 1.0 - B + B * entry.length as f64 / self.average_length;
                score += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
            if score <= 0.0 {
                continue;
            }
            let exact = entry
                .heading_key
                .as_deref()
                .is_some_and(|h| h == key || slug(h) == query_slug);
            ranked.push((
                exact,
                all,
                Hit {
                    page: entry.page,
                    section: entry.section,
                    score,
                },
            ));
        }
        ranked.sort_by(|a, b| {
            (b.0, b.1)
                .cmp(&(a.0, a.1))
                .then(b.2.score.total_cmp(&a.2.score))
                .then((a.2.page, a.2.section).cmp(&(b.2.page, b.2.section)))
        });
        ranked.into_iter().map(|(_, _, hit)| hit).collect()
    }
}

/// A heading or query compared as text: lower-case, trimmed, without backticks.
fn normalize(text: &str) -> String {
    text.replace('`', "").trim().to_lowercase()
}

/// Up to `radius` characters either side of the first query token in `text`, cut at word boundaries and marked with
/// `…`; the start of the text when no token occurs in it.
pub(crate) fn snippet(text: &str, terms: &[String], radius: usize) -> String {
    let found = tokens(text).into_iter().find(|t| terms.contains(&t.text));
    let (start, end) = found.map_or((0, 0), |t| (t.start, t.end));
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let first = chars
        .iter()
        .position(|(i, _)| *i >= start)
        .unwrap_or(chars.len());
    let last = chars
        .iter()
        .position(|(i, _)| *i >= end)
        .unwrap_or(chars.len());
    let mut from = first.saturating_sub(radius);
    let mut to = (last + radius).min(chars.len());
    if from > 0 {
        while from < first && !chars[from - 1].1.is_whitespace() {
            from += 1;
        }
    }
    if to < chars.len() {
        while to > last && !chars[to].1.is_whitespace() {
            to -= 1;
        }
    }
    let body: String = chars[from..to].iter().map(|(_, c)| *c).collect();
    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "{}{}{}",
        if from > 0 { "…" } else { "" },
        body,
        if to < chars.len() { "…" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        tokens(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn identifiers_yield_themselves_and_their_words() {
        assert_eq!(
            texts("Call start_workflow, then Advance!"),
            [
                "call",
                "start_workflow",
                "start",
                "workflow",
                "then",
                "advance"
            ]
        );
        assert_eq!(texts("__init__ x"), ["init", "x"]);
        assert_eq!(texts("Über-cool 42"), ["über", "cool", "42"]);
        let t = &tokens("a start_workflow")[1];
        assert_eq!((t.start, t.end), (2, 16));
        assert_eq!(
            query_tokens("How do I test the the workflow?", true),
            ["test", "workflow"]
        );
        assert_eq!(query_tokens("what is it", true), ["what", "is", "it"]);
    }

    #[test]
    fn snippets_cut_at_words() {
        let text = "one two three four five six seven eight nine ten eleven twelve";
        assert_eq!(snippet(text, &["six".into()], 10), "…four five six seven…");
        assert_eq!(snippet(text, &["one".into()], 8), "one two…");
        assert_eq!(snippet("short text", &["nothing".into()], 80), "short text");
    }
}
