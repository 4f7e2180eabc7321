//! Property tests: every parser of user files and arguments — workflow YAML through the whole validation pipeline,
//! `{{ … }}` templates, markdown front matter, `roscoe.yaml`, docs pages (`cairn_docs::Page`; here), CEL conditions
//! (in `definition::expression` and `engine::condition`) — fed random text, mutations of the valid examples of the
//! docs corpus, alias bombs, deep nesting and 50 MB inputs, neither panics, nor overflows its stack, nor hangs.
//!
//! Each input is parsed on a thread with a 2 MiB stack (what a tokio worker has), which must answer within
//! [`LIMIT`]: generous, it fails only on a hang.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::Value;

use crate::authoring_guide::{ConfigFile, load_models};
use crate::definition::template::Template;
use crate::definition::{self, Options};

/// How long one input may take.
pub(crate) const LIMIT: Duration = Duration::from_secs(60);

/// Runs `parse(input)` on a 2 MiB thread; fails the test when it panics or takes longer than [`LIMIT`].
pub(crate) fn bounded(what: &str, input: String, parse: fn(&str)) {
    let (done, finished) = mpsc::channel();
    let shown: String = input.chars().take(80).collect();
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            parse(&input);
            let _ = done.send(());
        })
        .expect("spawn a parser thread");
    match finished.recv_timeout(LIMIT) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what} hung on {shown:?}…"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked on {shown:?}…"),
    }
}

/// The ```yaml blocks of the docs corpus (workflows and `# roscoe.yaml` configs), read from the source tree.
pub(crate) fn corpus_yaml() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).expect("docs/roscoe").flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&path).unwrap();
                let mut block: Option<String> = None;
                for line in text.lines() {
                    match (&mut block, line.trim_start()) {
                        (None, "```yaml") => block = Some(String::new()),
                        (Some(_), "```") => out.extend(block.take()),
                        (Some(body), _) => {
                            body.push_str(line);
                            body.push('\n');
                        }
                        (None, _) => {}
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/roscoe"), &mut out);
    assert!(out.len() > 10, "the docs corpus has YAML examples");
    out
}

/// Every string of the corpus workflows that holds a template (`{{`), and every condition expression.
pub(crate) fn corpus_strings() -> (Vec<String>, Vec<String>) {
    fn strings(value: &Value, templates: &mut Vec<String>, conditions: &mut Vec<String>) {
        match value {
            Value::String(s) if s.contains("{{") => templates.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| strings(v, templates, conditions)),
            Value::Object(map) => {
                for (key, v) in map {
                    match (key.as_str(), v) {
                        ("expression" | "when", Value::String(s)) => conditions.push(s.clone()),
                        _ => strings(v, templates, conditions),
                    }
                }
            }
            _ => {}
        }
    }
    let (mut templates, mut conditions) = (Vec::new(), Vec::new());
    for text in corpus_yaml() {
        if let Ok(doc) = cairn_yaml::parse(&text) {
            strings(&doc.value, &mut templates, &mut conditions);
        }
    }
    assert!(!templates.is_empty() && !conditions.is_empty(), "the corpus has templates and conditions");
    (templates, conditions)
}

/// Pieces of syntax that mutations insert: YAML, template and CEL structure.
const TOKENS: &[&str] = &[
    "{{", "}}", "||", "&&", "\"", "'", ":", ": ", "\n", "\n  ", "- ", "&a ", "*a", "<<: *a", "[", "]", "{", "}", "(",
    ")", "!!str ", "!!binary ", "---\n", "...\n", "? ", "|\n", ">-\n", "#", "\t", "\\", "%YAML 1.1\n", "\u{feff}",
    "\u{0}", "$end", "$fail", ".", "[0]", "x.exists(y, ", "has(", "==", "input.", "~", "é", "𝕏",
];

/// One edit: where (a fraction of the length), what, and how much to remove.
type Edit = (f64, usize, usize, String);

/// Text from `seeds` with up to eight edits: tokens or random text inserted, ranges removed or doubled.
pub(crate) fn mutated(seeds: Vec<String>) -> impl Strategy<Value = String> {
    let edit = (0.0..1.0f64, 0..4usize, 0..64usize, prop_oneof![
        proptest::sample::select(TOKENS).prop_map(str::to_owned),
        any::<String>(),
    ]);
    (proptest::sample::select(seeds), proptest::collection::vec(edit, 0..8)).prop_map(|(seed, edits)| {
        edits.into_iter().fold(seed, apply)
    })
}

fn apply(mut text: String, (at, kind, len, piece): Edit) -> String {
    let boundary = |text: &str, mut i: usize| {
        i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = boundary(&text, (at * text.len() as f64) as usize);
    let end = boundary(&text, start + len);
    match kind {
        0 => text.insert_str(start, &piece),
        1 => text.replace_range(start..end, ""),
        2 => {
            let doubled = text[start..end].to_owned();
            text.insert_str(end, &doubled);
        }
        _ => text.replace_range(start..end, &piece),
    }
    text
}

/// Texts every parser must refuse or read quickly: alias bombs, deep nesting of every bracket kind, 50 MB.
fn hostile_texts() -> Vec<(&'static str, String)> {
    let mut laughs = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for pair in ["a", "b", "c", "d", "e", "f", "g", "h", "i"].windows(2) {
        laughs.push_str(&format!("{}: &{} [{}]\n", pair[1], pair[1], vec![format!("*{}", pair[0]); 9].join(", ")));
    }
    let block: String = (0..5000).map(|depth| format!("{}a:\n", " ".repeat(depth % 200))).collect();
    vec![
        ("billion laughs", laughs),
        ("deep block nesting", block),
        ("deep flow nesting", format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))),
        ("deep parentheses", format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000))),
        ("deep braces", format!("{}{}", "{{".repeat(100_000), "}}".repeat(100_000))),
        ("a long operator chain", format!("a{}", " + a".repeat(100_000))),
        ("a long select chain", format!("a{}", ".b".repeat(100_000))),
        ("50 MB", "x".repeat(50 * 1024 * 1024)),
        ("50 MB of one template", format!("{{{{ {} }}}}", "a || ".repeat(10 * 1024 * 1024))),
    ]
}

/// Runs `parse` on every one of [`hostile_texts`], [`bounded`].
pub(crate) fn survives_hostile_texts(what: &str, parse: fn(&str)) {
    for (kind, text) in hostile_texts() {
        bounded(&format!("{what} of {kind}"), text, parse);
    }
}

/// The whole validation pipeline (schema, integrity, lint) with every lint input given.
fn validate(text: &str) {
    let _ = definition::validate(
        text,
        &Options {
            id: None,
            lint: true,
            models: Some(vec!["claude-sonnet-4-5".into()]),
            workflows: Some(vec!["child".into(), "review".into()]),
            calls: Some([("child".to_owned(), vec!["review".to_owned()])].into_iter().collect()),
        },
    );
}

/// A workflow whose one condition node carries `expression`, and whose prompt carries `template`.
fn workflow_with(expression: &str, template: &str) -> String {
    let quoted = |s: &str| serde_json::to_string(s).unwrap();
    format!(
        "name: w\ninitial: a\nnodes:\n  a:\n    type: ai_agent\n    config: {{ prompt: {} }}\n    transitions: {{ success: c }}\n  c:\n    type: condition\n    config: {{ expression: {} }}\n    transitions: {{ \"true\": $end, \"false\": $fail }}\n",
        quoted(template),
        quoted(expression)
    )
}

fn template(text: &str) {
    if let Ok(t) = Template::parse(text) {
        let _ = t.render(&serde_json::json!({ "input": { "a": 1 }, "a": { "b": [1, { "c": "x" }] } }));
    }
}

fn front_matter(text: &str) {
    let _ = cairn_docs::front_matter::split(&format!("---\n{text}\n---\nbody\n"));
}

fn docs_page(text: &str) {
    let _ = cairn_docs::Page::parse("hostile", &format!("---\ntitle: T\n{text}\n---\n{text}\n"));
}

fn roscoe_yaml(text: &str) {
    let _ = load_models(Some(ConfigFile { path: "roscoe.yaml", text }), Some(ConfigFile { path: "p/roscoe.yaml", text }));
}

#[test]
fn hostile_texts_are_handled_by_every_parser() {
    for (what, text) in hostile_texts() {
        bounded(&format!("validation of {what}"), text.clone(), validate);
        bounded(&format!("a condition of {what}"), workflow_with(&text, "p"), validate);
        bounded(&format!("a template of {what}"), workflow_with("true", &text), validate);
        bounded(&format!("the template parser on {what}"), text.clone(), template);
        bounded(&format!("front matter of {what}"), text.clone(), front_matter);
        bounded(&format!("roscoe.yaml of {what}"), text, roscoe_yaml);
    }
}

#[test]
fn hostile_texts_neither_crash_nor_hang_the_page_reader() {
    survives_hostile_texts("a docs page", docs_page);
}

#[test]
fn the_examples_are_valid_before_they_are_mutated() {
    // The seeds are worth mutating only if they exercise the whole pipeline.
    let valid = corpus_yaml().iter().filter(|t| definition::validate(t, &Options::default()).is_valid()).count();
    assert!(valid > 10, "{valid} valid examples");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn mutated_workflows_never_panic_or_hang(text in mutated(corpus_yaml())) {
        bounded("validation", text, validate);
    }

    #[test]
    fn random_workflows_never_panic_or_hang(text in any::<String>()) {
        bounded("validation", text, validate);
    }

    #[test]
    fn mutated_templates_and_conditions_in_a_workflow_never_panic_or_hang(
        template_text in mutated(corpus_strings().0),
        condition in mutated(corpus_strings().1),
    ) {
        bounded("validation", workflow_with(&condition, &template_text), validate);
        bounded("the template parser", template_text, template);
    }

    #[test]
    fn random_templates_never_panic_or_hang(text in "[{}|\"\\\\ a.0_!()é]{0,200}") {
        bounded("the template parser", text, template);
    }

    #[test]
    fn mutated_front_matter_and_roscoe_yaml_never_panic_or_hang(text in mutated(corpus_yaml())) {
        bounded("front matter", text.clone(), front_matter);
        bounded("roscoe.yaml", text, roscoe_yaml);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn mutated_pages_never_panic_or_hang(text in mutated(corpus_yaml())) {
        bounded("a docs page", text, docs_page);
    }
}
