//! The security headers on every answer of `cairn serve`: pages, REST, MCP, errors and refusals alike.
//!
//! The Content-Security-Policy lets a page load scripts, styles, images and connections (htmx's requests, the live
//! run page's event stream) from this server only, and nothing inline: the templates carry no `<script>` blocks,
//! `style=` attributes or `on…=` handlers, and htmx is told not to inject its indicator stylesheet
//! (`<meta name="htmx-config">` in `base.html`) and never needs `eval`, since no template uses `hx-on` or `js:`
//! values. Forms post to this server only; no other site may frame a page (`frame-ancestors 'none'`, and
//! `X-Frame-Options: DENY` for browsers older than CSP 2). Answers are never sniffed as another type, the
//! `Referer` goes to this server only, and the pages keep a browsing context of their own
//! (`Cross-Origin-Opener-Policy`) whose resources other sites cannot embed (`Cross-Origin-Resource-Policy`). A header
//! a handler set itself is kept.

use axum::Router;
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware;
use axum::response::Response;

/// What a page may load: its own server's scripts, styles, images and connections, nothing inline.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Every header and its value.
const HEADERS: [(HeaderName, &str); 6] = [
    (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "same-origin"),
    (header::X_FRAME_OPTIONS, "DENY"),
    (HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
    (HeaderName::from_static("cross-origin-resource-policy"), "same-origin"),
];

/// `router` with the headers added to every answer.
pub(crate) fn layer(router: Router) -> Router {
    router.layer(middleware::map_response(add))
}

async fn add(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in HEADERS {
        headers.entry(name).or_insert(HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::extract::Request;
    use axum::routing::get;
    use tower::ServiceExt;

    #[tokio::test]
    async fn every_answer_gets_the_headers_and_a_handlers_own_header_is_kept() {
        let router = layer(
            Router::new()
                .route("/", get(|| async { "page" }))
                .route("/framed", get(|| async { ([(header::X_FRAME_OPTIONS, "SAMEORIGIN")], "framed") })),
        );
        let missing = router.clone().oneshot(Request::get("/nowhere").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(missing.status(), 404);
        for (name, value) in HEADERS {
            assert_eq!(missing.headers()[&name], value, "{name} on a 404");
        }
        let framed = router.oneshot(Request::get("/framed").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(framed.headers()[header::X_FRAME_OPTIONS], "SAMEORIGIN");
        assert_eq!(framed.headers()[header::CONTENT_SECURITY_POLICY], CONTENT_SECURITY_POLICY);
    }
}
