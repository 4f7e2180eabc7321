//! YAML documents as JSON values, with the line and column of every node.
//!
//! cairn's YAML files (job.yml, `.deepreview`, DeepSchemas, workflows) are validated with JSON Schemas, so they are read
//! into `serde_json::Value` (map order kept). The positions are kept beside the value, keyed by JSON pointer, so a
//! schema error can say where in the file it is. Scalars are read as PyYAML (YAML 1.1) reads them: `yes`/`no`/`on`/
//! `off` are booleans, `y`/`n` are not, `0755` is octal, and a repeated key keeps its last value — unless the caller
//! asks for [`DuplicateKeys::Error`] (a format of cairn's own, where a repeated key is a mistake to report).
//!
//! Every text is read under the [`limits`] (size, nesting depth, values, alias expansion), so a hostile file is refused
//! quickly with a message saying which limit it broke, whoever the caller is.

mod limits;

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::Spanned;

/// A parsed YAML document: its value and where each node starts.
#[derive(Debug)]
pub struct Document {
    /// The document as a JSON value.
    pub value: Value,
    positions: HashMap<String, (u64, u64)>,
    /// The source words of the values read as a boolean or null (`no`, `On`, `~`), by JSON pointer (strict reading).
    words: HashMap<String, String>,
}

impl Document {
    /// `(line, column)`, both 1-based, of the node at a JSON pointer (`""` is the root, `/a/0/b` a nested node).
    pub fn position(&self, pointer: &str) -> Option<(u64, u64)> {
        let mut pointer = pointer;
        loop {
            if let Some(found) = self.positions.get(pointer) {
                return Some(*found);
            }
            // A missing key (e.g. a required property) has no position of its own: use its parent's.
            pointer = &pointer[..pointer.rfind('/')?];
        }
    }

    /// The word written for the value at a JSON pointer when YAML read it as a boolean or null (`no`, `off`, `~`):
    /// a value meant as text needs quotes. Kept only by a strict reading ([`Options::strict_keys`]).
    pub fn word_at(&self, pointer: &str) -> Option<&str> {
        self.words.get(pointer).map(String::as_str)
    }
}

pub use limits::{MAX_ALIAS_EXPANSION, MAX_DEPTH, MAX_NODES, MAX_TEXT_BYTES};

/// What a repeated key in one mapping means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DuplicateKeys {
    /// The last value wins, its key keeping the first one's place (PyYAML's reading).
    #[default]
    LastWins,
    /// An error naming the key and the lines of both occurrences.
    Error,
}

/// What a key YAML reads as a boolean or null (`true:`, `on:`, `no:`, `~:`) means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WordKeys {
    /// The key PyYAML makes of it: `True`, `False`, `None`.
    #[default]
    PyYaml,
    /// An error naming the key and its line, with the quoting that makes it the text written.
    Error,
}

/// How [`parse_with`] reads a text; the default is [`parse`]'s PyYAML reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// What a repeated key means.
    pub duplicate_keys: DuplicateKeys,
    /// What a key read as a boolean or null means.
    pub word_keys: WordKeys,
}

impl Options {
    /// PyYAML's reading, except that a repeated key, or a key YAML reads as a boolean or null, is an error: for
    /// formats of cairn's own, whose keys are always text.
    pub fn strict_keys() -> Self {
        Options { duplicate_keys: DuplicateKeys::Error, word_keys: WordKeys::Error }
    }
}

/// Parses YAML text the way PyYAML reads it. The error message says what is wrong and at which line and column.
pub fn parse(text: &str) -> Result<Document, String> {
    parse_with(text, Options::default())
}

/// Parses YAML text with `options`. The error message says what is wrong and at which line and column.
pub fn parse_with(text: &str, options: Options) -> Result<Document, String> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(limits::too_long(text.len()));
    }
    // PyYAML compatibility: 0755-style octals. Repeated keys reach `flatten`, which applies `options`.
    let parser = serde_saphyr::options! {
        legacy_octal_numbers: true,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        budget: Some(limits::budget()),
        alias_limits: limits::alias_limits(),
    };
    let root: Option<Spanned<Node>> =
        serde_saphyr::from_str_with_options(text, parser).map_err(|err| limits::describe(&err))?;
    let mut reader = Reader { text, options, positions: HashMap::new(), words: HashMap::new() };
    let value = match root {
        Some(node) => reader.flatten(node, String::new())?,
        None => Value::Null,
    };
    Ok(Document { value, positions: reader.positions, words: reader.words })
}

/// The source text of a scalar node, when the parser knows its byte span.
fn source_text<'t>(location: &serde_saphyr::Location, text: &'t str) -> Option<&'t str> {
    let span = location.span();
    let start = usize::try_from(span.byte_offset()?).ok()?;
    let len = usize::try_from(span.byte_len()?).ok()?;
    text.get(start..start + len)
}

/// A YAML node whose children remember their positions.
enum Node {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<Node>, Spanned<Node>)>),
}

/// Turns nodes into values, noting positions.
struct Reader<'t> {
    text: &'t str,
    options: Options,
    positions: HashMap<String, (u64, u64)>,
    words: HashMap<String, String>,
}

impl Reader<'_> {
    fn flatten(&mut self, node: Spanned<Node>, pointer: String) -> Result<Value, String> {
        let at = (node.referenced.line(), node.referenced.column());
        self.positions.insert(pointer.clone(), at);
        Ok(match node.value {
            Node::Seq(items) => {
                let mut values = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    values.push(self.flatten(item, format!("{pointer}/{i}"))?);
                }
                Value::Array(values)
            }
            Node::Map(entries) => {
                let mut map = Map::new();
                let mut seen: HashMap<String, (u64, u64)> = HashMap::new();
                for (key, item) in entries {
                    let key_at = (key.referenced.line(), key.referenced.column());
                    let key_value = scalar(key.value, &key.referenced, self.text);
                    if self.options.word_keys == WordKeys::Error && (key_value.is_boolean() || key_value.is_null()) {
                        return Err(word_key(&key_value, source_text(&key.referenced, self.text), key_at));
                    }
                    let key = key_text(key_value);
                    if let Some((line, column)) = seen.insert(key.clone(), key_at)
                        && self.options.duplicate_keys == DuplicateKeys::Error
                    {
                        return Err(format!(
                            "line {} column {}: the key '{key}' appears twice in one mapping (first at line {line} \
                             column {column}, again at line {} column {}); keep one of them",
                            key_at.0, key_at.1, key_at.0, key_at.1
                        ));
                    }
                    // Otherwise the last value wins, in the first one's place, as in PyYAML.
                    let child = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                    let value = self.flatten(item, child)?;
                    map.insert(key, value);
                }
                Value::Object(map)
            }
            value => {
                let value = scalar(value, &node.referenced, self.text);
                if self.options.word_keys == WordKeys::Error
                    && (value.is_boolean() || value.is_null())
                    && let Some(word) = source_text(&node.referenced, self.text)
                {
                    self.words.insert(pointer, word.to_owned());
                }
                value
            }
        })
    }
}

/// The error for a key YAML read as `value` (a boolean or null), written `word` at `at`.
fn word_key(value: &Value, word: Option<&str>, (line, column): (u64, u64)) -> String {
    let read = match value {
        Value::Bool(b) => format!("the boolean {b}"),
        _ => "null".to_owned(),
    };
    let written = value.to_string();
    let word = word.unwrap_or(&written);
    format!(
        "line {line} column {column}: the key `{word}` is read by YAML as {read}, not as the text '{word}'; put it in \
         quotes: `\"{word}\":`"
    )
}

/// The value of a scalar node found at `at` (keys are scalars too: the visitor refuses collection keys).
fn scalar(node: Node, at: &serde_saphyr::Location, text: &str) -> Value {
    match node {
        Node::Null => Value::Null,
        Node::Bool(b) => match source_text(at, text) {
            // YAML 1.1 as PyYAML reads it: `y` and `n` are strings, not booleans.
            Some(word @ ("y" | "Y" | "n" | "N")) => Value::String(word.to_owned()),
            _ => Value::Bool(b),
        },
        Node::Number(n) => Value::Number(n),
        Node::String(s) => Value::String(s),
        Node::Seq(_) | Node::Map(_) => unreachable!("collections are flattened by the reader"),
    }
}

/// A scalar key as the JSON key it becomes (PyYAML's spelling of booleans and null).
fn key_text(key: Value) -> String {
    match key {
        Value::String(s) => s,
        Value::Bool(b) => if b { "True".into() } else { "False".into() },
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Number::from_f64(v).map(Node::Number).ok_or_else(|| E::custom("a number that is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<Node>>()? {
            if matches!(key.value, Node::Seq(_) | Node::Map(_)) {
                return Err(de::Error::custom("a mapping key must be a scalar"));
            }
            entries.push((key, map.next_value::<Spanned<Node>>()?));
        }
        Ok(Node::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_positions() {
        let doc = parse("b: 1\na:\n  - x\n  - {c: yes, d: y, e: N, y: 2, 3: z, b: 0}\nb: 4\n").unwrap();
        assert_eq!(
            serde_json::to_string(&doc.value).unwrap(),
            r#"{"b":4,"a":["x",{"c":true,"d":"y","e":"N","y":2,"3":"z","b":0}]}"#
        );
        assert_eq!(doc.position("/a/0"), Some((3, 5)));
        assert_eq!(doc.position("/a/1/missing").map(|p| p.0), Some(4));
    }

    #[test]
    fn empty_document_is_null_and_syntax_errors_have_a_line() {
        assert_eq!(parse("").unwrap().value, Value::Null);
        let err = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(err.contains("line"), "{err}");
    }

    #[test]
    fn a_repeated_key_is_an_error_with_both_lines_when_asked() {
        let text = "name: w\ndescription: one\nnodes:\n  a: {x: 1, x: 2}\ndescription: two\n";
        let err = parse_with(text, Options::strict_keys()).unwrap_err();
        assert!(err.contains("'x'") && err.contains("line 4"), "{err}");
        let err = parse_with("name: w\ndescription: one\ndescription: two\n", Options::strict_keys())
            .unwrap_err();
        assert!(err.starts_with("line 3 column 1: "), "{err}");
        assert!(err.contains("'description'") && err.contains("first at line 2 column 1"), "{err}");
        // The same text read the PyYAML way keeps the last value.
        assert_eq!(parse("description: one\ndescription: two\n").unwrap().value["description"], "two");
        // A merge key is not a repetition, nor are equal keys in different mappings.
        let merged = "base: &b {a: 1, b: 2}\nuse:\n  <<: *b\n  a: 3\nother: {a: 1}\n";
        let doc = parse_with(merged, Options::strict_keys()).unwrap();
        assert_eq!(doc.value["use"], serde_json::json!({"a": 3, "b": 2}));
    }

    #[test]
    fn a_key_read_as_a_boolean_or_null_is_an_error_with_the_quoting_when_asked() {
        let text = "nodes:\n  a:\n    transitions:\n      true: b\n";
        let err = parse_with(text, Options::strict_keys()).unwrap_err();
        assert_eq!(
            err,
            "line 4 column 7: the key `true` is read by YAML as the boolean true, not as the text 'true'; put it in \
             quotes: `\"true\":`"
        );
        let err = parse_with("on: push\n", Options::strict_keys()).unwrap_err();
        assert!(err.contains("the key `on` is read by YAML as the boolean true") && err.contains("`\"on\":`"), "{err}");
        let err = parse_with("~: x\n", Options::strict_keys()).unwrap_err();
        assert!(err.contains("the key `~` is read by YAML as null"), "{err}");
        for fine in ["\"true\": b\n", "'on': x\n", "y: 1\n", "1: x\n"] {
            assert!(parse_with(fine, Options::strict_keys()).is_ok(), "{fine}");
        }
        // Read the PyYAML way, the same keys are spelt as Python prints them.
        assert_eq!(parse("true: b\nno: c\n").unwrap().value, serde_json::json!({"True": "b", "False": "c"}));
    }

    #[test]
    fn the_words_read_as_booleans_or_null_are_kept_by_pointer() {
        let doc = parse_with("a: no\nb: 'no'\nc: [On, ~, null]\nd: false\ne: 0\n", Options::strict_keys()).unwrap();
        assert_eq!(doc.value["a"], false);
        assert_eq!(doc.word_at("/a"), Some("no"));
        assert_eq!(doc.word_at("/b"), None, "quoted: text");
        assert_eq!(doc.word_at("/c/0"), Some("On"));
        assert_eq!(doc.word_at("/c/1"), Some("~"));
        assert_eq!(doc.word_at("/c/2"), Some("null"));
        assert_eq!(doc.word_at("/d"), Some("false"));
        assert_eq!(doc.word_at("/e"), None);
        assert_eq!(parse("a: no\n").unwrap().word_at("/a"), None, "the PyYAML reading keeps no words");
    }

    /// Hostile texts each caller could be handed: every one is refused with a message naming the limit.
    #[test]
    fn hostile_texts_are_refused_quickly_with_a_clear_error() {
        let mut laughs = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for pair in names.windows(2) {
            let refs = vec![format!("*{}", pair[0]); 9].join(", ");
            laughs.push_str(&format!("{}: &{} [{refs}]\n", pair[1], pair[1]));
        }
        let mut spread = String::from("a: &a x\nb: [");
        spread.push_str(&"*a, ".repeat(40_000));
        spread.push_str("]\n");
        let mut block = String::new();
        for depth in 0..200 {
            block.push_str(&" ".repeat(depth));
            block.push_str("a:\n");
        }
        let many: String = (0..300_000).map(|i| format!("k{i}: v\n")).collect();
        let cases = [
            ("billion laughs", laughs, "alias"),
            ("one anchor used 40,000 times", spread, "alias"),
            ("deep block nesting", block, "levels deep"),
            ("deep flow nesting", format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)), "deep"),
            ("too many values", many, "values"),
            ("50 MB", format!("a: \"{}\"\n", "x".repeat(50 * 1024 * 1024)), "MiB"),
            ("two documents", "a: 1\n---\nb: 2\n".to_owned(), "more than one YAML document"),
        ];
        for (what, text, says) in cases {
            let started = std::time::Instant::now();
            let err = parse(&text).unwrap_err();
            assert!(err.contains(says), "{what}: {err}");
            assert!(err.len() < 1000, "{what}: the message is short: {err}");
            assert!(started.elapsed() < std::time::Duration::from_secs(30), "{what}: took {:?}", started.elapsed());
        }
    }
}
