//! One webhook delivery sent at once to two nodes of one database, several times over, starts one run: the delivery
//! is claimed by a primary-key insert in the shared database, and every other request answers the first run's id.

use std::time::{SystemTime, UNIX_EPOCH};

use cairn_roscoe::signature;
use serde_json::{Value, json};

use crate::support::{Client, Cluster};

/// A person approves a release of the branch the webhook names.
const RELEASE: &str = "name: release\ninputs:\n  ref: { type: string, required: true }\ntriggers:\n  - webhook:\n      \
    secret_env: ROSCOE_HOOK_RELEASE\ninitial: ask\nnodes:\n  ask:\n    type: human\n    \
    config: { prompt: \"Release {{ input.ref }}?\" }\n    transitions: { ship: $end, stop: $fail }\n";

const SECRET: &str = "the-release-secret";

/// Writes the workflow and the secret (in the global roscoe.yaml) into the home of each of `nodes`.
fn install(cluster: &Cluster, nodes: &[&str]) {
    for node in nodes {
        let home = cluster.home(node);
        std::fs::create_dir_all(home.join("workflows")).unwrap();
        std::fs::write(home.join("workflows/release.yaml"), RELEASE).unwrap();
        std::fs::write(home.join("roscoe.yaml"), format!("webhooks:\n  ROSCOE_HOOK_RELEASE: {SECRET}\n")).unwrap();
    }
}

#[tokio::test]
async fn one_delivery_sent_to_two_nodes_at_once_starts_one_run() {
    let cluster = Cluster::any();
    install(&cluster, &["a", "b"]);
    let (a, b) = (cluster.node("a").await, cluster.node("b").await);
    let body = br#"{"ref":"v3.0.0"}"#.to_vec();
    let timestamp = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    let sig = signature::sign(SECRET.as_bytes(), timestamp, &body);
    let sends = (0..8).map(|i| {
        let url = if i % 2 == 0 { a.url("/hooks/roscoe/global/release") } else { b.url("/hooks/roscoe/global/release") };
        let (body, sig) = (body.clone(), sig.clone());
        async move {
            let response = reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .header("x-roscoe-timestamp", timestamp.to_string())
                .header("x-roscoe-signature-256", sig)
                .header("x-roscoe-delivery", "race-1")
                .body(body)
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        }
    });
    let answers = futures::future::join_all(sends).await;
    let started: Vec<&Value> = answers.iter().filter(|(s, _)| *s == 202).map(|(_, v)| v).collect();
    assert_eq!(started.len(), 1, "exactly one request starts the run: {answers:?}");
    let run_id = &started[0]["runId"];
    for (status, answer) in &answers {
        match status {
            202 => {}
            200 => assert_eq!((&answer["runId"], &answer["repeated"]), (run_id, &json!(true)), "{answer}"),
            // Still being started by the first request when this one stopped waiting: it started nothing either.
            409 => assert_eq!(answer["code"], "delivery_in_progress", "{answer}"),
            other => panic!("unexpected {other}: {answer}"),
        }
    }
    let client = Client::http(&b.url("/roscoe/mcp"), None).await;
    let listed = client.ok("list_runs", json!({"global": true, "workflow_id": "release"})).await;
    let runs = listed["result"].as_array().unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(runs.len(), 1, "one run for one delivery: {listed}");
    assert_eq!(&runs[0]["id"], run_id);
    client.close().await;
}
