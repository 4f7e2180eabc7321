//! A shallow read of one JSON-RPC message: how deep it nests, and what its top level says (`id`, `method`), found
//! without building the message's value. A message refused for its depth, or the start of one refused for its
//! length, is still answered with its own id; the rate limit tells protocol housekeeping from calls.
//!
//! Each read walks the bytes once, without recursion: inside nested arrays and objects it only counts brackets
//! (strings skipped), and at the top level of an object it reads each key and, for `id` and `method`, the value. It
//! does not check that nested values are well-formed JSON: serde_json does that for the messages that are served.

use rmcp::model::RequestId;

/// How deep arrays and objects may nest in one message.
pub(crate) const MAX_DEPTH: usize = 64;

/// Whether arrays and objects nest more than [`MAX_DEPTH`] levels deep (brackets inside strings do not count).
pub(crate) fn nests_too_deep(message: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in message {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The id of `message` when it is a request: an object whose top level is well-formed, with a `method` and an `id`
/// that is a string or an integer.
pub(crate) fn request_id(message: &[u8]) -> Option<RequestId> {
    let top = Top::read(message);
    (top.end == End::Closed).then_some(top).and_then(Top::request_id)
}

/// [`request_id`] of a message of which only `start` could be read: its top level well-formed as far as it goes.
pub(crate) fn request_id_of_start(start: &[u8]) -> Option<RequestId> {
    let top = Top::read(start);
    (top.end != End::Broken).then_some(top).and_then(Top::request_id)
}

/// Whether `message` is protocol housekeeping, not a call that does work: `initialize`, `ping`, a notification, or a
/// response to the server's own request. Anything else, a message that is not a well-formed object included, is not.
pub fn is_housekeeping(message: &[u8]) -> bool {
    let top = Top::read(message);
    if top.end != End::Closed {
        return false;
    }
    match (&top.method, top.has_method) {
        (Some(method), _) => matches!(method.as_str(), "initialize" | "ping") || method.starts_with("notifications/"),
        (None, has_method) => !has_method && top.has_outcome,
    }
}

/// What the top level of an object said.
#[derive(Debug, Default)]
struct Top {
    /// The value of `id`, when it is a string or an integer.
    id: Option<RequestId>,
    /// Whether there is a `method` key, and its value when it is a string.
    has_method: bool,
    method: Option<String>,
    /// Whether there is a `result` or an `error` key (a response).
    has_outcome: bool,
    end: End,
}

/// How the top level ended.
#[derive(Debug, Default, PartialEq, Eq)]
enum End {
    /// With the object's `}` and nothing but whitespace after it.
    Closed,
    /// Well-formed up to where the bytes stop.
    Cut,
    /// Not an object, or not well-formed at the top level.
    #[default]
    Broken,
}

impl Top {
    fn request_id(self) -> Option<RequestId> {
        self.id.filter(|_| self.has_method)
    }

    fn read(bytes: &[u8]) -> Top {
        let mut top = Top::default();
        top.end = top.read_object(bytes).unwrap_or(End::Cut);
        top
    }

    /// Reads the object in `bytes`; `None` when the bytes stop first.
    fn read_object(&mut self, bytes: &[u8]) -> Option<End> {
        let mut at = skip_space(bytes, 0);
        if *bytes.get(at)? != b'{' {
            return Some(End::Broken);
        }
        at = skip_space(bytes, at + 1);
        if *bytes.get(at)? == b'}' {
            return Some(closed(bytes, at + 1));
        }
        loop {
            if *bytes.get(at)? != b'"' {
                return Some(End::Broken);
            }
            let key_end = string_end(bytes, at)?;
            let key = decoded_key(&bytes[at..key_end]);
            at = skip_space(bytes, key_end);
            if *bytes.get(at)? != b':' {
                return Some(End::Broken);
            }
            let start = skip_space(bytes, at + 1);
            let end = value_end(bytes, start)?;
            let value = &bytes[start..end];
            match key.as_deref() {
                Some("id") => self.id = serde_json::from_slice(value).ok(),
                Some("method") => {
                    self.has_method = true;
                    self.method = serde_json::from_slice(value).ok();
                }
                Some("result" | "error") => self.has_outcome = true,
                _ => {}
            }
            at = skip_space(bytes, end);
            match *bytes.get(at)? {
                b',' => at = skip_space(bytes, at + 1),
                b'}' => return Some(closed(bytes, at + 1)),
                _ => return Some(End::Broken),
            }
        }
    }
}

/// A key as text, when it is short enough to be one that matters (`"method"` however escaped).
fn decoded_key(key: &[u8]) -> Option<String> {
    if key.len() > 64 { None } else { serde_json::from_slice(key).ok() }
}

/// How an object that closed at `after` ends.
fn closed(bytes: &[u8], after: usize) -> End {
    if skip_space(bytes, after) == bytes.len() { End::Closed } else { End::Broken }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Where the string that opens at `at` ends (just after its closing quote); `None` when the bytes stop first.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut escaped = false;
    for (offset, &byte) in bytes[at + 1..].iter().enumerate() {
        match byte {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => return Some(at + 1 + offset + 1),
            _ => {}
        }
    }
    None
}

/// Where the value that starts at `at` ends; `None` when the bytes stop first. Nested arrays and objects are
/// skipped by counting their brackets.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => i = string_end(bytes, i)? - 1,
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let rest = &bytes[at..];
            rest.iter().position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')).map(|n| at + n)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn id(message: &str) -> Value {
        request_id(message.as_bytes()).map_or(Value::Null, RequestId::into_json_value)
    }

    fn deep(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn the_id_of_a_deep_request_is_read_without_building_it() {
        for levels in [100, 100_000] {
            let message = format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"t","arguments":{{"x":{}}}}}}}"#,
                deep(levels)
            );
            assert!(nests_too_deep(message.as_bytes()));
            assert_eq!(id(&message), json!(2), "{levels} levels");
        }
        let last = format!(r#" {{ "params" : {} , "method" : "ping" , "id" : "a\"b" }} "#, deep(70));
        assert_eq!(id(&last), json!("a\"b"), "keys in any order, strings with escapes, spaces anywhere");
        assert_eq!(id(r#"{"\u0069d":7,"method":"ping"}"#), json!(7), "an escaped key is the key it spells");
    }

    #[test]
    fn no_id_unless_a_request_whose_top_level_reads_well() {
        for message in [
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"} trailing"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":[[["#,
            r#"{"jsonrpc":"2.0","id":7 "method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"ping",}"#,
            "",
        ] {
            assert_eq!(id(message), Value::Null, "{message}");
        }
    }

    #[test]
    fn the_start_of_a_long_message_gives_the_id_it_holds() {
        let start = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"xxxxxxxx"#;
        assert_eq!(request_id_of_start(start), Some(RequestId::Number(1)));
        assert_eq!(request_id_of_start(br#"{"jsonrpc":"2.0","params":{"pad":"xx"#), None, "the id comes later");
        assert_eq!(request_id_of_start(br#"{"jsonrpc" 2, "id":1,"method":"ping","#), None, "broken before the cut");
    }

    #[test]
    fn housekeeping_is_initialize_ping_notifications_and_responses() {
        for message in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}"#,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-1,"message":"no"}}"#,
        ] {
            assert!(is_housekeeping(message.as_bytes()), "{message}");
        }
        for message in [
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work_claim"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"} {"id":6,"method":"tools/call"}"#,
            r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
            "{}",
            "garbage",
        ] {
            assert!(!is_housekeeping(message.as_bytes()), "{message}");
        }
    }
}
