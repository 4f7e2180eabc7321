//! A request nested deeper than the 64 levels a message may have is answered with its own id on every MCP endpoint
//! of `cairn serve` (`/mcp`, `/roscoe/mcp`, `/deepwork/mcp`), as on stdio: `-32600` saying the limit, so a client
//! waiting for that id hears of it; without an id to answer, the refusal is a `400` with a `null` id.

use serde_json::{Value, json};

use crate::support::fresh_serve_with;

#[tokio::test]
async fn a_deep_request_is_answered_with_its_own_id_on_every_endpoint() {
    let project = tempfile::tempdir().unwrap();
    let git = std::process::Command::new("git").arg("init").arg("-q").arg(project.path()).status().unwrap();
    assert!(git.success());
    let fresh = fresh_serve_with(&["--project", project.path().to_str().unwrap()]).await;
    let bearer = format!("Bearer {}", fresh.token("agent", "mcp:read").await);
    let client = reqwest::Client::new();
    let nest = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    for endpoint in ["/mcp", "/roscoe/mcp", "/deepwork/mcp"] {
        let post = |body: String| {
            let request = client.post(fresh.served.url(endpoint)).header("Authorization", &bearer);
            let request = request.header("Accept", "application/json, text/event-stream");
            request.header("Content-Type", "application/json").body(body).send()
        };
        for (id, levels) in [(json!(2), 100), (json!("deep"), 10_000)] {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "t", "arguments": {"x": "X"}}});
            let answer = post(call.to_string().replace(r#""X""#, &nest(levels))).await.unwrap();
            assert_eq!(answer.status(), 200, "{endpoint}");
            let answer: Value = answer.json().await.unwrap();
            assert_eq!((&answer["id"], &answer["error"]["code"]), (&id, &json!(-32600)), "{endpoint}: {answer}");
            assert!(answer["error"]["message"].as_str().unwrap().contains("more than 64 levels deep"), "{answer}");
        }
        let anonymous = post(nest(100)).await.unwrap();
        assert_eq!(anonymous.status(), 400, "{endpoint}");
        assert_eq!(anonymous.json::<Value>().await.unwrap()["id"], Value::Null, "{endpoint}");
    }
}
