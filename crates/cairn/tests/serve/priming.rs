//! Priming events (an event id and retry hint without data, protocol 2025-11-25) reach only clients that negotiated
//! 2025-11-25 or later: a 2025-06-18 or 2025-03-26 client (Gemini CLI's, say, which parses the empty data as JSON and
//! drops the server) gets its answers without them, on a raw socket, for `initialize` and for the calls after it.

use tokio::net::TcpStream;

use crate::cairn_serve::Served;
use crate::one_write::post_and_read_once;
use crate::support::fresh_serve;

/// The answers to `initialize` and to a `ping` in its session, for a client of `version`.
async fn answers(served: &Served, version: &str) -> (String, String) {
    let host = served.base.strip_prefix("http://").unwrap().to_owned();
    let mut stream = TcpStream::connect(&host).await.unwrap();
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"priming","version":"1"}}}}}}"#
    );
    let first = post_and_read_once(&mut stream, &host, None, &initialize).await;
    assert!(first.contains(&format!(r#""protocolVersion":"{version}""#)), "{version} negotiated: {first}");
    let session = first.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).expect("a session").trim().to_owned();
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let second = post_and_read_once(&mut stream, &host, Some((&session, version)), ping).await;
    assert!(second.contains(r#""id":2,"result":{}"#), "{second}");
    (first, second)
}

#[tokio::test]
async fn only_clients_of_2025_11_25_or_later_get_priming_events() {
    let fresh = fresh_serve().await;
    let served = &fresh.served;
    for old in ["2025-06-18", "2025-03-26"] {
        let (initialized, pinged) = answers(served, old).await;
        for answer in [initialized, pinged] {
            assert!(!answer.contains("retry: ") && !answer.contains("data: \n"), "{old}: no priming event: {answer}");
            assert!(answer.contains("data: {"), "{old}: the answer is an event: {answer}");
        }
    }
    let (initialized, pinged) = answers(served, "2025-11-25").await;
    for answer in [initialized, pinged] {
        assert!(answer.contains("retry: "), "2025-11-25: the priming event: {answer}");
    }
}
