//! What every stdio server does with lines that are not messages it can serve: each gets exactly one JSON-RPC error
//! (with the request's id when one can be read, `null` otherwise) and a warning on stderr, notifications and responses
//! are never answered, and the server goes on serving the next line. A request refused for its depth or length is
//! answered with its own id. Shared by the test binaries of the three stdio servers (`deepwork serve`, `roscoe mcp`,
//! `work mcp`).

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use tokio::process::Command;

use crate::raw_stdio::RawStdio;

/// The longest line a server reads (16 MiB).
const MAX_LINE: usize = 16 * 1024 * 1024;
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// The faults the issue lists, each with the code and id of its answer.
fn listed() -> Vec<(Vec<u8>, i64, Value)> {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let mut too_long = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#.to_vec();
    too_long.resize(MAX_LINE + 1024, b'x');
    too_long.extend_from_slice(br#""}}"#);
    vec![
        (
            br#"{"jsonrpc":"2.0","id":71008,"method":"tools/call","params":"abc"}"#.to_vec(),
            INVALID_PARAMS,
            json!(71008),
        ),
        (br#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#.to_vec(), INVALID_PARAMS, json!(2)),
        (br#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}"#.to_vec(), INVALID_PARAMS, json!("i")),
        (b"garbage".to_vec(), PARSE_ERROR, Value::Null),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\"}}".to_vec(),
            PARSE_ERROR,
            Value::Null,
        ),
        (
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"x":"\ud800"}}"#.to_vec(),
            PARSE_ERROR,
            Value::Null,
        ),
        (br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"} and more"#.to_vec(), PARSE_ERROR, Value::Null),
        (deep.into_bytes(), INVALID_REQUEST, Value::Null),
        (br#"[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]"#.to_vec(), INVALID_REQUEST, Value::Null),
        (b"5".to_vec(), INVALID_REQUEST, Value::Null),
        (br#"{"id":7,"method":"tools/list"}"#.to_vec(), INVALID_REQUEST, json!(7)),
        (br#"{"jsonrpc":"1.0","id":"seven","method":"tools/list"}"#.to_vec(), INVALID_REQUEST, json!("seven")),
        (br#"{"jsonrpc":"2.0","id":8,"method":5}"#.to_vec(), INVALID_REQUEST, json!(8)),
        (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#.to_vec(), INVALID_REQUEST, Value::Null),
        (br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#.to_vec(), INVALID_REQUEST, Value::Null),
        (br#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#.to_vec(), INVALID_REQUEST, Value::Null),
        (br#"{"jsonrpc":"2.0","id":9}"#.to_vec(), INVALID_REQUEST, json!(9)),
        (too_long, INVALID_REQUEST, json!(1)),
        (br#"{"jsonrpc":"2.0","id":10,"method":"no/such/method"}"#.to_vec(), METHOD_NOT_FOUND, json!(10)),
    ]
}

/// Sends each listed fault followed by a `tools/list`: the fault gets exactly its error, the list its tools.
pub async fn every_listed_fault_is_answered(command: Command) {
    let mut server = RawStdio::start(command).await;
    let faults = listed();
    for (n, (line, code, id)) in faults.iter().enumerate() {
        let excerpt = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
        server.send(line).await;
        let list = json!(format!("list-{n}"));
        server.send(json!({"jsonrpc": "2.0", "id": list, "method": "tools/list"}).to_string().as_bytes()).await;
        let mut seen = server.until_answered(&list).await;
        let listed = seen.pop().unwrap();
        assert!(listed["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{listed}");
        let [answer] = seen.as_slice() else { panic!("{excerpt}: not one answer but {seen:?}") };
        assert_eq!((&answer["error"]["code"], &answer["id"]), (&json!(code), id), "{excerpt}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.len() > 30, "{excerpt}: the message says what is wrong: {message}");
    }
    // A blank line is skipped; a notification or a response is never answered, not even when it does not fit.
    assert_eq!(server.exchange(b"").await, Vec::<Value>::new());
    assert_eq!(server.exchange(b" \t\r").await, Vec::<Value>::new());
    assert_eq!(
        server.exchange(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#).await,
        Vec::<Value>::new()
    );
    assert_eq!(server.exchange(br#"{"jsonrpc":"2.0","method":"no/such/notification"}"#).await, Vec::<Value>::new());
    assert_eq!(server.exchange(br#"{"jsonrpc":"2.0","id":"nobody-asked","result":{}}"#).await, Vec::<Value>::new());
    // Each refusal is one warning on stderr (stdout carries only JSON-RPC: RawStdio checks every line of it).
    let warned = |log: &str| log.lines().filter(|l| l.contains("WARN") && l.contains("stdin line")).count();
    let deadline = Instant::now() + Duration::from_secs(60);
    while warned(&server.log()) < faults.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(warned(&server.log()) >= faults.len(), "one warning per fault:\n{}", server.log());
    assert!(server.close().await, "the server exits cleanly when stdin closes");
}

/// A `tools/call` nested 100 levels deep (valid JSON, over the 64 levels a message may nest) with id 2, the same
/// 10,000 levels deep with id "deep", and one whose line is too long to read whole with its id at the start: each is
/// refused with `-32600` and its own id, so the client waiting for that id hears of it.
pub async fn a_deep_request_is_answered_with_its_own_id(command: Command) {
    let mut server = RawStdio::start(command).await;
    let call = |id: Value, x: String| {
        let params = json!({"name": "get_workflows", "arguments": {"x": "X"}});
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        call.to_string().replace(r#""X""#, &x).into_bytes()
    };
    let nest = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    let too_long = call(json!(3), format!("\"{}\"", "x".repeat(MAX_LINE)));
    for (line, id, says) in [
        (call(json!(2), nest(100)), json!(2), "more than 64 levels deep"),
        (call(json!("deep"), nest(10_000)), json!("deep"), "more than 64 levels deep"),
        (too_long, json!(3), "longer than 16 MiB"),
    ] {
        server.send(&line).await;
        let seen = server.until_answered(&id).await;
        let [answer] = seen.as_slice() else { panic!("not one answer but {seen:?}") };
        assert_eq!(answer["error"]["code"], INVALID_REQUEST, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(says), "{answer}");
    }
    assert_eq!(server.until_pinged().await, Vec::<Value>::new(), "nothing else was answered");
    assert!(server.close().await, "the server exits cleanly when stdin closes");
}

/// Lines before `initialize` do not stop the server: a fault is answered, a notification or a response ignored.
pub async fn lines_before_initialize_do_not_stop_it(command: Command) {
    let early: [&[u8]; 4] = [
        b"garbage",
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        br#"{"jsonrpc":"2.0","id":"nobody-asked","result":{}}"#,
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"abc"}"#,
    ];
    let (mut server, before) = RawStdio::start_after(command, &early).await;
    let answered: Vec<_> = before.iter().map(|a| (a["error"]["code"].clone(), a["id"].clone())).collect();
    assert_eq!(answered, [(json!(PARSE_ERROR), Value::Null), (json!(INVALID_PARAMS), json!(1))], "{before:?}");
    assert_eq!(server.until_pinged().await, Vec::<Value>::new());
    assert!(server.close().await, "the server exits cleanly when stdin closes");
}

/// A last line without a newline, cut off by the end of the input, is answered before the server exits.
pub async fn an_unterminated_last_line_is_answered(command: Command) {
    let mut server = RawStdio::start(command).await;
    let mut cut = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#.to_vec();
    cut.resize(10 * 1024 * 1024, b'x');
    server.write(&cut).await;
    assert!(server.close().await, "the server exits cleanly when stdin closes");
    let answer = server.next().await.expect("an answer to the cut-off line");
    assert_eq!((&answer["error"]["code"], &answer["id"]), (&json!(PARSE_ERROR), &Value::Null), "{answer}");
    assert_eq!(server.next().await, None);
}

/// What a line must get: nothing (a notification or a response), or exactly one answer with this id (`null` when the
/// line carries no id that can be read).
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    Nothing,
    One(Value),
}

/// The answer a line must get, read from the JSON-RPC 2.0 rules (independently of the server's code).
fn expected(line: &[u8]) -> Expected {
    if line.trim_ascii().is_empty() {
        return Expected::Nothing;
    }
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else {
        return Expected::One(Value::Null);
    };
    let id = message.get("id").and_then(readable_id).unwrap_or(Value::Null);
    if depth(&Value::Object(message.clone())) > 64 {
        // Refused for its depth, with its id when it is a request (it has a method).
        return Expected::One(if message.contains_key("method") { id } else { Value::Null });
    }
    match message.get("method") {
        Some(method) if !message.contains_key("id") => {
            let fits = message.get("jsonrpc") == Some(&json!("2.0"))
                && method.is_string()
                && matches!(message.get("params"), None | Some(Value::Null | Value::Object(_)));
            if fits { Expected::Nothing } else { Expected::One(Value::Null) }
        }
        Some(_) => Expected::One(id),
        None if message.contains_key("result") || message.contains_key("error") => Expected::Nothing,
        None => Expected::One(id),
    }
}

/// A request id as the server writes it back: a string, or an integer (`1.0` is `1`); None for anything else.
fn readable_id(id: &Value) -> Option<Value> {
    match id {
        Value::String(_) => Some(id.clone()),
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0).map(|f| f as i64))
            .map(Value::from),
        _ => None,
    }
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Small JSON values of every kind.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e20f64..1e20).prop_map(Value::from),
        ".{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..3)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Keys JSON-RPC or MCP give meaning to.
const MEANINGFUL_KEYS: [&str; 10] =
    ["jsonrpc", "id", "method", "params", "result", "error", "name", "arguments", "_meta", "cursor"];

/// An object key: mostly one JSON-RPC or MCP gives meaning to.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(MEANINGFUL_KEYS.to_vec()).prop_map(str::to_owned),
        1 => "[a-z]{1,5}",
    ]
}

/// A well-formed message of the kinds a client sends.
fn message() -> impl Strategy<Value = Value> {
    let id = prop_oneof![any::<i32>().prop_map(Value::from), "[a-z0-9-]{1,8}".prop_map(Value::from)];
    (id, 0..7usize).prop_map(|(id, kind)| match kind {
        0 => json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}),
        1 => json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        2 => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "no_such_tool"}}),
        3 => json!({"jsonrpc": "2.0", "id": id, "method": "prompts/list", "params": {}}),
        4 => json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        5 => json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}),
        _ => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
    })
}

/// A change to a message's JSON.
#[derive(Debug, Clone)]
enum Edit {
    Remove(String),
    Set(String, Value),
    SetParam(String, Value),
    Replace(Value),
}

/// A change to a message's bytes.
#[derive(Debug, Clone)]
enum Damage {
    None,
    Truncate(Index),
    Insert(Index, u8),
    Overwrite(Index, u8),
    LoneSurrogate,
    Nest(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => key().prop_map(Edit::Remove),
        3 => (key(), any_json()).prop_map(|(k, v)| Edit::Set(k, v)),
        3 => (key(), any_json()).prop_map(|(k, v)| Edit::SetParam(k, v)),
        1 => any_json().prop_map(Edit::Replace),
    ]
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        10 => Just(Damage::None),
        1 => any::<Index>().prop_map(Damage::Truncate),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(at, b)| Damage::Insert(at, b)),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(at, b)| Damage::Overwrite(at, b)),
        1 => Just(Damage::LoneSurrogate),
        1 => (60usize..70).prop_map(Damage::Nest),
    ]
}

/// A line made from a well-formed message by up to three edits and one kind of damage (never with a newline inside).
fn line() -> impl Strategy<Value = Vec<u8>> {
    (message(), prop::collection::vec(edit(), 0..3), damage()).prop_map(|(mut message, edits, damage)| {
        for edit in edits {
            match (edit, message.as_object_mut()) {
                (Edit::Remove(key), Some(map)) => {
                    map.shift_remove(&key);
                }
                (Edit::Set(key, value), Some(map)) => {
                    map.insert(key, value);
                }
                (Edit::SetParam(key, value), Some(map)) => {
                    if let Some(Value::Object(params)) = map.get_mut("params") {
                        params.insert(key, value);
                    }
                }
                (Edit::Replace(value), _) => message = value,
                _ => {}
            }
        }
        let mut bytes = message.to_string().into_bytes();
        match damage {
            Damage::None => {}
            Damage::Truncate(at) => bytes.truncate(at.index(bytes.len() + 1)),
            Damage::Insert(at, byte) => bytes.insert(at.index(bytes.len() + 1), byte),
            Damage::Overwrite(at, byte) => {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
            Damage::LoneSurrogate => {
                if let Some(at) = bytes.iter().position(|&b| b == b'"') {
                    bytes.splice(at + 1..at + 1, br"\ud800".iter().copied());
                }
            }
            Damage::Nest(levels) => {
                bytes = [b"[".repeat(levels), bytes, b"]".repeat(levels)].concat();
            }
        }
        for byte in &mut bytes {
            if *byte == b'\n' {
                *byte = b' ';
            }
        }
        bytes
    })
}

/// Random and damaged lines, one server for all: every line gets what [`expected`] says, nothing more, and the
/// server keeps answering.
pub fn every_line_gets_one_answer_or_none(command: Command) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = tokio::sync::Mutex::new(runtime.block_on(RawStdio::start(command)));
    let config = Config { cases: 256, failure_persistence: None, ..Config::default() };
    let result = TestRunner::new(config).run(&line(), |line| {
        runtime.block_on(async {
            let mut server = server.lock().await;
            let excerpt = String::from_utf8_lossy(&line).into_owned();
            let expected = expected(&line);
            let mut answers: Vec<Value> =
                server.exchange(&line).await.into_iter().filter(|m| m.get("method").is_none()).collect();
            if let Expected::One(id) = &expected
                && !id.is_null()
                && !answers.iter().any(|a| a["id"] == *id)
            {
                answers.extend(server.until_answered(id).await);
            }
            match expected {
                Expected::Nothing => prop_assert!(answers.is_empty(), "{excerpt} got {answers:?}"),
                Expected::One(id) => {
                    prop_assert_eq!(answers.len(), 1, "{} got {:?}", excerpt, answers);
                    prop_assert_eq!(&answers[0]["id"], &id, "{} got {:?}", excerpt, answers);
                    if id.is_null() {
                        let code = answers[0]["error"]["code"].as_i64();
                        prop_assert!(matches!(code, Some(PARSE_ERROR | INVALID_REQUEST)), "{excerpt} got {answers:?}");
                    }
                }
            }
            Ok::<(), TestCaseError>(())
        })
    });
    let mut server = server.into_inner();
    if let Err(failure) = result {
        panic!("{failure}\nserver log:\n{}", server.log());
    }
    runtime.block_on(async {
        assert_eq!(server.until_pinged().await, Vec::<Value>::new(), "nothing is answered twice");
        assert!(server.close().await, "the server exits cleanly when stdin closes");
    });
}
