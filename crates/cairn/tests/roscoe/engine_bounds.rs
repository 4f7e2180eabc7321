//! A caller holding only `roscoe:write` and `roscoe:run` cannot keep the server busy: a condition's comprehensions
//! stop at their step budget with a clear error, `test_workflow`'s `timeout_ms` interrupts the engine between
//! conditions (not only at awaits), fan-out counts have ceilings that validation enforces, and a map over 50,000
//! items runs its first `maxItems` (at most 1,000) and says what it dropped.

use serde_json::{Value, json};

use crate::support::*;

/// Seven `all` nested over a 14-element list: 105 million steps without a budget (minutes of one core).
fn bomb() -> String {
    let vars = ["a", "b", "c", "d", "e", "f", "g"];
    let mut expression = format!("{} >= 0", vars.join(" + "));
    for var in vars.iter().rev() {
        expression = format!("input.l.all({var}, {expression})");
    }
    format!(
        "name: bomb\ninitial: check\nnodes:\n  check:\n    type: condition\n    config: {{ expression: \"{expression}\" }}\n    \
         transitions: {{ \"true\": $end, \"false\": $fail }}\n"
    )
}

/// A condition that visits 88,740 elements (within the budget), a thousand times over without an await between.
const SPIN: &str = r#"name: spin
initial: check
nodes:
  check:
    type: condition
    maxIterations: 1000
    config: { expression: "input.l.all(a, input.l.all(b, input.l.all(c, input.l.all(d, a + b + c + d >= 0))))" }
    transitions: { "true": check, "false": check, max_iterations: $end }
"#;

async fn runner(env: &Env) -> (crate::cairn_serve::Served, Client) {
    let served = env.serve(&["--require-auth"], &[]).await;
    let client = Client::http(&served, &env.token("runner", "roscoe:write,roscoe:run").await).await;
    (served, client)
}

#[tokio::test]
async fn a_condition_past_its_step_budget_fails_with_a_clear_error() {
    let env = Env::new();
    let root = env.repo("proj");
    let (_served, client) = runner(&env).await;
    let input = json!({ "l": (0..14).collect::<Vec<_>>() });
    let args = json!({ "cwd": s(&root), "yaml": bomb(), "input": input });
    let result = client.ok("test_workflow", args).await;
    assert_eq!(result["finalStatus"], "failed", "{result}");
    let check = &result["nodeTrace"][0];
    let error = check["error"].as_str().unwrap();
    assert!(error.contains("would take more than 100000 steps"), "{error}");
    assert!(error.contains("nest fewer all/exists/map/filter calls"), "the fix is named: {error}");
    client.close().await;
}

#[tokio::test]
async fn test_workflow_s_timeout_stops_the_engine_between_conditions() {
    let env = Env::new();
    let root = env.repo("proj");
    let (_served, client) = runner(&env).await;
    let input = json!({ "l": (0..17).collect::<Vec<_>>() });
    let args = json!({ "cwd": s(&root), "yaml": SPIN, "input": input, "timeout_ms": 300 });
    let result = client.ok("test_workflow", args).await;
    assert_eq!(result["code"], "timeout", "{result}");
    // The whole loop is 88 million steps, minutes of work; stopped at the deadline it is a fraction of a second.
    // A bound far above that keeps the check from depending on this machine's speed.
    let took = result["durationMs"].as_u64().unwrap();
    assert!(took < 30_000, "the engine stopped at the deadline, not after the loop: {took} ms");
    client.close().await;
}

#[tokio::test]
async fn fan_out_counts_have_ceilings_in_validation() {
    let env = Env::new();
    let root = env.repo("proj");
    let (_served, client) = runner(&env).await;
    let cases = [
        ("map", "{ items: [a], prompt: p, maxItems: 100000000 }", "maxItems", "1000"),
        ("map", "{ items: [a], prompt: p, minSuccess: 5000 }", "minSuccess", "1000"),
        ("round_robin", "{ candidates: [a, b], criterion: c, maxCandidates: 1000 }", "maxCandidates", "16"),
    ];
    for (kind, config, key, ceiling) in cases {
        let yaml = format!(
            "name: wide\ninitial: fan\nnodes:\n  fan:\n    type: {kind}\n    config: {config}\n    transitions: {{ success: $end }}\n"
        );
        let report = client.ok("validate_workflow", json!({ "cwd": s(&root), "yaml": yaml })).await;
        assert_eq!(report["valid"], false, "{key}: {report}");
        let errors = report["errors"].to_string();
        assert!(errors.contains(key) && errors.contains(ceiling), "{key} names its ceiling {ceiling}: {errors}");
    }
    client.close().await;
}

#[tokio::test]
async fn a_map_over_fifty_thousand_items_runs_its_first_thousand_and_says_so() {
    let env = Env::new();
    let root = env.repo("proj");
    let (_served, client) = runner(&env).await;
    let yaml = "name: many\ninitial: each\nnodes:\n  each:\n    type: map\n    \
                config: { items: \"{{ input.items }}\", prompt: \"do {{ item }}\", maxItems: 1000 }\n    \
                transitions: { success: $end }\n";
    let items: Vec<Value> = (0..50_000).map(|i| json!(format!("item {i}"))).collect();
    let responses = vec!["done"; 1000];
    let args = json!({ "cwd": s(&root), "yaml": yaml, "input": { "items": items },
        "mocks": { "each": { "responses": responses } } });
    let result = client.ok("test_workflow", args).await;
    assert_eq!(result["ok"], true, "{}", &result.to_string()[..2000.min(result.to_string().len())]);
    let each = &result["nodeTrace"][0];
    assert_eq!(each["output"]["succeeded"], 1000);
    let warnings = each["warnings"].to_string();
    assert!(warnings.contains("49000 item(s) beyond maxItems (1000) were dropped"), "{warnings}");
    client.close().await;
}
