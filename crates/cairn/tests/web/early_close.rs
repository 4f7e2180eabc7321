//! Refusals decided from the headers alone, before the body is read, say `Connection: close`: the server then closes
//! the connection, and a client that reads the header opens a new one instead of reusing a dead one.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{http, start, token};

/// Sends `head` (a request whose body is not sent) on a fresh connection; the response and whether the server
/// closed the connection after it.
async fn early(base: &str, head: &str) -> String {
    let address = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(head.replace('\n', "\r\n").as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response)).await;
    assert!(read.is_ok(), "the server closes the connection: {}", String::from_utf8_lossy(&response));
    String::from_utf8(response).unwrap().to_ascii_lowercase()
}

#[tokio::test]
async fn an_early_401_403_or_413_says_connection_close() {
    let env = start().await;
    let host = env.served.base.trim_start_matches("http://").to_owned();
    let body = "content-type: application/json\ncontent-length: 60\n\n";
    let no_token = early(&env.served.base, &format!("POST /mcp HTTP/1.1\nhost: {host}\n{body}")).await;
    assert!(no_token.starts_with("http/1.1 401"), "{no_token}");
    assert!(no_token.contains("\r\nconnection: close\r\n"), "{no_token}");
    assert!(no_token.contains("www-authenticate: bearer"), "{no_token}");
    let rest = early(&env.served.base, &format!("POST /api/spaces HTTP/1.1\nhost: {host}\n{body}")).await;
    assert!(rest.starts_with("http/1.1 401") && rest.contains("\r\nconnection: close\r\n"), "{rest}");
    let foreign = early(&env.served.base, &format!("POST /mcp HTTP/1.1\nhost: evil.example\n{body}")).await;
    assert!(foreign.starts_with("http/1.1 403") && foreign.contains("\r\nconnection: close\r\n"), "{foreign}");
    let bearer = token(&env);
    let big = format!("authorization: Bearer {bearer}\ncontent-type: application/json\ncontent-length: 2000000\n\n");
    let too_big = early(&env.served.base, &format!("POST /mcp HTTP/1.1\nhost: {host}\n{big}")).await;
    assert!(too_big.starts_with("http/1.1 413") && too_big.contains("\r\nconnection: close\r\n"), "{too_big}");

    // A client that reuses connections gets its answers, refused or not, one after the other.
    let client = http();
    for _ in 0..3 {
        let refused = client.post(env.served.url("/mcp")).body("{}").send().await.unwrap();
        assert_eq!(refused.status(), 401);
        assert_eq!(refused.headers()["connection"], "close");
        assert_eq!(client.get(env.served.url("/healthz")).send().await.unwrap().status(), 200);
    }
    let plain = client.get(env.served.url("/api/work/items")).send().await.unwrap();
    assert_eq!(plain.status(), 401);
    assert!(!plain.headers().contains_key("connection"), "a refusal of a request without a body keeps the connection");
}
