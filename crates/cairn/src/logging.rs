//! Logs go to stderr (stdout may be the stdio JSON-RPC channel): human-readable lines by default, or one JSON
//! object a line with `--log-format json` / `CAIRN_LOG_FORMAT=json`, each carrying the fields of the spans it
//! happened in (`http_request`: method, route, path, principal, status; `tool_call`: surface, tool, principal).
//! `RUST_LOG` filters as `tracing-subscriber`'s `EnvFilter` reads it (`info,cairn_web=warn`); by default cairn
//! logs at `info`, and the MCP library and Postgres's notices (such as "relation already exists, skipping" from
//! every migration check) only their warnings. No log line carries a token, a sign-in secret or a request's headers,
//! query or body. With an OTLP endpoint (`--otlp-endpoint` / `OTEL_EXPORTER_OTLP_ENDPOINT`) the same spans are also
//! exported as traces ([`cairn_telemetry::otlp`]).

use cairn_telemetry::otlp::{Endpoint, OtlpLayer};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

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

/// The OTLP endpoint of `OTEL_EXPORTER_OTLP_ENDPOINT`, for the entry names without an `--otlp-endpoint` option.
pub fn otlp_from_env() -> Option<String> {
    std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok().filter(|v| !v.trim().is_empty())
}

/// The log filter without `RUST_LOG`: a server's requests, calls and run events (`info`).
pub const SERVER_LOGS: &str = "info,rmcp=warn,sqlx::postgres::notice=warn";
/// The log filter without `RUST_LOG` for a command at a terminal (`roscoe run`, `roscoe runs …`): warnings only, so
/// its own progress is all that shows.
pub const COMMAND_LOGS: &str = "warn";

/// Sets up logging to stderr in `format`, filtered by `RUST_LOG` or else `default`, and trace export to `otlp` when
/// given (call inside the tokio runtime); an endpoint cairn cannot send to is an error that says why.
pub fn init(format: LogFormat, otlp: Option<&str>, default: &str) -> Result<(), String> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let otlp = otlp.map(Endpoint::parse).transpose()?.map(|endpoint| OtlpLayer::start(endpoint, "cairn"));
    let registry = tracing_subscriber::registry().with(filter).with(otlp);
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false);
    match format {
        LogFormat::Text => registry.with(fmt).init(),
        LogFormat::Json => registry.with(fmt.json().with_current_span(true).with_span_list(true)).init(),
    }
    Ok(())
}
