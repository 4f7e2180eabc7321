//! cairn's metrics: their names (the `cairn_` prefix, Prometheus's conventions), what each counts, and the one
//! function that records each, so a name is spelled in one place. docs/operations.md lists them.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `cairn_tool_calls_total` | counter | `surface`, `tool`, `outcome` (`ok`, `error`, `refused`) |
//! | `cairn_tool_call_duration_seconds` | histogram | `surface`, `tool` |
//! | `cairn_http_responses_total` | counter | `method`, `route` (the access table's pattern), `status` |
//! | `cairn_http_request_duration_seconds` | histogram | `method`, `route` |
//! | `cairn_work_claims_total` | counter | `outcome` (`claimed`, `unchanged`, `conflict`, or another error code) |
//! | `cairn_token_lookups_total` | counter | `source` (`cache`, `database`) |
//! | `cairn_runs` | gauge | `status` (runs in the database, counted when `/metrics` is read) |
//! | `cairn_db_pool_connections` | gauge | `state` (`idle`, `in_use`), read when `/metrics` is read |
//! | `cairn_model_calls_total` | counter | `provider`, `model`, `outcome` |
//! | `cairn_model_tokens_total` | counter | `provider`, `model`, `kind` (`input`, `output`) |
//! | `cairn_model_cost_microdollars_total` | counter | `provider`, `model` (millionths of a US dollar) |
//! | `cairn_model_call_duration_seconds` | histogram | `provider`, `model` |

use std::sync::Arc;
use std::time::Duration;

use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// Tool calls by surface, tool and outcome.
pub const TOOL_CALLS: &str = "cairn_tool_calls_total";
/// How long tool calls take, by surface and tool.
pub const TOOL_CALL_DURATION: &str = "cairn_tool_call_duration_seconds";
/// HTTP answers by method, route and status.
pub const HTTP_RESPONSES: &str = "cairn_http_responses_total";
/// How long HTTP requests take until their answer's head, by method and route.
pub const HTTP_REQUEST_DURATION: &str = "cairn_http_request_duration_seconds";
/// Work item claims by outcome.
pub const WORK_CLAIMS: &str = "cairn_work_claims_total";
/// Bearer tokens looked up, by where they were read from.
pub const TOKEN_LOOKUPS: &str = "cairn_token_lookups_total";
/// Runs in the database by status.
pub const RUNS: &str = "cairn_runs";
/// Database pool connections by state.
pub const DB_POOL_CONNECTIONS: &str = "cairn_db_pool_connections";
/// Model calls by provider, model and outcome.
pub const MODEL_CALLS: &str = "cairn_model_calls_total";
/// Model tokens by provider, model and kind (input, output).
pub const MODEL_TOKENS: &str = "cairn_model_tokens_total";
/// What model calls cost, in millionths of a US dollar (counters count whole numbers), by provider and model.
pub const MODEL_COST: &str = "cairn_model_cost_microdollars_total";
/// How long model calls take, by provider and model.
pub const MODEL_CALL_DURATION: &str = "cairn_model_call_duration_seconds";

/// The histogram buckets (seconds) of every duration: 1 ms to 2 minutes.
const BUCKETS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0];

/// Reads values that are counted when `/metrics` is read (runs by status, the pool), before the text is rendered.
pub type Sampler = Arc<dyn Fn() -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// The installed recorder: renders every metric as Prometheus text.
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
    sampler: Option<Sampler>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("sampler", &self.sampler.is_some()).finish()
    }
}

impl Metrics {
    /// Installs the process's recorder (once: a second call is an error) and describes every metric.
    pub fn install() -> Result<Metrics, String> {
        let handle = PrometheusBuilder::new()
            .set_buckets(BUCKETS)
            .map_err(|e| e.to_string())?
            .install_recorder()
            .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;
        describe();
        Ok(Metrics { handle, sampler: None })
    }

    /// The same recorder, reading `sampler`'s values before each rendering.
    pub fn with_sampler(self, sampler: Sampler) -> Metrics {
        Metrics { sampler: Some(sampler), ..self }
    }

    /// Every metric in the Prometheus text format (version 0.0.4).
    pub async fn render(&self) -> String {
        if let Some(sample) = &self.sampler {
            sample().await;
        }
        self.handle.run_upkeep();
        self.handle.render()
    }
}

fn describe() {
    describe_counter!(TOOL_CALLS, "MCP tool calls, by surface, tool and outcome (ok, error, refused).");
    describe_histogram!(TOOL_CALL_DURATION, metrics::Unit::Seconds, "How long MCP tool calls take.");
    describe_counter!(HTTP_RESPONSES, "HTTP answers, by method, route (the access table's pattern) and status.");
    describe_histogram!(HTTP_REQUEST_DURATION, metrics::Unit::Seconds, "How long HTTP requests take until the answer's head.");
    describe_counter!(WORK_CLAIMS, "Work item claims, by outcome (claimed, unchanged, conflict, or an error code).");
    describe_counter!(TOKEN_LOOKUPS, "Bearer tokens looked up, by where they were read from (cache, database).");
    describe_gauge!(RUNS, "Roscoe runs in the database, by status.");
    describe_gauge!(DB_POOL_CONNECTIONS, "Database pool connections, by state (idle, in_use).");
    describe_counter!(MODEL_CALLS, "Model calls, by provider, model and outcome.");
    describe_counter!(MODEL_TOKENS, "Model tokens, by provider, model and kind (input, output).");
    describe_counter!(MODEL_COST, "What model calls cost, in millionths of a US dollar.");
    describe_histogram!(MODEL_CALL_DURATION, metrics::Unit::Seconds, "How long model calls take.");
}

/// One MCP tool call of `surface` ended with `outcome` (`ok`, `error`, `refused`) after `elapsed`.
pub fn tool_call(surface: &'static str, tool: &str, outcome: &'static str, elapsed: Duration) {
    let tool = tool.to_owned();
    counter!(TOOL_CALLS, "surface" => surface, "tool" => tool.clone(), "outcome" => outcome).increment(1);
    histogram!(TOOL_CALL_DURATION, "surface" => surface, "tool" => tool).record(elapsed.as_secs_f64());
}

/// One HTTP answer with `status` to `method` on `route` (a pattern of the access table, or `unmatched`).
pub fn http_response(method: &str, route: &'static str, status: u16, elapsed: Duration) {
    let method = method.to_owned();
    counter!(HTTP_RESPONSES, "method" => method.clone(), "route" => route, "status" => status.to_string()).increment(1);
    histogram!(HTTP_REQUEST_DURATION, "method" => method, "route" => route).record(elapsed.as_secs_f64());
}

/// One work item claim with `outcome`.
pub fn work_claim(outcome: &'static str) {
    counter!(WORK_CLAIMS, "outcome" => outcome).increment(1);
}

/// A bearer token was looked up in `source` (`cache` or `database`).
pub fn token_lookup(source: &'static str) {
    counter!(TOKEN_LOOKUPS, "source" => source).increment(1);
}

/// `count` runs have `status` now.
pub fn runs(status: &str, count: u64) {
    gauge!(RUNS, "status" => status.to_owned()).set(count as f64);
}

/// The database pool holds `idle` idle connections and `in_use` busy ones.
pub fn db_pool(idle: usize, in_use: usize) {
    gauge!(DB_POOL_CONNECTIONS, "state" => "idle").set(idle as f64);
    gauge!(DB_POOL_CONNECTIONS, "state" => "in_use").set(in_use as f64);
}
