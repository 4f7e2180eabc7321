//! What the metrics of one successful `work_claim` over HTTP cost the server: the three recordings each claim makes
//! — the HTTP response (`http_response`: a counter and a histogram sample), the tool call (`tool_call`: the same) and
//! the claim (`work_claim`: a counter) — into the installed Prometheus recorder, timed in rounds of 100,000 claims'
//! worth on one thread. docs/benchmarks.md relates the figure to the CPU a claim costs in the claims benchmark
//! (`crates/cairn/examples/work_load.rs`).
//!
//! `cargo run --release -p cairn-telemetry --example metrics_cost [ROUNDS]` (default 20 timed rounds after 3 warm-ups).

use std::time::{Duration, Instant};

use cairn_telemetry::metrics::{self, Metrics};

const PER_ROUND: u32 = 100_000;
const WARM_UPS: usize = 3;

fn main() {
    let rounds: usize = std::env::args().nth(1).map_or(20, |n| n.parse().expect("ROUNDS is a number"));
    let recorder = Metrics::install().expect("the recorder installs");
    let mut samples = Vec::with_capacity(rounds);
    for round in 0..WARM_UPS + rounds {
        let started = Instant::now();
        for i in 0..PER_ROUND {
            // Latencies that vary as a load's do, so the samples land in several buckets.
            let elapsed = Duration::from_micros(200 + u64::from(i % 800));
            metrics::http_response("POST", "/mcp", 200, elapsed);
            metrics::tool_call("work", "work_claim", "ok", elapsed);
            metrics::work_claim("claimed");
        }
        if round >= WARM_UPS {
            samples.push(started.elapsed().as_secs_f64() * 1e9 / f64::from(PER_ROUND));
        }
    }
    samples.sort_by(f64::total_cmp);
    let median = samples[samples.len() / 2];
    let p90 = samples[samples.len() * 9 / 10];
    println!("metrics of one claim: median {median:.0} ns, p90 {p90:.0} ns ({rounds} rounds of {PER_ROUND})");
    let rendered = tokio::runtime::Builder::new_current_thread().build().expect("a runtime").block_on(recorder.render());
    let claims = rendered.lines().find(|l| l.starts_with("cairn_work_claims_total")).unwrap_or("(no claims line)");
    println!("{claims}");
}
