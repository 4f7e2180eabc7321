//! Body limits on every kind of route of `cairn serve`: an oversized body is `413` whether it declares its length or
//! streams without one, the largest legitimate body still passes, and a client still sending a refused body reads
//! the 413 (the server reads the rest out before it closes).

use futures::stream;
use serde_json::{Value, json};

use crate::support::{Env, http, start_with, token};

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

/// A server with a DeepWork project (for `/deepwork/mcp`), the project's folder, and a work token.
async fn server() -> (Env, tempfile::TempDir, String) {
    let project = tempfile::tempdir().unwrap();
    let env = start_with(&["--project", project.path().to_str().unwrap()]).await;
    let bearer = token(&env);
    (env, project, bearer)
}

/// A POST to `path` of `size` bytes with the headers the route's handler needs to start reading (a token for `/mcp`;
/// the others serve a loopback caller without one); declared with `Content-Length` or streamed in 64 KiB chunks
/// without one.
fn post(env: &Env, bearer: &str, path: &str, size: usize, declared: bool) -> reqwest::RequestBuilder {
    let content_type = if path == "/signin" { "application/x-www-form-urlencoded" } else { "application/json" };
    let mut request = http()
        .post(env.served.url(path))
        .header("content-type", content_type)
        .header("accept", "application/json, text/event-stream");
    if path == "/mcp" {
        request = request.bearer_auth(bearer);
    }
    if declared {
        request.body(vec![b' '; size])
    } else {
        let chunks = (0..size.div_ceil(64 * KIB)).map(move |i| {
            let n = (size - i * 64 * KIB).min(64 * KIB);
            Ok::<_, std::io::Error>(vec![b' '; n])
        });
        request.body(reqwest::Body::wrap_stream(stream::iter(chunks.collect::<Vec<_>>())))
    }
}

#[tokio::test]
async fn an_oversized_body_is_413_on_every_kind_of_route_declared_or_streamed() {
    let (env, _project, bearer) = server().await;
    let routes = [
        ("/mcp", MIB),
        ("/roscoe/mcp", 4 * MIB),
        ("/deepwork/mcp", 4 * MIB),
        ("/api/validate", 4 * MIB),
        ("/hooks/roscoe/global/ship", MIB),
        ("/signin", 64 * KIB),
    ];
    for (path, limit) in routes {
        for declared in [true, false] {
            let what = format!("{path} with {} body", if declared { "a declared" } else { "a streamed" });
            let response = post(&env, &bearer, path, limit + 1, declared).send().await.unwrap();
            assert_eq!(response.status(), 413, "{what}");
            assert_eq!(response.headers()["connection"], "close", "{what}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["code"], "payload_too_large", "{what}: {body}");
            assert_eq!(body["limit_bytes"], limit, "{what}: {body}");
            assert!(body["error"].as_str().unwrap().contains(&format!("the limit of {path}")), "{what}: {body}");
        }
    }
}

#[tokio::test]
async fn the_largest_workflow_fits_the_rest_api_even_escaped_into_json() {
    let (env, _project, _bearer) = server().await;
    // Just under 1 MiB of YAML (the largest workflow there is), mostly quotes, so its JSON is twice as long.
    let head = "name: big\ninitial: ask\nnodes:\n  ask:\n    type: human\n    config: { prompt: Go? }\n    \
        transitions: { ship: $end }\ndescription: '";
    let yaml = format!("{head}{}'\n", "\"".repeat(MIB - head.len() - 2));
    assert!(yaml.len() <= MIB);
    let body = serde_json::to_vec(&json!({ "yaml": yaml })).unwrap();
    assert!(body.len() > 2 * MIB - KIB, "about 2 MiB: {}", body.len());
    let response = http()
        .post(env.served.url("/api/validate?project=global"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["valid"], true, "{answer}");
}

#[tokio::test]
async fn a_client_still_sending_a_refused_body_always_reads_the_413() {
    let (env, _project, bearer) = server().await;
    for attempt in 0..40 {
        // A fresh client each time: a new connection on which the whole 4 MB is still being sent when the 413 comes.
        let response = reqwest::Client::new()
            .post(env.served.url("/mcp"))
            .bearer_auth(&bearer)
            .header("content-type", "application/json")
            .body(vec![b' '; 4 * 1000 * 1000])
            .send()
            .await;
        let response = response.unwrap_or_else(|error| panic!("attempt {attempt}: the 413 was lost: {error:?}"));
        assert_eq!(response.status(), 413, "attempt {attempt}");
    }
}
