//! The TCP listener every cairn HTTP server binds: Nagle's algorithm off on each accepted connection.
//!
//! An answer goes out in pieces (headers, the event carrying the result, the end of the chunked body). With Nagle on,
//! the last small piece waits for the client's acknowledgement of the previous one, which the client delays by up to
//! 40 ms — so every call of a client that reads its answer to the end took 40 ms more.

use std::net::SocketAddr;

use axum::serve::{ListenerExt, TapIo};
use tokio::net::{TcpListener, TcpStream};

/// A bound listener whose connections have `TCP_NODELAY` set.
pub type Listener = TapIo<TcpListener, fn(&mut TcpStream)>;

/// Binds `addr`.
pub async fn bind(addr: SocketAddr) -> std::io::Result<Listener> {
    let listener = TcpListener::bind(addr).await?;
    Ok(listener.tap_io(no_delay as fn(&mut TcpStream)))
}

fn no_delay(stream: &mut TcpStream) {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!("cannot set TCP_NODELAY: {error}");
    }
}
