//! The REST client of `cairn work items|evidence --url`: requests to the `/api` of a `cairn serve` with
//! `Authorization: Bearer <token>`, answered by the JSON body or by a [`Failure`] carrying the work surface's stable
//! error code. It knows HTTP, not the routes: which request each command makes is `work_items_cli`'s.

use std::time::Duration;

use reqwest::{Method, StatusCode, Url};
use serde_json::Value;

/// Why a call failed: the work surface's stable code (`conflict`, `not_found`, …; `unavailable` when the server
/// could not be reached or answered something else) and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// The stable code.
    pub(crate) code: String,
    /// What was wrong and what to do.
    pub(crate) message: String,
}

impl From<cairn_work::Error> for Failure {
    fn from(error: cairn_work::Error) -> Failure {
        Failure { code: error.code().to_owned(), message: error.to_string() }
    }
}

/// A `cairn serve` at a base URL and the bearer token to call it with.
#[derive(Debug)]
pub(crate) struct Remote {
    base: Url,
    token: String,
    http: reqwest::Client,
}

/// `text` as the base URL of a server (for clap's `value_parser`): `http://HOST:PORT` or `https://…`.
pub(crate) fn parse_base_url(text: &str) -> Result<Url, String> {
    let url =
        Url::parse(text.trim()).map_err(|e| format!("'{text}' is not a URL ({e}): use e.g. http://127.0.0.1:8080"))?;
    match url.scheme() {
        "http" | "https" if url.query().is_none() => Ok(url),
        "http" | "https" => Err(format!("'{text}': give the server's base URL without a query")),
        other => Err(format!("'{text}': the scheme is http or https, not {other}")),
    }
}

impl Remote {
    /// A client of the server at `base`, acting with `token`.
    pub(crate) fn new(base: Url, token: String) -> anyhow::Result<Remote> {
        // reqwest is built without a default TLS provider; ring is the one the tree already has.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .timeout(Duration::from_secs(120))
            .build()?;
        Ok(Remote { base, token, http })
    }

    /// `GET` the route under the base URL made of `segments`, with the non-empty `query` pairs.
    pub(crate) async fn get(&self, segments: &[&str], query: &[(&str, String)]) -> Result<Value, Failure> {
        let mut url = self.url(segments);
        let pairs: Vec<_> = query.iter().filter(|(_, value)| !value.is_empty()).collect();
        if !pairs.is_empty() {
            url.query_pairs_mut().extend_pairs(pairs.iter().map(|(key, value)| (*key, value.as_str())));
        }
        self.send(self.http.get(url)).await
    }

    /// Sends `body` as JSON with `method` to the route made of `segments`.
    pub(crate) async fn send_json(&self, method: Method, segments: &[&str], body: Value) -> Result<Value, Failure> {
        self.send(self.http.request(method, self.url(segments)).json(&body)).await
    }

    /// The base URL with `segments` appended to its path, each percent-encoded.
    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Value, Failure> {
        let unavailable = |message: String| Failure { code: "unavailable".into(), message };
        let response = request.bearer_auth(&self.token).send().await.map_err(|error| {
            unavailable(format!(
                "could not reach cairn serve at {}: {}; check --url (or CAIRN_URL) and that the server runs",
                self.base,
                causes(&error)
            ))
        })?;
        let status = response.status();
        let text = response.text().await.map_err(|e| unavailable(format!("{}: the answer broke off: {e}", self.base)))?;
        let body: Option<Value> = serde_json::from_str(&text).ok();
        if status.is_success() {
            let not_json = || unavailable(format!("{} answered {status} without JSON; is it cairn serve?", self.base));
            return body.ok_or_else(not_json);
        }
        Err(refusal(status, body.as_ref()).unwrap_or_else(|| {
            unavailable(format!("{} answered {status}, not a cairn error; is --url a cairn serve?", self.base))
        }))
    }
}

/// `error` and what caused it, `: `-separated (reqwest's own message leaves out why a connection failed).
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// The failure an error answer of cairn serve says: the work surface's `{error: {code, message}}`, or the `{error,
/// code}` of the rest of `/api`; a refused token (401) says it is `CAIRN_TOKEN` that was refused.
fn refusal(status: StatusCode, body: Option<&Value>) -> Option<Failure> {
    let body = body?;
    let (code, message) = match (body["error"]["code"].as_str(), body["error"]["message"].as_str()) {
        (Some(code), Some(message)) => (code, message),
        _ => (body["code"].as_str()?, body["error"].as_str()?),
    };
    let message = match status {
        StatusCode::UNAUTHORIZED => format!("the server refused CAIRN_TOKEN: {message}"),
        _ => message.to_owned(),
    };
    Some(Failure { code: code.to_owned(), message })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn base_urls_are_http_without_a_query() {
        assert!(parse_base_url("http://127.0.0.1:8080").is_ok());
        assert!(parse_base_url("ftp://host").unwrap_err().contains("http or https"));
        assert!(parse_base_url("http://host/?a=b").unwrap_err().contains("without a query"));
        assert!(parse_base_url("localhost:8080/x y").is_err());
    }

    #[test]
    fn error_answers_keep_their_code() {
        let conflict = json!({"error": {"code": "conflict", "message": "held by \"ada\"", "details": {}}});
        let refused = refusal(StatusCode::CONFLICT, Some(&conflict)).unwrap();
        assert_eq!((refused.code.as_str(), refused.message.as_str()), ("conflict", "held by \"ada\""));
        let gate = json!({"error": {"code": "unauthenticated", "message": "the token is unknown", "details": {}}});
        let refused = refusal(StatusCode::UNAUTHORIZED, Some(&gate)).unwrap();
        assert_eq!(refused.code, "unauthenticated");
        assert_eq!(refused.message, "the server refused CAIRN_TOKEN: the token is unknown");
        let roscoe = json!({"error": "Run not found.", "code": "not_found"});
        assert_eq!(refusal(StatusCode::NOT_FOUND, Some(&roscoe)).unwrap().code, "not_found");
        assert_eq!(refusal(StatusCode::NOT_FOUND, Some(&json!("<html>"))), None);
        assert_eq!(refusal(StatusCode::NOT_FOUND, None), None);
    }
}
