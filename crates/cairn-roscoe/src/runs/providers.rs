//! Model providers: what answers the server's model calls, behind one small trait ([`Provider`]: one request, one
//! attempt) — the Anthropic Messages API ([`anthropic`]), any OpenAI-compatible Chat Completions server
//! ([`openai`]) and headless Claude Code ([`claude_cli`]). [`retry`] makes a call out of attempts: a time limit per
//! attempt, retries with backoff and jitter on 429, 529, 5xx and lost connections, `Retry-After` honoured.
//!
//! Which provider serves a model is [`resolve`]d at call time: `roscoe.yaml`'s `models.providers` (an exact id, then
//! the longest `prefix*`), else the defaults — a `claude-*` model goes to `anthropic` when its API key is there,
//! else to `claude-cli` when the `claude` command is; any other model to `openai` when `OPENAI_API_KEY` or
//! `OPENAI_BASE_URL` is set. API keys come from the environment or a key file at each call, and are never stored,
//! logged or put in an error.

pub(crate) mod anthropic;
pub(crate) mod claude_cli;
pub(crate) mod openai;
pub(crate) mod retry;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use async_trait::async_trait;

use super::settings::{Kind, ProviderSettings, Settings};
use crate::engine::Billing;

/// One model call: a prompt for a model.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    /// The model id.
    pub(crate) model: String,
    /// The whole prompt, sent as one user message.
    pub(crate) prompt: String,
    /// Where a local agent (the `claude` CLI) works: the run's project root.
    pub(crate) cwd: PathBuf,
}

/// Token usage as a provider reports it; `input` counts every input token, cache reads and writes included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Input tokens.
    pub(crate) input: i64,
    /// Output tokens.
    pub(crate) output: i64,
    /// Of the input, read from the prompt cache.
    pub(crate) cache_read: i64,
    /// Of the input, written to the prompt cache.
    pub(crate) cache_creation: i64,
}

/// A provider's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Reply {
    /// The answer's text.
    pub(crate) text: String,
    /// Its usage.
    pub(crate) usage: Usage,
    /// The USD the provider itself reported (the `claude` CLI's `total_cost_usd`).
    pub(crate) cost_usd: Option<f64>,
    /// The provider's session (the `claude` CLI's `session_id`).
    pub(crate) session_id: Option<String>,
}

/// Why an attempt failed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Failure {
    /// Worth another attempt: rate limited, overloaded, a server error, no connection.
    Transient {
        /// What happened.
        message: String,
        /// How long the provider asked to wait (`Retry-After`).
        retry_after: Option<Duration>,
    },
    /// Not: a refused request or key, an answer that cannot be read.
    Permanent(String),
}

/// A model provider: one attempt at one request.
#[async_trait]
pub(crate) trait Provider: Send + Sync {
    /// Who pays for its calls.
    fn billing(&self) -> Billing;

    /// The most tokens one call's answer may have (`None`: no limit is set, as for the `claude` CLI's agent loop).
    fn max_output_tokens(&self) -> Option<u32>;

    /// The most USD one call may cost whatever its tokens (the `claude` CLI's `--max-budget-usd`).
    fn max_call_usd(&self) -> Option<f64> {
        None
    }

    /// Makes one attempt. Dropping the future abandons it (the HTTP request is dropped, the process killed).
    async fn call(&self, request: &Request) -> Result<Reply, Failure>;
}

/// A provider chosen for a model, with its name (for the call records).
pub(crate) struct Resolved {
    /// Its name in `roscoe.yaml` (or built in).
    pub(crate) name: String,
    /// The provider.
    pub(crate) provider: Box<dyn Provider>,
}

/// The provider that serves `model` under `settings`, ready to call; the message says why there is none.
pub(crate) fn resolve(settings: &Settings, model: &str) -> Result<Resolved, String> {
    let name = route(settings, model).ok_or_else(|| unserved(model))?;
    let found = settings.providers.get(&name).expect("routes name known providers");
    let provider: Box<dyn Provider> = match found.kind {
        Kind::Anthropic => Box::new(anthropic::Anthropic::new(&name, found)?),
        Kind::OpenAi => Box::new(openai::OpenAi::new(&name, found)?),
        Kind::ClaudeCli => Box::new(claude_cli::ClaudeCli::new(found)),
    };
    Ok(Resolved { name, provider })
}

/// Why no provider serves `model`, and how to give it one.
pub(crate) fn unserved(model: &str) -> String {
    format!(
        "no model provider serves model '{model}': set ANTHROPIC_API_KEY (or install the claude CLI) for Claude \
         models, OPENAI_API_KEY or OPENAI_BASE_URL for others, or name its provider in roscoe.yaml models.providers"
    )
}

/// Whether some provider serves `model` (for `test_workflow`'s fan-out check).
pub(crate) fn serves(settings: &Settings, model: &str) -> bool {
    route(settings, model).is_some()
}

/// The name of the provider of `model`: `models.providers` first, then the defaults.
fn route(settings: &Settings, model: &str) -> Option<String> {
    let exact = settings.routes.iter().find(|(pattern, _)| pattern == model);
    let prefix = settings
        .routes
        .iter()
        .filter(|(pattern, _)| pattern.strip_suffix('*').is_some_and(|p| model.starts_with(p)))
        .max_by_key(|(pattern, _)| pattern.len());
    if let Some((_, name)) = exact.or(prefix) {
        return Some(name.clone());
    }
    let usable = |name: &str| settings.providers.get(name).is_some_and(available);
    if model.starts_with("claude") {
        ["anthropic", "claude-cli"].into_iter().find(|n| usable(n)).map(str::to_owned)
    } else {
        usable("openai").then(|| "openai".to_owned())
    }
}

/// Whether a built-in provider can be used as a default: its key (or, for `openai`, a base URL) is there, or the
/// `claude` command is on `PATH`.
fn available(provider: &ProviderSettings) -> bool {
    match provider.kind {
        Kind::Anthropic => api_key(provider, "ANTHROPIC_API_KEY").is_some(),
        Kind::OpenAi => api_key(provider, "OPENAI_API_KEY").is_some() || env("OPENAI_BASE_URL").is_some(),
        Kind::ClaudeCli => command_path(provider.command.as_deref().unwrap_or("claude")).is_some(),
    }
}

/// The base URL of `provider`: its `baseUrl`, else the environment variable `env_var`, else `public`.
pub(crate) fn base_url(provider: &ProviderSettings, env_var: &str, public: &str) -> String {
    provider.base_url.clone().or_else(|| env(env_var)).unwrap_or_else(|| public.to_owned())
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The API key of `provider`: its key file's text, else its `apiKeyEnv` variable, else `default_env`.
pub(crate) fn api_key(provider: &ProviderSettings, default_env: &str) -> Option<String> {
    if let Some(file) = &provider.api_key_file {
        return std::fs::read_to_string(file).ok().map(|k| k.trim().to_owned()).filter(|k| !k.is_empty());
    }
    env(provider.api_key_env.as_deref().unwrap_or(default_env))
}

/// Where `command` is: itself when it names a path, else the first match on `PATH`.
pub(crate) fn command_path(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        return Path::new(command).is_file().then(|| PathBuf::from(command));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(command)).find(|candidate| candidate.is_file())
}

/// The one HTTP client of the process (connections pooled across calls), TLS by rustls.
pub(crate) fn http() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        // reqwest is built without a default TLS provider; ring is the one the tree already has.
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .build()
            .expect("an HTTP client with rustls builds")
    })
}

/// A failed HTTP exchange as a [`Failure`]: no connection or a broken one is transient.
pub(crate) fn transport_failure(provider: &str, error: &reqwest::Error) -> Failure {
    // reqwest's message names the URL, never a header: the key is not in it.
    let message = format!("{provider}: the request failed: {error}");
    if error.is_connect() || error.is_timeout() || error.is_request() || error.is_body() || error.is_decode() {
        Failure::Transient { message, retry_after: None }
    } else {
        Failure::Permanent(message)
    }
}

/// A non-2xx answer as a [`Failure`]: 408, 409, 429, 5xx and 529 are transient (with their `Retry-After`).
pub(crate) fn status_failure(provider: &str, status: reqwest::StatusCode, headers: &reqwest::header::HeaderMap, body: &str) -> Failure {
    let detail = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned).or_else(|| v["error"].as_str().map(str::to_owned)))
        .unwrap_or_else(|| body.chars().take(300).collect());
    let message = format!("{provider} answered {status}: {detail}");
    let code = status.as_u16();
    if matches!(code, 408 | 409 | 429) || code >= 500 {
        let retry_after = headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64);
        Failure::Transient { message, retry_after }
    } else {
        Failure::Permanent(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_routed_by_exact_id_then_longest_prefix_then_defaults() {
        let yaml = "models:\n  providers: { \"claude-*\": openai, \"claude-haiku*\": claude-cli, claude-opus-4-1: anthropic }\n";
        let settings = Settings::from_texts(Some(&("r".into(), yaml.into())), None).unwrap();
        assert_eq!(route(&settings, "claude-opus-4-1").as_deref(), Some("anthropic"));
        assert_eq!(route(&settings, "claude-haiku-4-5").as_deref(), Some("claude-cli"));
        assert_eq!(route(&settings, "claude-sonnet-4-5").as_deref(), Some("openai"));
        let mut none = Settings::from_texts(None, None).unwrap();
        for provider in none.providers.values_mut() {
            provider.api_key_env = Some("CAIRN_TEST_NO_SUCH_VARIABLE".into());
            provider.command = Some("/nonexistent/claude".into());
        }
        if std::env::var_os("OPENAI_BASE_URL").is_none() {
            assert_eq!(route(&none, "llama3"), None);
            let error = resolve(&none, "llama3").err().expect("no provider");
            assert!(error.contains("models.providers"), "{error}");
        }
        assert_eq!(route(&none, "claude-sonnet-4-5"), None, "no key, no claude command");
    }

    #[test]
    fn rate_limits_overload_and_server_errors_are_transient_with_retry_after() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::RETRY_AFTER, "2".parse().unwrap());
        let body = r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;
        let failure = status_failure("anthropic", reqwest::StatusCode::TOO_MANY_REQUESTS, &headers, body);
        assert_eq!(
            failure,
            Failure::Transient {
                message: "anthropic answered 429 Too Many Requests: slow down".into(),
                retry_after: Some(Duration::from_secs(2))
            }
        );
        let overloaded = reqwest::StatusCode::from_u16(529).unwrap();
        assert!(matches!(status_failure("a", overloaded, &Default::default(), "{}"), Failure::Transient { .. }));
        let bad = status_failure("a", reqwest::StatusCode::BAD_REQUEST, &Default::default(), "no");
        assert_eq!(bad, Failure::Permanent("a answered 400 Bad Request: no".into()));
    }
}
