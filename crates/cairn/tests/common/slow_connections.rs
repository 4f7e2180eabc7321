//! Clients that never finish a request: connections that trickle a header a byte a second, or send headers and part of
//! a body and then stall. A server must close them within its time limits (10 s for headers, 30 s of a stalled body)
//! while it goes on answering everyone else.

#![allow(dead_code, reason = "each test binary that includes this file uses part of it")]

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long to wait for the server to close a slow connection: far more than its limits, so a busy machine does not
/// fail the test, and still finite, so a server that never closes does.
const PATIENCE: Duration = Duration::from_secs(180);

/// A connection that never finishes its request.
pub struct Slow {
    stream: TcpStream,
    /// Sends one more byte every second (a trickled header) instead of nothing (a stalled body).
    trickles: bool,
}

impl Slow {
    /// A connection to `host` (`127.0.0.1:PORT`) that sends the start of a request to `path` and then a byte of an
    /// endless header line every second.
    pub async fn trickling_headers(host: &str, path: &str) -> Slow {
        let start = format!("POST {path} HTTP/1.1\r\nHost: {host}\r\nX-Slow: ");
        Slow::open(host, start.as_bytes(), true).await
    }

    /// A connection to `host` that sends a JSON `POST` to `path` promising a 1000-byte body, 10 bytes of it, and then
    /// nothing.
    pub async fn stalling_body(host: &str, path: &str) -> Slow {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\""
        );
        Slow::open(host, request.as_bytes(), false).await
    }

    async fn open(host: &str, start: &[u8], trickles: bool) -> Slow {
        let mut stream = TcpStream::connect(host).await.expect("connect to the server");
        stream.write_all(start).await.unwrap();
        Slow { stream, trickles }
    }

    /// Whether the server closes the connection (within a generous bound) while it keeps trickling or stalling.
    pub async fn closed_by_the_server(mut self) -> bool {
        let keep_on = async {
            let mut received = [0u8; 1024];
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    read = self.stream.read(&mut received) => match read {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    },
                    _ = tick.tick(), if self.trickles => {
                        if self.stream.write_all(b"a").await.is_err() {
                            return;
                        }
                    }
                }
            }
        };
        tokio::time::timeout(PATIENCE, keep_on).await.is_ok()
    }
}

/// Waits for the server to close every connection of `slow`; panics naming how many it left open.
pub async fn all_closed_by_the_server(slow: Vec<Slow>) {
    let count = slow.len();
    let closed = futures::future::join_all(slow.into_iter().map(Slow::closed_by_the_server)).await;
    let open = closed.iter().filter(|closed| !**closed).count();
    assert_eq!(open, 0, "{open} of {count} slow connections still open after {} s", PATIENCE.as_secs());
}
