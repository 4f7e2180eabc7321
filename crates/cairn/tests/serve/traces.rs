//! Trace export: `cairn serve` with `OTEL_EXPORTER_OTLP_ENDPOINT` naming a collector stand-in (an HTTP server in
//! the test taking OTLP/HTTP JSON at `/v1/traces`) sends the span of each request and each tool call, with their
//! attributes, as service `cairn`; an `https://` endpoint stops the server at start with a clear message.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};

use crate::cairn_serve::Served;
use crate::database::TestDatabase;
use crate::support::{cairn, client, ok, token};

/// Starts the stand-in; its address, and the bodies it received.
async fn collector() -> (String, Arc<Mutex<Vec<Value>>>) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let keep = |State(received): State<Arc<Mutex<Vec<Value>>>>, body: String| async move {
        received.lock().unwrap().push(serde_json::from_str::<Value>(&body).expect("an OTLP JSON body"));
        "{}"
    };
    let app = Router::new().route("/v1/traces", post(keep)).with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), received)
}

/// Every span received so far: `(service name, span)`.
fn spans(received: &Mutex<Vec<Value>>) -> Vec<(Value, Value)> {
    let mut found = Vec::new();
    for body in received.lock().unwrap().iter() {
        for resource in body["resourceSpans"].as_array().into_iter().flatten() {
            let service = resource["resource"]["attributes"][0]["value"]["stringValue"].clone();
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    found.push((service.clone(), span.clone()));
                }
            }
        }
    }
    found
}

fn attribute(span: &Value, key: &str) -> Value {
    let attributes = span["attributes"].as_array().cloned().unwrap_or_default();
    attributes.into_iter().find(|a| a["key"] == key).map_or(Value::Null, |a| a["value"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_and_tool_calls_are_exported_to_an_otlp_collector() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let database = TestDatabase::fresh();
    let (endpoint, received) = collector().await;
    let reader = token(&home, &database, "reader", "roscoe:read").await;
    let mut command = cairn(&home, &database);
    command.arg("serve").env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint);
    let served = Served::start(command).await;
    let roscoe = client(served.url("/roscoe/mcp"), &reader).await;
    ok(&roscoe, "list_workflows", json!({"global": true})).await;
    let _ = roscoe.cancel().await;

    let mut tool = None;
    for _ in 0..200 {
        tool = spans(&received).into_iter().find(|(_, s)| s["name"] == "tool_call");
        if tool.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (service, tool) = tool.expect("the tool call's span reaches the collector within 20 s");
    assert_eq!(service, "cairn");
    assert_eq!(attribute(&tool, "surface"), json!({"stringValue": "roscoe"}));
    assert_eq!(attribute(&tool, "tool"), json!({"stringValue": "list_workflows"}));
    assert_eq!(attribute(&tool, "principal"), json!({"stringValue": "reader (agent)"}));
    assert_eq!(tool["traceId"].as_str().unwrap().len(), 32, "{tool}");
    assert_eq!(tool["spanId"].as_str().unwrap().len(), 16, "{tool}");
    let (start, end) = (tool["startTimeUnixNano"].as_str().unwrap(), tool["endTimeUnixNano"].as_str().unwrap());
    assert!(start.parse::<u128>().unwrap() <= end.parse::<u128>().unwrap());
    let requests: Vec<Value> = spans(&received).into_iter().map(|(_, s)| s).filter(|s| s["name"] == "http_request").collect();
    assert!(
        requests.iter().any(|s| attribute(s, "route") == json!({"stringValue": "/roscoe/mcp"})
            && attribute(s, "status") == json!({"intValue": "200"})),
        "{requests:#?}"
    );
    let exported = serde_json::to_string(&spans(&received)).unwrap();
    assert!(!exported.contains(reader.splitn(3, '_').nth(2).unwrap()), "no token in a trace");
}

#[tokio::test]
async fn an_https_endpoint_is_refused_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let database = TestDatabase::fresh();
    let mut command = cairn(&tmp.path().join("home"), &database);
    command.args(["serve", "--addr", "127.0.0.1:0", "--otlp-endpoint", "https://collector.example:4318"]);
    let output = command.output().await.unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("only http://HOST:PORT is supported"), "{stderr}");
}
