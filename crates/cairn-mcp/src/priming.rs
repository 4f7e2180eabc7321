//! Priming events only for clients that know them.
//!
//! rmcp starts every event stream with a priming event (an event id and a retry hint, no data) so that a client of
//! protocol 2025-11-25 can resume the stream. Clients of older versions do not expect an event without data: Gemini
//! CLI's bundled MCP client (2025-06-18) parses its empty data as JSON, fails, and drops the server. Here a stream
//! loses that first event unless the request says it speaks 2025-11-25 or later: its `MCP-Protocol-Version` header,
//! or for a request without one (an `initialize`), the `protocolVersion` its small JSON body asks for.

use axum::body::Bytes;
use http::HeaderMap;

/// The first version whose clients take priming events.
const PRIMING_SINCE: &str = "2025-11-25";

/// Bodies up to this size are read to find the version an `initialize` asks for; larger ones are no `initialize`.
pub(crate) const PEEK_LIMIT: u64 = 64 * 1024;

/// The protocol version of the request's `MCP-Protocol-Version` header, if it has one.
pub(crate) fn header_version(headers: &HeaderMap) -> Option<String> {
    headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok()).map(|v| v.trim().to_owned())
}

/// The `protocolVersion` an `initialize` message (or a batch holding one) in `body` asks for.
pub(crate) fn initialize_version(body: &[u8]) -> Option<String> {
    let message: serde_json::Value = serde_json::from_slice(body).ok()?;
    let messages = match message {
        serde_json::Value::Array(batch) => batch,
        one => vec![one],
    };
    messages
        .iter()
        .find(|m| m["method"] == "initialize")
        .and_then(|m| m["params"]["protocolVersion"].as_str())
        .map(str::to_owned)
}

/// Whether a client of `version` (none known: the oldest) takes priming events. Versions are dates, so they
/// compare as text.
pub(crate) fn takes_priming(version: Option<&str>) -> bool {
    version.is_some_and(|v| v >= PRIMING_SINCE)
}

/// Whether `chunk` is a priming event: an event id or retry hint and no data.
pub(crate) fn is_priming(chunk: &Bytes) -> bool {
    let Ok(text) = std::str::from_utf8(chunk) else { return false };
    let mut hint = false;
    for line in text.lines().map(str::trim_end) {
        match line.split_once(':').map(|(field, value)| (field, value.trim_start())) {
            Some(("id" | "retry", _)) => hint = true,
            Some(("data", "")) | None => {}
            Some(_) => return false,
        }
    }
    hint
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priming_events_are_told_from_answers() {
        assert!(is_priming(&Bytes::from_static(b"data: \nid: 0\nretry: 3000\n\n")));
        assert!(is_priming(&Bytes::from_static(b"id: 0\nretry: 3000\n\n")));
        assert!(!is_priming(&Bytes::from_static(b"data: {\"jsonrpc\":\"2.0\"}\nid: 1\n\n")));
        assert!(!is_priming(&Bytes::from_static(b": keep-alive\n\n")));
    }

    #[test]
    fn only_2025_11_25_and_later_take_them() {
        assert!(!takes_priming(None));
        assert!(!takes_priming(Some("2025-06-18")));
        assert!(!takes_priming(Some("2025-03-26")));
        assert!(takes_priming(Some("2025-11-25")));
        assert!(takes_priming(Some("2026-07-28")));
    }

    #[test]
    fn an_initialize_names_its_version() {
        let body = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
        assert_eq!(initialize_version(body).as_deref(), Some("2025-06-18"));
        assert_eq!(initialize_version(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#), None);
        assert_eq!(initialize_version(b"not json"), None);
    }
}
