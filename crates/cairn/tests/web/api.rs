//! The REST API over HTTP: runs (start, history, the SSE event stream, a human decision, the tools' codes),
//! workflow CRUD and checks, work routes behind bearer tokens and scopes, and the generated OpenAPI document.

use futures::StreamExt;
use serde_json::{Value, json};

use crate::rest::post_json;
use crate::support::{http, start, token};

#[tokio::test]
async fn a_run_starts_streams_its_events_and_completes_by_a_decision() {
    let env = start().await;
    let client = http();
    let url = |p: &str| env.served.url(p);
    let started = client.post(url("/api/runs?project=global")).json(&json!({"workflowId": "decide"})).send().await.unwrap();
    assert_eq!(started.status(), 201);
    let started: Value = started.json().await.unwrap();
    let id = started["runId"].as_str().unwrap().to_owned();
    assert_eq!(started["status"], "paused");
    assert_eq!(started["pendingStep"]["validTransitions"], json!(["ship", "stop"]));
    assert_eq!(started["url"], format!("{}/open/runs/{id}?project=global", env.served.base), "server.json names us");

    let listed: Value = client.get(url("/api/runs?project=global")).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed[0]["id"], id.as_str());
    let history: Value = client.get(url(&format!("/api/runs/{id}"))).send().await.unwrap().json().await.unwrap();
    assert_eq!(history["run"]["status"], "paused", "no ?project= means Global on a server without --project");

    let stream = client.get(url(&format!("/api/runs/{id}/events?project=global"))).send().await.unwrap();
    assert_eq!(stream.status(), 200);
    assert!(stream.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));

    let wrong = client.post(url(&format!("/api/runs/{id}/resume"))).json(&json!({"transition": "maybe"})).send().await.unwrap();
    assert_eq!(wrong.status(), 400);
    let wrong: Value = wrong.json().await.unwrap();
    assert_eq!(wrong["code"], "invalid_transition", "{wrong}");
    let done = client
        .post(url(&format!("/api/runs/{id}/resume?project=global")))
        .json(&json!({"transition": "ship", "comment": "looks good"}))
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 200);
    let done: Value = done.json().await.unwrap();
    assert_eq!(done["status"], "completed", "{done}");

    // The stream replays the log and ends once the run has ended.
    let mut body = String::new();
    let mut chunks = stream.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        body.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
    }
    let events: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(body.contains("event: state"), "{body}");
    assert_eq!(events.last().unwrap()["data"]["status"], "completed", "{body}");
    assert!(events.iter().all(|e| e["runId"] == id.as_str()));

    let again = client.post(url(&format!("/api/runs/{id}/cancel"))).header("content-type", "application/json").send().await.unwrap();
    assert_eq!(again.status(), 409);
    assert_eq!(again.json::<Value>().await.unwrap()["code"], "terminal");
    let missing = client.get(url("/api/runs/nope?project=global")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.json::<Value>().await.unwrap(), json!({"error": "Run not found.", "code": "not_found"}));
    let unknown = client.get(url("/api/runs?project=0123456789abcdef")).send().await.unwrap();
    assert_eq!(unknown.status(), 404);
    let bad = client.get(url("/api/runs?project=../x")).send().await.unwrap();
    assert_eq!(bad.status(), 400);
    assert_eq!(bad.json::<Value>().await.unwrap()["code"], "invalid_input");
}

#[tokio::test]
async fn workflows_are_written_checked_and_deleted_with_the_writer_codes() {
    let env = start().await;
    let client = http();
    let url = |p: &str| env.served.url(p);
    let yaml = "name: tiny\ninitial: a\nnodes:\n  a: { type: human, config: { prompt: ok? }, transitions: { \"yes\": $end } }\n";
    let created = client.post(url("/api/workflows?project=global")).json(&json!({"id": "tiny", "yaml": yaml})).send().await.unwrap();
    assert_eq!(created.status(), 201);
    let twice = client.post(url("/api/workflows?project=global")).json(&json!({"id": "tiny", "yaml": yaml})).send().await.unwrap();
    assert_eq!(twice.status(), 409);
    assert_eq!(twice.json::<Value>().await.unwrap()["code"], "conflict");
    let got: Value = client.get(url("/api/workflows/tiny?project=global")).send().await.unwrap().json().await.unwrap();
    assert_eq!((got["source"].as_str(), got["yaml"].as_str()), (Some("global"), Some(yaml)));
    let listed: Value = client.get(url("/api/workflows")).send().await.unwrap().json().await.unwrap();
    let ids: Vec<&str> = listed.as_array().unwrap().iter().filter_map(|w| w["id"].as_str()).collect();
    assert_eq!(ids, ["decide", "ship", "tiny"]);

    let invalid = client.put(url("/api/workflows/tiny")).json(&json!({"yaml": "name: tiny\nnodes: 3\n"})).send().await.unwrap();
    assert_eq!(invalid.status(), 400);
    assert_eq!(invalid.json::<Value>().await.unwrap()["code"], "invalid_config");
    let checked: Value = client.post(url("/api/validate")).json(&json!({"id": "tiny"})).send().await.unwrap().json().await.unwrap();
    assert_eq!(checked["valid"], true, "the refused update left the file as it was");
    let linted = client.post(url("/api/lint")).json(&json!({"yaml": yaml})).send().await.unwrap();
    assert_eq!(linted.status(), 200);
    let diagram: Value = client.post(url("/api/diagram")).json(&json!({"id": "ship"})).send().await.unwrap().json().await.unwrap();
    assert!(diagram["mermaid"].as_str().unwrap().contains("flowchart"), "{diagram}");
    let both = client.post(url("/api/validate")).json(&json!({"id": "tiny", "yaml": yaml})).send().await.unwrap();
    assert_eq!(both.status(), 400);
    assert_eq!(both.json::<Value>().await.unwrap()["code"], "invalid_input");

    let unconfirmed = client.delete(url("/api/workflows/tiny")).json(&json!({})).send().await.unwrap();
    assert_eq!(unconfirmed.status(), 400);
    assert_eq!(unconfirmed.json::<Value>().await.unwrap()["code"], "confirm_required");
    let deleted = client.delete(url("/api/workflows/tiny?confirm=true")).json(&json!({})).send().await.unwrap();
    assert_eq!(deleted.status(), 200);
    let gone = client.get(url("/api/workflows/tiny")).send().await.unwrap();
    assert_eq!(gone.status(), 404);
    assert_eq!(gone.json::<Value>().await.unwrap()["code"], "not_found");
}

#[tokio::test]
async fn work_routes_take_the_mcp_tokens_and_scopes() {
    let env = start().await;
    let client = http();
    let url = |p: &str| env.served.url(p);
    let anonymous = client.get(url("/api/work/items")).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.headers().contains_key("www-authenticate"));
    let forged = client.get(url("/api/spaces")).bearer_auth("cairn_nope_nope").send().await.unwrap();
    assert_eq!(forged.status(), 401);

    let out = env
        .cairn()
        .args(["work", "token", "create", "--principal", "reader", "--kind", "person", "--scopes", "mcp:read,decisions:read"])
        .output()
        .unwrap();
    let reader = serde_json::from_slice::<Value>(&out.stdout).unwrap()["token"].as_str().unwrap().to_owned();
    let refused = client.post(url("/api/spaces")).bearer_auth(&reader).json(&json!({"name": "x"})).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    let refused: Value = refused.json().await.unwrap();
    assert_eq!(refused["error"]["code"], "insufficient_scope", "{refused}");

    let writer = token(&env);
    let space: Value =
        post_json(&client, url("/api/spaces"), &writer, &json!({"name": "Board"})).await;
    let space_id = space["space"]["id"].as_str().unwrap();
    let item = client
        .post(url("/api/work/items"))
        .bearer_auth(&writer)
        .json(&json!({"space_id": space_id, "title": "Ship the API"}))
        .send()
        .await
        .unwrap();
    assert_eq!(item.status(), 201);
    let item: Value = item.json().await.unwrap();
    let item_id = item["id"].as_str().unwrap();
    let claim = url(&format!("/api/work/items/{item_id}/claim"));
    let claimed: Value = post_json(&client, claim, &writer, &json!({"claimant": "worker-1"})).await;
    assert_eq!((claimed["state"].as_str(), claimed["claimant"].as_str()), (Some("claimed"), Some("worker-1")));
    let listed: Value =
        client.get(url("/api/work/items?state=claimed")).bearer_auth(&reader).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed["items"][0]["id"], item_id, "a read token of another principal of the account sees it");
    let bad = client.get(url("/api/work/items?state=nope")).bearer_auth(&reader).send().await.unwrap();
    assert_eq!(bad.status(), 400);
    assert_eq!(bad.json::<Value>().await.unwrap()["error"]["code"], "invalid_argument");
}

#[tokio::test]
async fn the_openapi_document_is_generated_from_the_routes() {
    let env = start().await;
    let doc: Value = http().get(env.served.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    for path in ["/api/projects", "/api/workflows/{id}", "/api/runs/{id}/events", "/api/runs/{id}/resume", "/api/docs/search", "/api/work/items/{id}/claim"] {
        assert!(doc["paths"].get(path).is_some(), "{path} is described");
    }
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    let projects: Value = http().get(env.served.url("/api/projects")).send().await.unwrap().json().await.unwrap();
    assert_eq!(projects[0]["id"], "global");
}
