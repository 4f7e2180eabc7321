//! YAML documents as JSON values, with the line and column of every node.
//!
//! cairn's YAML files (job.yml, `.deepreview`, DeepSchemas, workflows) are validated with JSON Schemas, so they are read
//! into `serde_json::Value` (map order kept). The positions are kept beside the value, keyed by JSON pointer, so a
//! schema error can say where in the file it is. Scalars are read as PyYAML (YAML 1.1) reads them: `yes`/`no`/`on`/
//! `off` are booleans, `y`/`n` are not, `0755` is octal, and a repeated key keeps its last value.

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
}

/// Parses YAML text. The error message says what is wrong and at which line and column.
pub fn parse(text: &str) -> Result<Document, String> {
    // PyYAML compatibility: 0755-style octals, and a repeated key keeps its last value.
    let options = serde_saphyr::options! {
        legacy_octal_numbers: true,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
        budget: serde_saphyr::budget! { max_depth: 32 },
    };
    let root: Option<Spanned<Node>> =
        serde_saphyr::from_str_with_options(text, options).map_err(|err| err.to_string())?;
    let mut positions = HashMap::new();
    let value = match root {
        Some(node) => flatten(node, String::new(), text, &mut positions),
        None => Value::Null,
    };
    Ok(Document { value, positions })
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

fn flatten(node: Spanned<Node>, pointer: String, text: &str, positions: &mut HashMap<String, (u64, u64)>) -> Value {
    positions.insert(pointer.clone(), (node.referenced.line(), node.referenced.column()));
    match node.value {
        Node::Null => Value::Null,
        Node::Bool(b) => match source_text(&node.referenced, text) {
            // YAML 1.1 as PyYAML reads it: `y` and `n` are strings, not booleans.
            Some(word @ ("y" | "Y" | "n" | "N")) => Value::String(word.to_owned()),
            _ => Value::Bool(b),
        },
        Node::Number(n) => Value::Number(n),
        Node::String(s) => Value::String(s),
        Node::Seq(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| flatten(item, format!("{pointer}/{i}"), text, positions))
                .collect(),
        ),
        Node::Map(entries) => {
            let mut map = Map::new();
            for (key, item) in entries {
                let key = match flatten(key, String::from("#key"), text, &mut HashMap::new()) {
                    Value::String(s) => s,
                    Value::Bool(b) => if b { "True".into() } else { "False".into() },
                    Value::Null => "None".into(),
                    other => other.to_string(),
                };
                // Duplicate keys: the last one wins, as in PyYAML.
                let child = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                let value = flatten(item, child, text, positions);
                map.insert(key, value);
            }
            Value::Object(map)
        }
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
}
