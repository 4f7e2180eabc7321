//! An MCP answer over Streamable HTTP reaches a raw client in one piece: headers, the priming event, the answer and
//! the stream's end in its first read, as `cairn_mcp::OneWrite` sends them (one write; its unit tests show the
//! waiting itself, which a read over loopback cannot tell apart from two quick writes).

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::fresh_serve;

/// Posts `body` to `/roscoe/mcp` on `stream` (in `session`, of protocol `version`) and returns what the first read
/// brought.
pub async fn post_and_read_once(
    stream: &mut TcpStream,
    host: &str,
    session: Option<(&str, &str)>,
    body: &str,
) -> String {
    let session = session.map(|(id, version)| format!("mcp-session-id: {id}\r\nmcp-protocol-version: {version}\r\n"));
    let request = format!(
        "POST /roscoe/mcp HTTP/1.1\r\nhost: {host}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\n{}content-length: {}\r\n\r\n{body}",
        session.unwrap_or_default(),
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buffer = vec![0; 64 * 1024];
    let read = stream.read(&mut buffer).await.unwrap();
    String::from_utf8_lossy(&buffer[..read]).into_owned()
}

#[tokio::test]
async fn the_first_read_holds_the_whole_answer() {
    let fresh = fresh_serve().await;
    let served = &fresh.served;
    let host = served.base.strip_prefix("http://").unwrap().to_owned();
    let mut stream = TcpStream::connect(&host).await.unwrap();

    let initialize = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
        r#""capabilities":{},"clientInfo":{"name":"one-write","version":"1"}}}"#
    );
    let first = post_and_read_once(&mut stream, &host, None, initialize).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(first.contains("content-type: text/event-stream"), "an event stream: {first}");
    assert!(first.contains("retry: "), "the priming event: {first}");
    assert!(first.contains(r#""protocolVersion""#), "and the answer, in the first read: {first}");
    assert!(first.ends_with("0\r\n\r\n"), "and the stream's end: {first}");
    let session =
        first.lines().find_map(|line| line.strip_prefix("mcp-session-id: ")).expect("a session").trim().to_owned();

    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let answer = post_and_read_once(&mut stream, &host, Some((&session, "2025-11-25")), ping).await;
    assert!(answer.contains(r#""id":2,"result":{}"#), "a call's answer comes whole in the first read: {answer}");
}
