//! The DNS-rebinding and cross-origin guard of every HTTP server cairn runs (`deepwork serve --transport http|sse`
//! here, `cairn serve` through cairn-web), checked before anything else:
//! - the `Host` header must name an allowed host: a loopback name, or one of the extra names, where a name with a port
//!   (`cairn.lan:8443`) allows that port only;
//! - a browser's `Origin`, when sent, must be this server's own: the same scheme, host and port as the request's
//!   `Host` (`https` when a proxy says `X-Forwarded-Proto: https`), an extra name's (`http` or `https`, on its port or
//!   else the scheme's default), or the public URL's. A page on another port of the same host is another origin;
//!   `Origin: null` (sandboxed frames, `file:` pages) is never one of ours;
//! - a request that can change something (any method but `GET`, `HEAD` and `OPTIONS`) must not say it comes from
//!   another site or another origin of this site (`Sec-Fetch-Site: cross-site` or `same-site`).
//!
//! Anything else is `403 Forbidden` with a sentence saying what was refused and what is allowed.

use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

/// Loopback names, allowed on any port.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A `host` or `host:port`, lower case, an IPv6 address without its brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    /// `name`, `name:port`, `[v6]`, `[v6]:port` or a bare IPv6 address; `None` for anything else.
    fn parse(text: &str) -> Option<Authority> {
        let text = text.trim().to_ascii_lowercase();
        let (host, port) = match text.strip_prefix('[') {
            Some(v6) => v6.split_once(']')?,
            None if text.matches(':').count() > 1 => (text.as_str(), ""),
            None => text.find(':').map_or((text.as_str(), ""), |colon| text.split_at(colon)),
        };
        let port = match port {
            "" => None,
            port => Some(port.strip_prefix(':')?.parse().ok()?),
        };
        let valid = !host.is_empty() && !host.contains(['/', '?', '#', '@', ' ', '[', ']']);
        valid.then(|| Authority { host: host.to_owned(), port })
    }
}

/// A web origin: scheme, host and port (the scheme's default when the serialization leaves it out).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: &'static str,
    host: String,
    port: u16,
}

impl Origin {
    /// `http(s)://authority`, as browsers send it; with `path`, also a URL's origin (`https://host/base`).
    fn parse(text: &str, path: bool) -> Option<Origin> {
        let (scheme, rest) = text.trim().split_once("://")?;
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "http" => "http",
            "https" => "https",
            _ => return None,
        };
        let authority = match rest.find(['/', '?', '#']) {
            Some(end) if path => &rest[..end],
            Some(_) => return None,
            None => rest,
        };
        let Authority { host, port } = Authority::parse(authority)?;
        Some(Origin { scheme, host, port: port.unwrap_or(default_port(scheme)) })
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        write!(f, "{}://{host}:{}", self.scheme, self.port)
    }
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

/// Why the guard refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `Host` names no allowed host.
    Host {
        /// The `Host` header as sent.
        host: String,
        /// The allowed names, for the message.
        allowed: String,
    },
    /// `Origin` is not this server's.
    Origin {
        /// The `Origin` header as sent.
        origin: String,
        /// The request's own origin, for the message.
        own: String,
    },
    /// A state-changing request says it comes from another site or origin.
    CrossSite {
        /// The `Sec-Fetch-Site` value.
        site: String,
    },
}

impl Refusal {
    /// The host name (without its port) of a refused `Host`, to suggest allowing it.
    pub fn refused_name(&self) -> Option<String> {
        match self {
            Refusal::Host { host, .. } => Some(Authority::parse(host).map_or_else(|| host.clone(), |a| a.host)),
            _ => None,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Host { host, allowed } => {
                write!(f, "Forbidden: Host '{host}' is not allowed. This server answers {allowed} only.")
            }
            Refusal::Origin { origin, own } => write!(
                f,
                "Forbidden: Origin '{origin}' is not allowed. Only pages of this server's own origin ({own}: the \
                 same scheme, host and port) may call it."
            ),
            Refusal::CrossSite { site } => write!(
                f,
                "Forbidden: a browser request from another site or origin (Sec-Fetch-Site: {site}) may not change \
                 anything here; use this server's own pages, or call it from a program rather than a web page."
            ),
        }
    }
}

/// The hosts and origins a request may address and come from.
#[derive(Debug, Clone)]
pub struct AllowedHosts {
    /// The names allowed besides loopback.
    extra: Arc<[Authority]>,
    /// As given, for messages.
    names: Arc<str>,
    /// The origin of the server's public URL, when it has one.
    public: Option<Origin>,
}

impl AllowedHosts {
    /// Loopback names plus `extra` (`name` or `name:port`; an entry that is neither matches nothing).
    pub fn new(extra: &[String]) -> AllowedHosts {
        let names: Vec<String> = LOOPBACK.iter().map(|n| n.to_string()).chain(extra.iter().cloned()).collect();
        AllowedHosts {
            extra: extra.iter().filter_map(|name| Authority::parse(name)).collect(),
            names: names.join(", ").into(),
            public: None,
        }
    }

    /// These hosts, and the origin of `url` (the server's public address, e.g. `https://cairn.example.com`).
    pub fn with_public_url(mut self, url: Option<&str>) -> AllowedHosts {
        self.public = url.and_then(|url| Origin::parse(url, true));
        self
    }

    /// `router` with the guard in front of every route.
    pub(crate) fn protect(self, router: Router) -> Router {
        router.layer(middleware::from_fn_with_state(self, check))
    }

    /// Whether a request of `method` with `headers` may be served.
    pub fn check(&self, method: &Method, headers: &HeaderMap) -> Result<(), Refusal> {
        let named = |name: &str| headers.get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let host = named(header::HOST.as_str()).unwrap_or_default();
        let scheme = match headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()) {
            Some(proto) if proto.trim().eq_ignore_ascii_case("https") => "https",
            _ => "http",
        };
        let own = Authority::parse(&host)
            .map(|a| Origin { scheme, port: a.port.unwrap_or(default_port(scheme)), host: a.host })
            .filter(|own| self.allows_host(own));
        let Some(own) = own else {
            return Err(Refusal::Host { host, allowed: self.names.to_string() });
        };
        if let Some(origin) = named(header::ORIGIN.as_str()) {
            if !Origin::parse(&origin, false).is_some_and(|o| o == own || self.is_extra_origin(&o)) {
                return Err(Refusal::Origin { origin, own: own.to_string() });
            }
        }
        let changing = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        match named("sec-fetch-site").map(|s| s.trim().to_ascii_lowercase()) {
            Some(site) if changing && (site == "cross-site" || site == "same-site") => Err(Refusal::CrossSite { site }),
            _ => Ok(()),
        }
    }

    /// Whether `own` (the request's `Host`, on its port) is a loopback name or an extra name.
    fn allows_host(&self, own: &Origin) -> bool {
        LOOPBACK.contains(&own.host.as_str())
            || self.extra.iter().any(|e| e.host == own.host && e.port.is_none_or(|port| port == own.port))
    }

    /// Whether `origin` is an extra name's (on its port, else the scheme's default) or the public URL's.
    fn is_extra_origin(&self, origin: &Origin) -> bool {
        let port = |e: &Authority| e.port.unwrap_or(default_port(origin.scheme));
        let named = |e: &Authority| e.host == origin.host && port(e) == origin.port;
        self.extra.iter().any(named) || self.public.as_ref() == Some(origin)
    }
}

async fn check(State(hosts): State<AllowedHosts>, request: Request, next: Next) -> Response {
    match hosts.check(request.method(), request.headers()) {
        Err(refusal) => (StatusCode::FORBIDDEN, refusal.to_string()).into_response(),
        Ok(()) => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn get(hosts: &AllowedHosts, pairs: &[(&'static str, &str)]) -> Result<(), Refusal> {
        hosts.check(&Method::GET, &headers(pairs))
    }

    #[test]
    fn only_allowed_hosts_pass() {
        let hosts = AllowedHosts::new(&[]);
        for ok in ["localhost", "LOCALHOST:8000", "127.0.0.1:1", "[::1]:80", "[::1]"] {
            assert_eq!(get(&hosts, &[("host", ok)]), Ok(()), "{ok}");
        }
        let refused = ["evil.example", "evil.example:8000", "", "10.0.0.1", "[::2]:80", "localhost.evil.example"];
        for bad in refused.into_iter().chain(["localhost:x"]) {
            let refusal = get(&hosts, &[("host", bad)]).unwrap_err();
            assert!(refusal.to_string().contains("localhost, 127.0.0.1, ::1"), "{refusal}");
        }
        assert_eq!(get(&AllowedHosts::new(&["Cairn.lan".into()]), &[("host", "cairn.lan:80")]), Ok(()));
        let refusal = get(&hosts, &[("host", "Evil.example:8000")]).unwrap_err();
        assert_eq!(refusal.refused_name().as_deref(), Some("evil.example"));
    }

    #[test]
    fn an_allowed_name_with_a_port_allows_that_port_only() {
        let hosts = AllowedHosts::new(&["cairn.lan:8443".into(), "[fd00::1]:9000".into(), "fd00::2".into()]);
        for ok in ["cairn.lan:8443", "[fd00::1]:9000", "[fd00::2]:1234"] {
            assert_eq!(get(&hosts, &[("host", ok)]), Ok(()), "{ok}");
        }
        for bad in ["cairn.lan", "cairn.lan:8444", "[fd00::1]:9001"] {
            assert!(matches!(get(&hosts, &[("host", bad)]), Err(Refusal::Host { .. })), "{bad}");
        }
        let forwarded = [("host", "cairn.lan:443"), ("x-forwarded-proto", "https")];
        assert!(get(&AllowedHosts::new(&["cairn.lan:443".into()]), &[("host", "cairn.lan"), forwarded[1]]).is_ok());
        assert!(get(&AllowedHosts::new(&["cairn.lan:443".into()]), &forwarded).is_ok());
    }

    #[test]
    fn a_browser_origin_must_be_the_servers_own() {
        let hosts = AllowedHosts::new(&[]);
        let on = |host: &str, origin: &str| get(&hosts, &[("host", host), ("origin", origin)]);
        for (host, origin) in [
            ("127.0.0.1:8000", "http://127.0.0.1:8000"),
            ("LOCALHOST", "http://localhost"),
            ("localhost", "http://localhost:80"),
            ("[::1]:3000", "http://[::1]:3000"),
        ] {
            assert_eq!(on(host, origin), Ok(()), "{host} {origin}");
        }
        for origin in [
            "http://127.0.0.1:8001",
            "http://localhost:8000",
            "https://127.0.0.1:8000",
            "http://127.0.0.1",
            "http://127.0.0.1:8000/",
            "https://evil.example",
            "null",
            "file://",
            "chrome-extension://localhost",
            "localhost",
        ] {
            let refusal = on("127.0.0.1:8000", origin).unwrap_err();
            let text = refusal.to_string();
            assert!(text.starts_with(&format!("Forbidden: Origin '{origin}'")), "{text}");
            assert!(text.contains("http://127.0.0.1:8000"), "names the server's own origin: {text}");
        }
        let forwarded = [("host", "cairn.lan"), ("x-forwarded-proto", "https"), ("origin", "https://cairn.lan")];
        assert_eq!(get(&AllowedHosts::new(&["cairn.lan".into()]), &forwarded), Ok(()));
    }

    #[test]
    fn extra_names_and_the_public_url_are_origins_on_their_ports() {
        let hosts = AllowedHosts::new(&["proxy.example".into(), "cairn.lan:8443".into()])
            .with_public_url(Some("https://cairn.example.com:8443/base/"));
        let from = |origin: &str| get(&hosts, &[("host", "127.0.0.1:7777"), ("origin", origin)]);
        let ours = ["https://proxy.example", "http://proxy.example:80", "https://cairn.lan:8443"];
        for ok in ours.into_iter().chain(["http://cairn.lan:8443", "https://cairn.example.com:8443"]) {
            assert_eq!(from(ok), Ok(()), "{ok}");
        }
        let others = ["https://proxy.example:8443", "https://cairn.lan", "https://cairn.example.com"];
        for bad in others.into_iter().chain(["http://cairn.example.com:8443"]) {
            assert!(matches!(from(bad), Err(Refusal::Origin { .. })), "{bad}");
        }
        assert_eq!(AllowedHosts::new(&[]).with_public_url(Some("not a url")).public, None);
    }

    #[test]
    fn a_change_from_another_site_or_origin_is_refused_but_a_read_is_not() {
        let hosts = AllowedHosts::new(&[]);
        for site in ["cross-site", "same-site", "Same-Site"] {
            let pairs = [("host", "127.0.0.1:8000"), ("sec-fetch-site", site)];
            for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
                let refusal = hosts.check(&method, &headers(&pairs)).unwrap_err();
                let named = format!("Sec-Fetch-Site: {}", site.to_ascii_lowercase());
                assert!(refusal.to_string().contains(&named), "{refusal}");
            }
            assert_eq!(hosts.check(&Method::GET, &headers(&pairs)), Ok(()), "a link from elsewhere opens a page");
        }
        for site in ["same-origin", "none"] {
            let pairs = [("host", "127.0.0.1:8000"), ("sec-fetch-site", site)];
            assert_eq!(hosts.check(&Method::POST, &headers(&pairs)), Ok(()), "{site}");
        }
    }
}
