//! What an operator sees of a full end-to-end session on `cairn serve --require-auth --log-format json`: a run
//! driven to its end over MCP, a REST read and a race of eight claims on one item. `/metrics` needs `metrics:read`,
//! parses as Prometheus text and its counters moved as the session did; every log line is JSON, the request and
//! tool-call lines carry their spans' fields, the run's events are logged, and no line holds a token or its secret.

use std::collections::HashMap;
use std::time::Duration;

use futures::future::join_all;
use serde_json::{Value, json};

use crate::cairn_serve::Served;
use crate::database::TestDatabase;
use crate::prometheus::value;
use crate::support::{SHIP, cairn, call, client, ok, token};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn metrics_move_with_a_run_and_a_claim_race_and_json_logs_carry_spans_but_no_secret() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let database = TestDatabase::fresh();
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(home.join("workflows/ship.yaml"), SHIP).unwrap();
    let scopes = "roscoe:run,mcp:read,mcp:write,decisions:read,decisions:write";
    let runner = token(&home, &database, "runner", scopes).await;
    let scraper = token(&home, &database, "scraper", "metrics:read").await;
    let reader = token(&home, &database, "reader", "roscoe:read").await;
    let mut command = cairn(&home, &database);
    command.args(["serve", "--require-auth", "--log-format", "json"]);
    let served = Served::start(command).await;
    let http = reqwest::Client::new();
    let scrape = |bearer: Option<String>| {
        let mut request = http.get(served.url("/metrics"));
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        request.send()
    };

    // /metrics is protected like every other route.
    assert_eq!(scrape(None).await.unwrap().status(), 401);
    assert_eq!(scrape(Some(reader.clone())).await.unwrap().status(), 403, "roscoe:read is not metrics:read");

    // A run from start to end.
    let roscoe = client(served.url("/roscoe/mcp"), &runner).await;
    let started = ok(&roscoe, "start_workflow", json!({"global": true, "id": "ship"})).await;
    let run = started["runId"].as_str().unwrap().to_owned();
    ok(&roscoe, "advance_run", json!({"global": true, "run_id": run, "node_id": "draft", "response": "a haiku"})).await;
    let done = ok(&roscoe, "resume_run", json!({"global": true, "run_id": run, "transition": "ship"})).await;
    assert_eq!(done["status"], "completed", "{done}");
    let runs = http.get(served.url("/api/runs?project=global")).bearer_auth(&runner).send().await.unwrap();
    assert_eq!(runs.status(), 200);

    // Eight claims at once on one item: one wins, seven meet a conflict.
    let work = client(served.url("/mcp"), &runner).await;
    let space = ok(&work, "decisions_create_space", json!({"name": "Race", "description": "claims"})).await;
    let space = space["space"]["id"].as_str().unwrap().to_owned();
    let item = ok(&work, "work_create", json!({"space_id": space, "title": "the prize"})).await;
    let item = item["item"]["id"].as_str().unwrap().to_owned();
    let racers = join_all((0..8).map(|_| client(served.url("/mcp"), &runner))).await;
    let claims = racers.iter().enumerate().map(|(i, racer)| {
        call(racer, "work_claim", json!({"item_id": item, "claimant": format!("agent {i}")}))
    });
    let won = join_all(claims).await.iter().filter(|r| r.is_error != Some(true)).count();
    assert_eq!(won, 1, "exactly one claim wins");

    let response = scrape(Some(scraper.clone())).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain; version=0.0.4"));
    let text = response.text().await.unwrap();
    let metrics = crate::prometheus::parse(&text);
    let tool = |surface, tool, outcome| {
        value(&metrics, "cairn_tool_calls_total", &[("surface", surface), ("tool", tool), ("outcome", outcome)])
    };
    assert_eq!(tool("roscoe", "start_workflow", "ok"), 1.0, "{text}");
    assert_eq!(tool("roscoe", "resume_run", "ok"), 1.0);
    assert_eq!(tool("work", "work_claim", "ok") + tool("work", "work_claim", "error"), 8.0);
    assert_eq!(value(&metrics, "cairn_work_claims_total", &[("outcome", "claimed")]), 1.0);
    assert_eq!(value(&metrics, "cairn_work_claims_total", &[("outcome", "conflict")]), 7.0);
    assert_eq!(value(&metrics, "cairn_runs", &[("status", "completed")]), 1.0);
    let answers = |route, status| {
        value(&metrics, "cairn_http_responses_total", &[("method", "GET"), ("route", route), ("status", status)])
    };
    assert_eq!(answers("/metrics", "401"), 1.0);
    assert_eq!(answers("/metrics", "403"), 1.0);
    assert_eq!(answers("/api/runs", "200"), 1.0);
    assert!(value(&metrics, "cairn_http_responses_total", &[("route", "/mcp"), ("status", "200")]) >= 10.0);
    assert!(metrics.samples.iter().any(|s| s.metric == "cairn_db_pool_connections"), "{text}");
    assert!(text.contains("cairn_tool_call_duration_seconds_bucket{"), "latencies are histograms: {text}");

    for client in racers.into_iter().chain([roscoe, work]) {
        let _ = client.cancel().await;
    }
    // The last answer's line is written after its head went out: wait (bounded) until it is in.
    let mut log = served.log();
    for _ in 0..100 {
        if log.contains("\"route\":\"/metrics\",\"status\":200") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        log = served.log();
    }
    let lines: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let span = |line: &Value, name: &str| line["spans"].as_array().into_iter().flatten().find(|s| s["name"] == name).cloned();
    let request = lines
        .iter()
        .filter_map(|l| span(l, "http_request"))
        .find(|s| s["route"] == "/api/runs" && s["status"] == 200)
        .expect("the REST read is logged with its span");
    assert_eq!(request["method"], "GET");
    assert_eq!(request["principal"], "runner (agent)", "{request}");
    let calls: HashMap<String, Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "tool call")
        .filter_map(|l| Some((span(l, "tool_call")?["tool"].as_str()?.to_owned(), l.clone())))
        .collect();
    let start = &calls["start_workflow"];
    assert_eq!(span(start, "tool_call").unwrap()["surface"], "roscoe");
    assert_eq!(span(start, "tool_call").unwrap()["principal"], "runner (agent)");
    assert_eq!(start["fields"]["outcome"], "ok");
    assert!(start["fields"]["duration_ms"].is_number(), "{start}");
    let events: Vec<&str> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "run event" && l["fields"]["run_id"] == run.as_str())
        .filter_map(|l| l["fields"]["event"].as_str())
        .collect();
    assert!(events.len() >= 3, "the run's events are logged: {events:?}");
    for secret in [&runner, &scraper, &reader] {
        let tail = secret.splitn(3, '_').nth(2).unwrap();
        assert!(!log.contains(secret.as_str()) && !log.contains(tail), "a token is in the log");
    }
}
