//! The `claude-cli` provider with the real Claude Code (installed under `target/claude-code` by
//! `.ci/claude-code.sh`), run offline against the Anthropic stand-in: a server-executed node completes, and its cost
//! is the one the CLI reported, as subscription work.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::anthropic::{Answer, Request, StandIn};
use super::support::{node, start};

/// The installed `claude`, or `None` (with a note) where it is not installed and this is not CI.
fn claude() -> Option<PathBuf> {
    let dir = std::env::var("CLAUDE_CODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/claude-code"));
    let bin = dir.join("node_modules/.bin/claude");
    if bin.is_file() {
        return Some(bin);
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "CI must install Claude Code: bash .ci/claude-code.sh");
    eprintln!("skipped: Claude Code is not installed in {} (bash .ci/claude-code.sh)", dir.display());
    None
}

#[tokio::test]
async fn a_node_served_by_the_claude_cli_completes_with_the_cost_the_cli_reported() {
    let Some(bin) = claude() else { return };
    let stand_in = StandIn::start(|_: &Request| Answer::text("forty-two")).await;
    let home = tempfile::tempdir().unwrap();
    let node_bin = bin.parent().unwrap().to_owned();
    let path = format!("{}:{}", node_bin.display(), std::env::var("PATH").unwrap_or_default());
    let yaml = format!(
        "models:\n  providers: {{ \"claude-*\": claude-cli }}\nproviders:\n  claude-cli: {{ command: \"{}\", args: \
         [--dangerously-skip-permissions] }}\n",
        bin.display()
    );
    let workflow = "name: ask\ninitial: ask\nnodes:\n  ask:\n    type: ai_agent\n    config: { prompt: \"What is six times seven?\" }\n    transitions: { success: $end }\n";
    let home_dir = home.path().display().to_string();
    let vars = [
        ("PATH", path.as_str()),
        ("HOME", home_dir.as_str()),
        ("IS_SANDBOX", "1"),
        ("ANTHROPIC_BASE_URL", stand_in.base.as_str()),
        ("ANTHROPIC_API_KEY", "stand-in-key"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
    ];
    let env = start(&[("ask", workflow)], &yaml, &vars).await;

    let run_id = env.start_run("ask", json!({})).await["runId"].as_str().unwrap().to_owned();
    let history = env.stopped(&run_id).await;
    assert_eq!(history["run"]["status"], "completed", "{history}\n{}", env.served.log());
    let ask = node(&history, "ask");
    assert_eq!(ask["output"]["text"], "forty-two", "{ask}");
    let call = &ask["calls"][0];
    assert_eq!((call["provider"].as_str(), call["billing"].as_str()), (Some("claude-cli"), Some("subscription")));
    let reported = call["costUsd"].as_f64().expect("the CLI reported its cost");
    assert!(reported > 0.0, "{call}");
    let cost = &history["run"]["cost"];
    assert_eq!(cost["billingMode"], "subscription", "{cost}");
    assert_eq!(cost["subscriptionEquivCostUsd"].as_f64(), Some(reported));
    assert_eq!(cost["meteredCostUsd"], 0.0);
    assert!(!stand_in.requests().is_empty(), "the CLI called the stand-in");
}
