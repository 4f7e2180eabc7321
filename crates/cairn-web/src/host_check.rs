//! The DNS-rebinding guard in front of every route: the `Host` header must name loopback (or an allowed host), and a
//! browser's `Origin`, when sent, must be one of those hosts too (`Origin: null`, sent by sandboxed frames and `file:`
//! pages, never is). Anything else is `403 Forbidden` with a sentence saying how to allow the host.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

/// The host names a request may address.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts(Arc<Vec<String>>);

impl AllowedHosts {
    /// Loopback names plus `extra`.
    pub(crate) fn new(extra: &[String]) -> Self {
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into(), "::1".into()];
        hosts.extend(extra.iter().map(|h| h.to_ascii_lowercase()));
        AllowedHosts(Arc::new(hosts))
    }

    fn allows(&self, authority: &str) -> bool {
        let lower = authority.to_ascii_lowercase();
        let host = strip_port(&lower);
        self.0.iter().any(|allowed| allowed == host)
    }
}

/// `router` with the check in front of every route.
pub(crate) fn layer(router: Router, hosts: AllowedHosts) -> Router {
    router.layer(middleware::from_fn_with_state(hosts, check))
}

async fn check(State(hosts): State<AllowedHosts>, request: Request, next: Next) -> Response {
    if let Err(reason) = verdict(&hosts, request.headers()) {
        return (StatusCode::FORBIDDEN, reason).into_response();
    }
    next.run(request).await
}

fn verdict(hosts: &AllowedHosts, headers: &HeaderMap) -> Result<(), String> {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
    if !hosts.allows(host) {
        return Err(format!(
            "Forbidden: Host '{host}' is not allowed. cairn serve answers loopback names only; start it with \
             --allowed-host {} to accept this name.",
            strip_port(host)
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
        // `null` is what sandboxed frames, `file:` pages and data URLs send: never one of ours.
        if origin == "null" || !hosts.allows(authority) {
            return Err(format!("Forbidden: Origin '{origin}' is not allowed."));
        }
    }
    Ok(())
}

/// `host:port` → `host`; `[::1]:80` → `[::1]`.
fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.split_once(']').map_or(authority, |(h, _)| &authority[..h.len() + 1]);
    }
    authority.rsplit_once(':').map_or(authority, |(h, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) { h } else { authority }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    #[test]
    fn loopback_hosts_pass_and_others_are_refused_with_a_fix() {
        let hosts = AllowedHosts::new(&[]);
        for ok in ["127.0.0.1:7777", "localhost", "LOCALHOST:1", "[::1]:7777"] {
            assert!(verdict(&hosts, &headers(ok, None)).is_ok(), "{ok}");
        }
        let err = verdict(&hosts, &headers("evil.example:7777", None)).unwrap_err();
        assert!(err.contains("--allowed-host evil.example"), "{err}");
        assert!(verdict(&AllowedHosts::new(&["cairn.lan".into()]), &headers("cairn.lan:80", None)).is_ok());
    }

    #[test]
    fn a_foreign_origin_is_refused_even_on_a_loopback_host() {
        let hosts = AllowedHosts::new(&[]);
        assert!(verdict(&hosts, &headers("127.0.0.1:7777", Some("http://127.0.0.1:7777"))).is_ok());
        assert!(verdict(&hosts, &headers("127.0.0.1:7777", Some("https://evil.example"))).is_err());
        assert!(verdict(&hosts, &headers("127.0.0.1:7777", Some("null"))).is_err(), "Origin: null is foreign too");
    }
}
