//! The web pages over plain HTTP: the `/open` deep link, the run page's decision buttons behind CSRF tokens, the
//! Origin guard on forms, escaping of untrusted work item text, and the other pages rendering.

use regex::Regex;
use serde_json::{Value, json};

use crate::rest::post_json;
use crate::support::{http, start, token};

/// A urlencoded form body (the values here need no escaping).
fn form(request: reqwest::RequestBuilder, fields: &[(&str, &str)]) -> reqwest::RequestBuilder {
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
    request.header("content-type", "application/x-www-form-urlencoded").body(body.join("&"))
}

#[tokio::test]
async fn the_deep_link_opens_the_run_page_whose_forms_need_the_csrf_token() {
    let env = start().await;
    let client = http();
    let url = |p: &str| env.served.url(p);
    let started: Value =
        client.post(url("/api/runs?project=global")).json(&json!({"workflowId": "decide"})).send().await.unwrap().json().await.unwrap();
    let id = started["runId"].as_str().unwrap();
    assert!(started.get("urlNote").is_none(), "the server that started the run serves its link: {started}");
    let open = client.get(started["url"].as_str().unwrap()).send().await.unwrap();
    assert_eq!(open.status(), 303);
    assert_eq!(open.headers()["location"], format!("/runs/{id}?project=global").as_str());
    assert_eq!(client.get(url("/open/runs/..%2Fx?project=global")).send().await.unwrap().status(), 404);

    let page = client.get(url(&format!("/runs/{id}?project=global"))).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"value="ship""#) && html.contains(r#"value="stop""#), "one button per transition");
    assert!(html.contains("hx-sse:connect="), "the live part subscribes over SSE");
    let csrf = Regex::new(r#"name="csrf" value="([0-9a-f]{64})""#).unwrap().captures(&html).unwrap()[1].to_owned();

    let resume = url(&format!("/runs/{id}/resume?project=global"));
    let zeros = "0".repeat(64);
    let forged = form(client.post(&resume), &[("csrf", &zeros), ("transition", "ship")]);
    assert_eq!(forged.send().await.unwrap().status(), 403);
    let missing = form(client.post(&resume), &[("transition", "ship")]);
    assert!(missing.send().await.unwrap().status().is_client_error());
    let foreign = form(client.post(&resume).header("origin", "https://evil.example"), &[("csrf", &csrf), ("transition", "ship")]);
    assert_eq!(foreign.send().await.unwrap().status(), 403);
    let status: Value = client.get(url(&format!("/api/runs/{id}"))).send().await.unwrap().json().await.unwrap();
    assert_eq!(status["run"]["status"], "paused", "refused forms change nothing");

    let decided = form(client.post(&resume), &[("csrf", &csrf), ("transition", "ship"), ("node_id", "ask")]).send().await.unwrap();
    assert_eq!(decided.status(), 303);
    let html = client.get(url(&format!("/runs/{id}?project=global"))).send().await.unwrap();
    let html = html.text().await.unwrap();
    assert!(html.contains(r#"data-status="completed""#), "{html}");
    assert!(!html.contains(r#"id="decision""#), "no decision once decided");
}

#[tokio::test]
async fn pages_render_and_untrusted_text_stays_escaped() {
    let env = start().await;
    let client = http();
    let url = |p: &str| env.served.url(p);
    let writer = token(&env);
    let space: Value =
        post_json(&client, url("/api/spaces"), &writer, &json!({"name": "S"})).await;
    let title = "<script>alert(1)</script> & <b>bold</b>";
    let made = client
        .post(url("/api/work/items"))
        .bearer_auth(&writer)
        .json(&json!({"space_id": space["space"]["id"], "title": title}))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 201);
    let board = client.get(url("/work")).send().await.unwrap().text().await.unwrap();
    assert!(board.contains("&#60;script&#62;alert(1)&#60;/script&#62; &#38; &#60;b&#62;bold&#60;/b&#62;"), "{board}");
    assert!(!board.contains("<script>alert"), "never markup");

    let workflows = client.get(url("/workflows")).send().await.unwrap().text().await.unwrap();
    assert!(workflows.contains(r#"<span class="badge global">global</span>"#) && workflows.contains("valid"), "{workflows}");
    let page = client.get(url("/workflows/ship?project=global")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains(r#"data-node="ask""#) && page.contains("ship → $end"), "{page}");
    for (path, needle) in [("/docs?q=resume_run", "id=\"hits\""), ("/runs?status=paused", "Runs"), ("/work/documents", "Documents")] {
        let response = client.get(url(path)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert!(response.text().await.unwrap().contains(needle), "{path}");
    }
    let missing = client.get(url("/docs/no-such-page")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(client.get(url("/sessions")).send().await.unwrap().status(), 404, "sessions need --project");
    assert_eq!(client.get(url("/assets/htmx.min.js")).send().await.unwrap().status(), 200);
}
