//! Logs go to stderr (stdout may be the stdio JSON-RPC channel): human-readable lines by default, or one JSON
//! object a line with `--log-format json` / `CAIRN_LOG_FORMAT=json`, each carrying the fields of the spans it
//! happened in (`http_request`: method, route, path, principal, status; `tool_call`: surface, tool, principal).
//! `RUST_LOG` filters as `tracing-subscriber`'s `EnvFilter` reads it (`info,cairn_web=warn`); by default cairn
//! logs at `info`, and the MCP library and Postgres's notices (such as "relation already exists, skipping" from
//! every migration check) only their warnings. No log line carries a token, a sign-in secret or a request's headers,
//! query or body.

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event (the default).
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `fields` (with `message`), `span` and `spans`.
    Json,
}

impl LogFormat {
    /// `CAIRN_LOG_FORMAT` (`text` or `json`), for the entry names without a `--log-format` option; an unknown value
    /// is text, with a warning once logging is set up.
    pub fn from_env() -> (LogFormat, Option<String>) {
        match std::env::var("CAIRN_LOG_FORMAT").as_deref() {
            Err(_) | Ok("" | "text") => (LogFormat::Text, None),
            Ok("json") => (LogFormat::Json, None),
            Ok(other) => (LogFormat::Text, Some(format!("CAIRN_LOG_FORMAT={other:?} is not text or json; logging text"))),
        }
    }
}

/// Sets up logging to stderr in `format`.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn,sqlx::postgres::notice=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(true).init(),
    }
}
