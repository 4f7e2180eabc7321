//! The DNS-rebinding and cross-site guard of the HTTP transports `deepwork serve` starts: the `Host` header must name
//! an allowed host (loopback unless more are allowed), and a browser's `Origin`, when sent, must name one too.
//! `Origin: null` (what sandboxed frames and `file:` pages send) is refused. Anything else is `403 Forbidden` with a
//! sentence saying what was refused.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

/// The host names a request may address, lower case, without ports.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts(Arc<[String]>);

impl AllowedHosts {
    /// Loopback names plus `extra`.
    pub(crate) fn new(extra: &[String]) -> AllowedHosts {
        let loopback = ["localhost", "127.0.0.1", "::1"].map(str::to_owned);
        AllowedHosts(loopback.into_iter().chain(extra.iter().map(|h| h.to_ascii_lowercase())).collect())
    }

    /// `router` with the guard in front of every route.
    pub(crate) fn protect(self, router: Router) -> Router {
        router.layer(middleware::from_fn_with_state(self, check))
    }

    /// Whether `authority` (`host`, `host:port`, `[v6]:port`) names an allowed host.
    fn allows(&self, authority: &str) -> bool {
        let authority = authority.to_ascii_lowercase();
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split_once(']').map_or("", |(host, _)| host),
            None => authority.rsplit_once(':').map_or(authority.as_str(), |(host, _)| host),
        };
        !host.is_empty() && self.0.iter().any(|allowed| allowed == host)
    }

    /// Why a request with these headers is refused, if it is.
    fn refusal(&self, headers: &HeaderMap) -> Option<String> {
        let named = |name| headers.get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let host = named(header::HOST).unwrap_or_default();
        if !self.allows(&host) {
            return Some(format!(
                "Forbidden: Host '{host}' is not allowed. This server answers {} only.",
                self.names()
            ));
        }
        let origin = named(header::ORIGIN)?;
        let allowed = match origin.split_once("://") {
            Some((scheme, authority)) => {
                matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") && self.allows(authority)
            }
            None => false,
        };
        (!allowed).then(|| {
            format!(
                "Forbidden: Origin '{origin}' is not allowed. This server answers pages served from {} only.",
                self.names()
            )
        })
    }

    fn names(&self) -> String {
        self.0.join(", ")
    }
}

async fn check(State(hosts): State<AllowedHosts>, request: Request, next: Next) -> Response {
    match hosts.refusal(request.headers()) {
        Some(reason) => (StatusCode::FORBIDDEN, reason).into_response(),
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    #[test]
    fn only_allowed_hosts_pass() {
        let hosts = AllowedHosts::new(&[]);
        for ok in ["localhost", "LOCALHOST:8000", "127.0.0.1:1", "[::1]:80"] {
            assert_eq!(hosts.refusal(&headers(ok, None)), None, "{ok}");
        }
        for bad in ["evil.example", "evil.example:8000", "", "10.0.0.1", "[::2]:80", "localhost.evil.example"] {
            let refusal = hosts.refusal(&headers(bad, None)).unwrap();
            assert!(refusal.contains("localhost, 127.0.0.1, ::1"), "{refusal}");
        }
        assert_eq!(AllowedHosts::new(&["Cairn.lan".into()]).refusal(&headers("cairn.lan:80", None)), None);
    }

    #[test]
    fn a_browser_origin_must_name_an_allowed_host() {
        let hosts = AllowedHosts::new(&[]);
        for ok in ["http://127.0.0.1:8000", "http://localhost", "https://[::1]:3000"] {
            assert_eq!(hosts.refusal(&headers("127.0.0.1:8000", Some(ok))), None, "{ok}");
        }
        for bad in ["https://evil.example", "null", "file://", "chrome-extension://localhost", "localhost"] {
            let refusal = hosts.refusal(&headers("127.0.0.1:8000", Some(bad))).unwrap();
            assert!(refusal.starts_with(&format!("Forbidden: Origin '{bad}'")), "{refusal}");
        }
    }
}
