//! Templates: `{{ node.field || "default" }}` (§4.4) — parsing, references and rendering.
//!
//! Grammar: text with `{{ expr }}` holes, where `expr := ref ("||" (ref | "json string"))*`,
//! `ref := root ("." (identifier | index))*`, and `\{{` is a literal `{{`. Parsing yields the references the
//! dominance check needs; rendering reads a JSON object mapping each root (`input`, `run`, node ids, …) to its
//! value. Rendering does not shell-quote: callers that build commands quote each hole's text themselves.

use std::fmt;

use serde_json::Value;

use crate::unquoted::unquoted;

/// A parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// Text and holes, in order.
    pub parts: Vec<Part>,
}

/// A piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Literal text (with `\{{` already turned into `{{`).
    Text(String),
    /// A `{{ … }}` hole.
    Hole(Expr),
}

/// A fallback chain `a || b || "x"`: the first operand with a non-empty value wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    /// The operands, left to right; never empty.
    pub operands: Vec<Operand>,
}

/// One operand of a fallback chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A reference.
    Ref(Reference),
    /// A string literal.
    Literal(String),
}

/// A reference `root.a.0.b`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reference {
    /// A node id or a reserved root (`input`, `run`, `item`, `index`, `results`).
    pub root: String,
    /// Fields and array indexes after the root.
    pub path: Vec<Segment>,
}

/// One step of a reference path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// An object field.
    Field(String),
    /// An array index.
    Index(usize),
}

/// A reference as it occurs in a template, with whether a later operand can stand in for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Use<'t> {
    /// The reference.
    pub reference: &'t Reference,
    /// `true` when an operand follows it in its chain (`{{ a.x || "none" }}`), so a missing value is covered.
    pub has_fallback: bool,
}

/// A template that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset of the problem in the template text.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

/// The result of rendering a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The text.
    pub text: String,
    /// References whose root exists but whose field does not (rendered as empty text).
    pub warnings: Vec<String>,
}

/// A hole whose root is absent from the context and has no fallback (`template_unresolved`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    /// The reference, as written.
    pub reference: String,
}

impl Template {
    /// Parses template text.
    pub fn parse(text: &str) -> Result<Template, ParseError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        let mut offset = 0;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("\\{{") {
                literal.push_str("{{");
                offset += 3;
                rest = after;
            } else if let Some(after) = rest.strip_prefix("{{") {
                let close = find_close(after).ok_or_else(|| ParseError {
                    offset,
                    message: "'{{' is never closed with '}}'".into(),
                })?;
                let expr = parse_expr(&after[..close], offset + 2)?;
                if !literal.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut literal)));
                }
                parts.push(Part::Hole(expr));
                offset += 2 + close + 2;
                rest = &after[close + 2..];
            } else {
                let ch = rest.chars().next().expect("rest is not empty");
                literal.push(ch);
                offset += ch.len_utf8();
                rest = &rest[ch.len_utf8()..];
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Ok(Template { parts })
    }

    /// Every reference, with whether it has a fallback, in order.
    pub fn uses(&self) -> Vec<Use<'_>> {
        let mut uses = Vec::new();
        for part in &self.parts {
            if let Part::Hole(expr) = part {
                let last = expr.operands.len() - 1;
                for (i, operand) in expr.operands.iter().enumerate() {
                    if let Operand::Ref(reference) = operand {
                        uses.push(Use {
                            reference,
                            has_fallback: i < last,
                        });
                    }
                }
            }
        }
        uses
    }

    /// Renders against `context`, a JSON object mapping roots (`input`, `run`, node ids, …) to values.
    ///
    /// Strings render verbatim, numbers and booleans as JSON, objects and arrays as pretty JSON; a bare node
    /// reference renders its `text` field when it has one. Fallbacks skip missing, null and empty values.
    pub fn render(&self, context: &Value) -> Result<Rendered, Unresolved> {
        let mut rendered = Rendered {
            text: String::new(),
            warnings: Vec::new(),
        };
        for part in &self.parts {
            match part {
                Part::Text(text) => rendered.text.push_str(text),
                Part::Hole(expr) => {
                    rendered
                        .text
                        .push_str(&render_hole(expr, context, &mut rendered.warnings)?)
                }
            }
        }
        Ok(rendered)
    }
}

fn render_hole(
    expr: &Expr,
    context: &Value,
    warnings: &mut Vec<String>,
) -> Result<String, Unresolved> {
    let last = expr.operands.len() - 1;
    for (i, operand) in expr.operands.iter().enumerate() {
        let reference = match operand {
            Operand::Literal(text) => return Ok(text.clone()),
            Operand::Ref(reference) => reference,
        };
        match lookup(reference, context) {
            Lookup::Found(value) if !is_empty(value) => return Ok(to_text(value)),
            Lookup::NoRoot if i == last => {
                return Err(Unresolved {
                    reference: reference.to_string(),
                });
            }
            Lookup::NoField if i == last => {
                warnings.push(format!(
                    "'{reference}' has no value; rendered as empty text"
                ));
                return Ok(String::new());
            }
            _ => {}
        }
    }
    Ok(String::new())
}

enum Lookup<'v> {
    Found(&'v Value),
    NoRoot,
    NoField,
}

fn lookup<'v>(reference: &Reference, context: &'v Value) -> Lookup<'v> {
    let Some(mut value) = context.get(&reference.root) else {
        return Lookup::NoRoot;
    };
    if reference.path.is_empty() {
        // A bare node reference renders the node's primary text when it has one.
        if let Some(text) = value
            .get("text")
            .filter(|_| is_node_output(&reference.root))
        {
            return Lookup::Found(text);
        }
    }
    for segment in &reference.path {
        let next = match segment {
            Segment::Field(name) => value.get(name),
            Segment::Index(i) => value.get(*i),
        };
        match next {
            Some(v) => value = v,
            None => return Lookup::NoField,
        }
    }
    Lookup::Found(value)
}

fn is_node_output(root: &str) -> bool {
    !matches!(root, "input" | "run" | "item" | "index" | "results")
}

fn is_empty(value: &Value) -> bool {
    matches!(value, Value::Null) || value.as_str() == Some("")
}

fn to_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => {
            serde_json::to_string_pretty(value).unwrap_or_default()
        }
        other => other.to_string(),
    }
}

/// Byte offset of the `}}` closing a hole, skipping `}}` inside string literals.
fn find_close(after: &str) -> Option<usize> {
    let bytes = after.as_bytes();
    unquoted(after).find(|&(i, b)| b == b'}' && bytes.get(i + 1) == Some(&b'}')).map(|(i, _)| i)
}

/// Parses the inside of `{{ … }}`; `base` is its byte offset in the template.
fn parse_expr(inner: &str, base: usize) -> Result<Expr, ParseError> {
    let mut p = Cursor {
        text: inner,
        pos: 0,
        base,
    };
    let mut operands = Vec::new();
    loop {
        p.skip_ws();
        operands.push(p.operand()?);
        p.skip_ws();
        if p.pos == inner.len() {
            break;
        }
        if !p.eat("||") {
            return Err(p.error(format!("expected '||' or '}}}}', found '{}'", p.rest())));
        }
    }
    Ok(Expr { operands })
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    base: usize,
}

impl Cursor<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn error(&self, message: String) -> ParseError {
        ParseError {
            offset: self.base + self.pos,
            message,
        }
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn operand(&mut self) -> Result<Operand, ParseError> {
        if self.rest().starts_with('"') {
            return self.string().map(Operand::Literal);
        }
        let root = self.identifier().ok_or_else(|| {
            if self.rest().is_empty() {
                self.error("empty '{{ }}': write a reference such as {{ node.field }}".into())
            } else {
                self.error(format!(
                    "expected a reference or a \"string\", found '{}'",
                    self.rest()
                ))
            }
        })?;
        let mut path = Vec::new();
        while self.eat(".") {
            let digits: String = self
                .rest()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if !digits.is_empty() {
                self.pos += digits.len();
                let index = digits
                    .parse()
                    .map_err(|_| self.error(format!("index '{digits}' is too large")))?;
                path.push(Segment::Index(index));
            } else {
                let field = self
                    .identifier()
                    .ok_or_else(|| self.error("expected a field name after '.'".into()))?;
                path.push(Segment::Field(field));
            }
        }
        Ok(Operand::Ref(Reference { root, path }))
    }

    fn identifier(&mut self) -> Option<String> {
        let text = self.text;
        let rest = &text[self.pos..];
        let mut chars = rest.char_indices();
        match chars.next() {
            Some((_, c)) if c.is_ascii_alphabetic() || c == '_' => {}
            _ => return None,
        }
        let end = chars
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
            .map_or(rest.len(), |(i, _)| i);
        self.pos += end;
        Some(rest[..end].to_owned())
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let rest = self.rest();
        let mut escaped = false;
        for (i, c) in rest.char_indices().skip(1) {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    let literal = &rest[..=i];
                    let value = serde_json::from_str(literal).map_err(|e| {
                        self.error(format!("invalid string literal {literal}: {e}"))
                    })?;
                    self.pos += i + 1;
                    return Ok(value);
                }
                _ => {}
            }
        }
        Err(self.error("string literal is never closed".into()))
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.root)?;
        for segment in &self.path {
            match segment {
                Segment::Field(name) => write!(f, ".{name}")?,
                Segment::Index(i) => write!(f, ".{i}")?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, operand) in self.operands.iter().enumerate() {
            if i > 0 {
                f.write_str(" || ")?;
            }
            match operand {
                Operand::Ref(r) => write!(f, "{r}")?,
                Operand::Literal(s) => write!(f, "{}", Value::String(s.clone()))?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Template {
    /// Writes the template back as text that parses to an equal template.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in &self.parts {
            match part {
                Part::Text(text) => f.write_str(&text.replace("{{", "\\{{"))?,
                Part::Hole(expr) => write!(f, "{{{{ {expr} }}}}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn check(text: &str, context: Value, expected: &str) {
        let template = Template::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(template.render(&context).unwrap().text, expected, "{text}");
    }

    #[test]
    fn renders_references_and_fallbacks() {
        let ctx = json!({
            "input": {"name": "Ada", "n": 3, "empty": ""},
            "review": {"verdict": "approve", "tags": ["a", "b"], "text": "looks good"},
        });
        check("hi {{ input.name }}!", ctx.clone(), "hi Ada!");
        check("{{input.n}}", ctx.clone(), "3");
        check("{{ review.tags.1 }}", ctx.clone(), "b");
        check("{{ review }}", ctx.clone(), "looks good");
        check("{{ fix.patch || \"none\" }}", ctx.clone(), "none");
        check("{{ input.empty || input.name }}", ctx.clone(), "Ada");
        check(
            "{{ fix.x || review.verdict || \"z\" }}",
            ctx.clone(),
            "approve",
        );
        check("{{ review.tags }}", ctx.clone(), "[\n  \"a\",\n  \"b\"\n]");
        check("a \\{{ b }} c", ctx.clone(), "a {{ b }} c");
        check(
            "quote {{ x || \"say \\\"hi\\\" }}\" }}",
            ctx,
            "quote say \"hi\" }}",
        );
    }

    #[test]
    fn missing_field_warns_missing_root_fails() {
        let ctx = json!({"review": {}});
        let rendered = Template::parse("[{{ review.verdict }}]")
            .unwrap()
            .render(&ctx)
            .unwrap();
        assert_eq!(rendered.text, "[]");
        assert_eq!(rendered.warnings.len(), 1);
        let err = Template::parse("{{ fix.patch }}")
            .unwrap()
            .render(&ctx)
            .unwrap_err();
        assert_eq!(err.reference, "fix.patch");
    }

    #[test]
    fn uses_mark_fallbacks() {
        let t = Template::parse("{{ a.x || b.y }} {{ c }} {{ d.z || \"n\" }}").unwrap();
        let uses: Vec<_> = t
            .uses()
            .iter()
            .map(|u| (u.reference.to_string(), u.has_fallback))
            .collect();
        assert_eq!(
            uses,
            [
                ("a.x".into(), true),
                ("b.y".into(), false),
                ("c".into(), false),
                ("d.z".into(), true)
            ]
        );
    }

    #[test]
    fn parse_errors_have_offsets() {
        for (text, offset) in [
            ("ab {{ x", 3),
            ("{{ }}", 3),
            ("{{ a. }}", 5),
            ("{{ a b }}", 5),
            ("{{ \"x }}", 0),
            ("{{ a | b }}", 5),
        ] {
            let err = Template::parse(text).unwrap_err();
            assert_eq!(err.offset, offset, "{text}: {err}");
        }
    }

    fn arb_reference() -> impl Strategy<Value = Reference> {
        let segment = prop_oneof![
            "[a-zA-Z_][a-zA-Z0-9_]{0,5}".prop_map(Segment::Field),
            (0usize..100).prop_map(Segment::Index),
        ];
        (
            "[a-zA-Z_][a-zA-Z0-9_]{0,5}",
            prop::collection::vec(segment, 0..3),
        )
            .prop_map(|(root, path)| Reference { root, path })
    }

    fn arb_template() -> impl Strategy<Value = Template> {
        let operand = prop_oneof![
            arb_reference().prop_map(Operand::Ref),
            any::<String>().prop_map(Operand::Literal)
        ];
        let hole =
            prop::collection::vec(operand, 1..4).prop_map(|operands| Part::Hole(Expr { operands }));
        let text = prop_oneof!["[^\\\\{]{1,8}", Just("{{".to_owned())].prop_map(Part::Text);
        prop::collection::vec(prop_oneof![text, hole], 0..6).prop_map(|parts| {
            // Adjacent text parts merge when parsed back; normalise the same way.
            let mut merged: Vec<Part> = Vec::new();
            for part in parts {
                match (merged.last_mut(), part) {
                    (Some(Part::Text(prev)), Part::Text(next)) => prev.push_str(&next),
                    (_, part) => merged.push(part),
                }
            }
            Template { parts: merged }
        })
    }

    proptest! {
        #[test]
        fn parse_never_panics(text in any::<String>()) {
            let _ = Template::parse(&text);
        }

        #[test]
        fn parse_never_panics_on_template_like_text(text in "[{}|\"\\\\a. 0_]{0,24}") {
            if let Ok(t) = Template::parse(&text) {
                let _ = t.render(&json!({"a": {"0": 1}}));
            }
        }

        #[test]
        fn display_round_trips(template in arb_template()) {
            let text = template.to_string();
            prop_assert_eq!(Template::parse(&text).unwrap(), template);
        }
    }
}
