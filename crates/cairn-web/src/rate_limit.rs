//! Rate limits on the MCP endpoints (`/mcp`, `/roscoe/mcp`, `/deepwork/mcp`), the REST API (`/api/…`) and the
//! webhooks (`/hooks/…`).
//!
//! Each client has a budget of [`RateLimit::per_minute`] requests a minute, of which [`RateLimit::burst`] may come at
//! once (governor's keyed GCRA limiter). A client is its `Authorization` header when it sends one (kept as the first
//! 16 bytes of its SHA-256, never the token itself), otherwise its address: the peer's, or with
//! [`RateLimit::trust_forwarded_for`] the last address of `X-Forwarded-For` (the one the reverse proxy in front
//! added). IPv6 addresses count by their /64 network, as one host usually holds a whole one. Over the budget, the
//! answer is `429 Too Many Requests` with `Retry-After` (whole seconds) and a JSON body
//! `{ "error": "…", "code": "rate_limited", "retry_after_seconds": N }`; nothing behind the limit runs.
//!
//! A made-up token gets a budget of its own, so the limit does not stop a client that sends a new bogus token with
//! every request; each such request is refused with 401 by the token check behind it.
//!
//! MCP protocol housekeeping is never counted: `initialize`, `ping`, notifications, responses to the server, opening a
//! session's stream and ending it; a crowd of agents sharing one token spends the budget on calls only.
//!
//! The table of clients is swept every minute (every second while it holds more than [`CROWDED`] clients): a client
//! whose budget is full again, which at the defaults takes a few seconds after its last request, is dropped.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::error::ApiError;

/// How `cairn serve` limits request rates (`--rate-limit`, `--rate-limit-burst`, `--trust-forwarded-for`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests a minute each client may make; 0 turns the limit off.
    pub per_minute: u32,
    /// How many of them may come at once (at most `per_minute`).
    pub burst: u32,
    /// Whether a request's client address is the last one of its `X-Forwarded-For` header (set this behind a
    /// reverse proxy, never on a server clients reach directly: they could name any address).
    pub trust_forwarded_for: bool,
}

impl RateLimit {
    /// The default budget: 100 requests a second.
    pub const DEFAULT_PER_MINUTE: u32 = 6000;
    /// The default burst: 300 requests at once.
    pub const DEFAULT_BURST: u32 = 300;
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit { per_minute: Self::DEFAULT_PER_MINUTE, burst: Self::DEFAULT_BURST, trust_forwarded_for: false }
    }
}

/// Above this many clients in the table, it is swept every second instead of every minute.
const CROWDED: usize = 10_000;

/// Who a budget belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Client {
    /// The first 16 bytes of the SHA-256 of the `Authorization` header.
    Token([u8; 16]),
    /// An IPv4 address, or an IPv6 /64 network.
    Address(IpAddr),
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Client::Token(hash) => {
                write!(f, "the token sha256:{:02x}{:02x}{:02x}{:02x}…", hash[0], hash[1], hash[2], hash[3])
            }
            Client::Address(address) => write!(f, "the address {address}"),
        }
    }
}

struct Limiter {
    budgets: DefaultKeyedRateLimiter<Client>,
    settings: RateLimit,
    swept: Mutex<Instant>,
}

/// `router` with the limit in front of its MCP endpoints and REST API (unchanged when the limit is off).
pub(crate) fn layer(router: Router, settings: RateLimit) -> Router {
    let Some(per_minute) = NonZeroU32::new(settings.per_minute) else {
        return router;
    };
    let burst = NonZeroU32::new(settings.burst.min(settings.per_minute)).unwrap_or(NonZeroU32::MIN);
    let limiter = Limiter {
        budgets: DefaultKeyedRateLimiter::dashmap(Quota::per_minute(per_minute).allow_burst(burst)),
        settings: RateLimit { burst: burst.get(), ..settings },
        swept: Mutex::new(Instant::now()),
    };
    router.layer(middleware::from_fn_with_state(Arc::new(limiter), check))
}

/// Whether requests to `path` count: the MCP endpoints, the REST API and the webhooks.
fn limited(path: &str) -> bool {
    ["/mcp", "/roscoe/mcp", "/deepwork/mcp", "/api", "/hooks"]
        .iter()
        .any(|prefix| path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('/')))
}

async fn check(State(limiter): State<Arc<Limiter>>, request: Request, next: Next) -> Response {
    if !limited(request.uri().path()) {
        return next.run(request).await;
    }
    let request = match housekeeping(request).await {
        Ok(Housekeeping::Yes(request)) => return next.run(request).await,
        Ok(Housekeeping::No(request)) => request,
        Err(unreadable) => return unreadable,
    };
    limiter.sweep();
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0.ip());
    let client = client(request.headers(), peer, limiter.settings.trust_forwarded_for);
    match limiter.budgets.check_key(&client) {
        Ok(()) => next.run(request).await,
        Err(not_until) => {
            let wait = not_until.wait_time_from(limiter.budgets.clock().now());
            too_many(client, wait, limiter.settings)
        }
    }
}

/// The most of a posted MCP message read to tell housekeeping from a call; a larger one is a call.
const HOUSEKEEPING_BYTES: u64 = 64 * 1024;

/// A request, and whether it is MCP protocol housekeeping.
enum Housekeeping {
    Yes(Request),
    No(Request),
}

/// Whether `request` is protocol housekeeping, which no budget counts: ending a session (`DELETE`), opening its
/// stream (`GET`), and a posted `initialize`, `ping`, notification or response ([`cairn_mcp::is_housekeeping`]).
/// A posted body that says it is at most [`HOUSEKEEPING_BYTES`] long is read to tell; the request goes on with it.
async fn housekeeping(request: Request) -> Result<Housekeeping, Response> {
    let path = request.uri().path();
    if path == "/api" || path.starts_with("/api/") || path.starts_with("/hooks/") {
        return Ok(Housekeeping::No(request));
    }
    match *request.method() {
        Method::DELETE | Method::GET => return Ok(Housekeeping::Yes(request)),
        Method::POST => {}
        _ => return Ok(Housekeeping::No(request)),
    }
    let length = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if !length.is_some_and(|length| length <= HOUSEKEEPING_BYTES) {
        return Ok(Housekeeping::No(request));
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, HOUSEKEEPING_BYTES as usize).await else {
        let message = "the request body could not be read whole, or was longer than its Content-Length said";
        let body = json!({ "error": message, "code": "bad_request" });
        return Err(ApiError { status: StatusCode::BAD_REQUEST, body }.into_response());
    };
    let yes = cairn_mcp::is_housekeeping(&bytes);
    let request = Request::from_parts(parts, Body::from(bytes));
    Ok(if yes { Housekeeping::Yes(request) } else { Housekeeping::No(request) })
}

impl Limiter {
    /// Drops the clients whose budget is full again, at most every minute (every second when crowded).
    fn sweep(&self) {
        let Ok(mut swept) = self.swept.try_lock() else {
            return;
        };
        let every = if self.budgets.len() > CROWDED { Duration::from_secs(1) } else { Duration::from_secs(60) };
        if swept.elapsed() >= every {
            *swept = Instant::now();
            self.budgets.retain_recent();
            self.budgets.shrink_to_fit();
        }
    }
}

/// The client a request counts for: its `Authorization` header, else its address (`peer`, or the last address of
/// `X-Forwarded-For` when that is trusted).
fn client(headers: &HeaderMap, peer: Option<IpAddr>, trust_forwarded_for: bool) -> Client {
    if let Some(authorization) = headers.get(header::AUTHORIZATION) {
        let digest = Sha256::digest(authorization.as_bytes());
        let mut hash = [0; 16];
        hash.copy_from_slice(&digest[..16]);
        return Client::Token(hash);
    }
    let forwarded = trust_forwarded_for.then(|| forwarded_for(headers)).flatten();
    Client::Address(network(forwarded.or(peer).unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))))
}

/// The last address of the last `X-Forwarded-For` header (a port after it, as some proxies add, is ignored).
fn forwarded_for(headers: &HeaderMap) -> Option<IpAddr> {
    let value = headers.get_all(HeaderName::from_static("x-forwarded-for")).iter().next_back()?.to_str().ok()?;
    let last = value.rsplit(',').next()?.trim();
    last.parse::<IpAddr>().ok().or_else(|| last.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

/// An IPv4 address as it is; an IPv6 address as its /64 network (IPv4-mapped ones as IPv4).
fn network(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(v6.to_bits() & !((1u128 << 64) - 1))),
        v4 => v4,
    }
}

/// `429` with `Retry-After` and a body saying whose budget ran out and when to come back.
fn too_many(client: Client, wait: Duration, settings: RateLimit) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let seconds = seconds.max(1);
    let RateLimit { per_minute, burst, .. } = settings;
    tracing::debug!("rate limit: {client} is over its budget");
    let subject = match client {
        Client::Token(_) => "this token",
        Client::Address(_) => "this address",
    };
    let message = format!(
        "too many requests from {subject}: at most {per_minute} a minute ({burst} at once); retry in {seconds} s"
    );
    let body = json!({ "error": message, "code": "rate_limited", "retry_after_seconds": seconds });
    let mut response = ApiError { status: StatusCode::TOO_MANY_REQUESTS, body }.into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use tower::ServiceExt;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(HeaderName::from_static(name), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn the_mcp_endpoints_the_rest_api_and_the_webhooks_count() {
        for path in ["/mcp", "/roscoe/mcp", "/deepwork/mcp", "/api/work/items", "/api", "/hooks/roscoe/global/x"] {
            assert!(limited(path), "{path}");
        }
        for path in ["/", "/work", "/apiary", "/mcpx", "/healthz", "/.well-known/oauth-protected-resource/mcp"] {
            assert!(!limited(path), "{path}");
        }
    }

    #[test]
    fn a_client_is_its_token_else_its_address() {
        let peer = Some("127.0.0.1".parse().unwrap());
        let a = client(&headers(&[("authorization", "Bearer a")]), peer, false);
        let b = client(&headers(&[("authorization", "Bearer b")]), peer, false);
        assert!(matches!(a, Client::Token(_)) && a != b);
        assert!(!a.to_string().contains("Bearer"), "the token is never shown: {a}");
        let forwarded = headers(&[("x-forwarded-for", "203.0.113.9, 198.51.100.7")]);
        assert_eq!(client(&forwarded, peer, false), Client::Address("127.0.0.1".parse().unwrap()), "not trusted");
        let proxys = Client::Address("198.51.100.7".parse().unwrap());
        assert_eq!(client(&forwarded, peer, true), proxys, "the entry the proxy added");
        let two = headers(&[("x-forwarded-for", "203.0.113.9"), ("x-forwarded-for", "[2001:db8::5]:443")]);
        assert_eq!(client(&two, peer, true), Client::Address("2001:db8::".parse().unwrap()), "the last header, by /64");
        let garbage = headers(&[("x-forwarded-for", "unknown")]);
        assert_eq!(client(&garbage, peer, true), Client::Address("127.0.0.1".parse().unwrap()), "else the peer");
        assert_eq!(network("::ffff:10.1.2.3".parse().unwrap()), "10.1.2.3".parse::<IpAddr>().unwrap());
        assert_eq!(network("2001:db8:1:2:3:4:5:6".parse().unwrap()), "2001:db8:1:2::".parse::<IpAddr>().unwrap());
    }

    async fn statuses(settings: RateLimit, count: usize) -> Vec<u16> {
        let router = layer(Router::new().route("/api", get(|| async { "ok" })), settings);
        let mut statuses = Vec::new();
        for _ in 0..count {
            let response = router.clone().oneshot(Request::get("/api").body(Body::empty()).unwrap()).await.unwrap();
            statuses.push(response.status().as_u16());
        }
        statuses
    }

    #[tokio::test]
    async fn protocol_housekeeping_is_never_counted() {
        let one = RateLimit { per_minute: 1, burst: 1, trust_forwarded_for: false };
        let router = layer(Router::new().route("/mcp", axum::routing::any(|body: String| async move { body })), one);
        let post = |message: &str| {
            let body = message.to_owned();
            Request::post("/mcp").header(header::CONTENT_LENGTH, body.len()).body(Body::from(body)).unwrap()
        };
        let housekeeping = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        ];
        for _ in 0..3 {
            for message in housekeeping {
                let answer = router.clone().oneshot(post(message)).await.unwrap();
                assert_eq!(answer.status(), 200, "{message}");
                let echoed = axum::body::to_bytes(answer.into_body(), usize::MAX).await.unwrap();
                assert_eq!(echoed, message.as_bytes(), "the body read to tell goes on whole");
            }
            for method in [Method::GET, Method::DELETE] {
                let request = Request::builder().method(method).uri("/mcp").body(Body::empty()).unwrap();
                assert_eq!(router.clone().oneshot(request).await.unwrap().status(), 200);
            }
        }
        let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"work_claim"}}"#;
        assert_eq!(router.clone().oneshot(post(call)).await.unwrap().status(), 200, "the first call");
        assert_eq!(router.clone().oneshot(post(call)).await.unwrap().status(), 429, "the second is over the budget");
        let chunked = Request::post("/mcp").body(Body::from(housekeeping[2])).unwrap();
        assert_eq!(router.clone().oneshot(chunked).await.unwrap().status(), 429, "a body of unsaid length counts");
    }

    #[tokio::test]
    async fn the_burst_is_at_most_the_budget_and_zero_turns_the_limit_off() {
        let two = RateLimit { per_minute: 2, burst: 300, trust_forwarded_for: false };
        assert_eq!(statuses(two, 3).await, [200, 200, 429], "a burst of 300 is cut to the 2 a minute");
        let off = RateLimit { per_minute: 0, ..two };
        assert!(statuses(off, 1000).await.iter().all(|s| *s == 200));
    }
}
