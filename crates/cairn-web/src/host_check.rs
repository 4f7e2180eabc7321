//! The DNS-rebinding and cross-origin guard in front of every route of `cairn serve`: cairn-mcp's [`AllowedHosts`]
//! (a loopback or `--allowed-host` `Host`; an `Origin` of the same scheme, host and port as the server's own, an
//! allowed host's or `ROSCOE_PUBLIC_URL`'s; no state-changing request from another site or origin by
//! `Sec-Fetch-Site`). A refusal is `403 Forbidden` with the reason, and for a `Host` the flag that allows it.

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use cairn_mcp::{AllowedHosts, Refusal};

/// `router` with the check in front of every route.
pub(crate) fn layer(router: Router, hosts: AllowedHosts) -> Router {
    router.layer(middleware::from_fn_with_state(hosts, check))
}

async fn check(State(hosts): State<AllowedHosts>, request: Request, next: Next) -> Response {
    match hosts.check(request.method(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => (StatusCode::FORBIDDEN, reason(&refusal)).into_response(),
    }
}

/// The refusal's sentence, with the `cairn serve` flag that allows a refused host name.
fn reason(refusal: &Refusal) -> String {
    match refusal.refused_name() {
        Some(name) => format!("{refusal} Start cairn serve with --allowed-host {name} to accept this name."),
        None => refusal.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue, Method, header};

    #[test]
    fn a_refused_host_is_told_the_flag_that_allows_it() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("evil.example:7777"));
        let refusal = AllowedHosts::new(&[]).check(&Method::GET, &headers).unwrap_err();
        assert!(reason(&refusal).ends_with("--allowed-host evil.example to accept this name."), "{}", reason(&refusal));
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:7777"));
        headers.insert(header::ORIGIN, HeaderValue::from_static("http://127.0.0.1:8080"));
        let refusal = AllowedHosts::new(&[]).check(&Method::GET, &headers).unwrap_err();
        assert!(!reason(&refusal).contains("--allowed-host"), "{}", reason(&refusal));
    }
}
