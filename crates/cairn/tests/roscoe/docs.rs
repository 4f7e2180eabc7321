//! The docs tools over MCP: `list_docs`, `get_doc`, `search_docs`, `ask_docs`, `answer_docs`, with their error cases,
//! no scope needed, and every listed tool's name finding its own reference entry first.

use serde_json::{Value, json};

use crate::support::*;

#[tokio::test]
async fn list_get_and_search_the_docs() {
    let env = Env::new();
    let client = env.connect().await;

    let list = client.ok("list_docs", json!({})).await;
    let pages = list.as_array().unwrap();
    assert!(pages.len() >= 28, "{} pages", pages.len());
    assert_eq!(pages[0]["slug"], "index");
    for page in pages {
        assert!(page["title"].as_str().is_some_and(|t| !t.is_empty()), "{page}");
        assert!(page["description"].as_str().is_some_and(|d| !d.is_empty()), "{page}");
    }

    let doc = client.ok("get_doc", json!({"slug": "guides/testing-workflows"})).await;
    assert_eq!(doc["frontmatter"]["title"], "Testing workflows");
    assert!(doc["markdown"].as_str().unwrap().contains("## Fan-out nodes"));
    let err = client.fail("get_doc", json!({"slug": "guides/nope"})).await;
    assert_eq!(err, json!({"error": "Doc not found: guides/nope. Call list_docs for the slugs.", "code": "not_found"}));
    assert_eq!(client.fail("get_doc", json!({})).await["code"], "invalid_input");
    // The docs take no scope: a cwd is an unknown argument.
    let err = client.fail("get_doc", json!({"slug": "index", "cwd": "/"})).await;
    assert!(err["error"].as_str().unwrap().contains("unknown field `cwd`"), "{err}");

    let hits = client.ok("search_docs", json!({"query": "uncapped_cycle", "limit": 3})).await;
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 3);
    for hit in hits {
        for key in ["slug", "title", "headingId", "headingText", "snippet", "score"] {
            assert!(hit.get(key).is_some(), "{key} missing in {hit}");
        }
        let snippet = hit["snippet"].as_str().unwrap();
        assert!(snippet.chars().count() <= 2 * 80 + "uncapped_cycle".len() + 2, "{snippet}");
    }
    assert!(hits.iter().any(|h| h["snippet"].as_str().unwrap().contains("uncapped_cycle")), "{hits:?}");
    assert_eq!(client.fail("search_docs", json!({"query": " ?! "})).await["code"], "invalid_input");
    assert_eq!(client.fail("search_docs", json!({"query": "x", "limit": 0})).await["code"], "invalid_input");

    // Every tool the server lists is documented, and its name finds its reference entry first.
    let tools = client.service.list_all_tools().await.unwrap();
    assert!(tools.len() >= 21);
    for tool in tools {
        let name = tool.name.as_ref();
        let hits = client.ok("search_docs", json!({"query": name})).await;
        assert_eq!(
            (hits[0]["slug"].clone(), hits[0]["headingId"].clone()),
            (json!("reference/mcp-tools"), json!(name)),
            "search_docs({name}) ranked {}",
            hits[0]
        );
    }
    client.close().await;
}

#[tokio::test]
async fn ask_and_answer_from_the_docs() {
    let env = Env::new();
    let client = env.connect().await;

    let asked = client.ok("ask_docs", json!({"question": "How do I test a workflow with mocks?"})).await;
    assert_eq!(asked["question"], "How do I test a workflow with mocks?");
    let sections = asked["sections"].as_array().unwrap();
    assert!(!sections.is_empty());
    assert!(sections.iter().any(|s| s["slug"] == "guides/testing-workflows"), "{sections:?}");
    let total: usize = sections.iter().map(|s| s["text"].as_str().unwrap().chars().count()).sum();
    assert_eq!(asked["totalChars"], total);
    assert!(total <= 12_000);
    for s in sections {
        let text = s["text"].as_str().unwrap();
        match s["headingId"].as_str() {
            Some(_) => assert!(text.starts_with('#'), "a section starts at its heading: {text}"),
            None => assert_eq!(s["headingText"], Value::Null),
        }
    }

    let small = client.ok("ask_docs", json!({"question": "How do I test a workflow with mocks?", "budget_chars": 500, "max_sections": 1})).await;
    assert_eq!(small["truncated"], true);
    assert!(small["sections"].as_array().unwrap().len() <= 1);
    assert!(small["totalChars"].as_u64().unwrap() <= 500);
    assert_eq!(client.fail("ask_docs", json!({"question": "   "})).await["code"], "invalid_input");
    assert_eq!(client.fail("ask_docs", json!({"question": "x", "max_sections": 0})).await["code"], "invalid_input");

    let answer = client.ok("answer_docs", json!({"question": "What does the global scope see?"})).await;
    assert_eq!(answer["action"], "answer_prompt");
    assert_eq!(answer["model"], "claude-sonnet-4-5");
    let prompt = answer["prompt"].as_str().unwrap();
    assert!(prompt.contains("What does the global scope see?") && prompt.contains("[1]"), "{prompt}");
    assert!(answer["instructions"].as_str().unwrap().contains("citations"));
    let citations = answer["citations"].as_array().unwrap();
    assert!(!citations.is_empty());
    for c in citations {
        for key in ["slug", "title", "headingId", "headingText"] {
            assert!(c.get(key).is_some(), "{key} missing in {c}");
        }
    }
    let err = client.fail("answer_docs", json!({"question": ""})).await;
    assert_eq!(err["code"], "invalid_input");
    let err = client.fail("answer_docs", json!({"question": "zzqx wvvkj"})).await;
    assert_eq!(err["code"], "no_sections");
    assert!(err["error"].as_str().unwrap().contains("ask_docs"));
    client.close().await;
}
