//! The long lists beyond the runs page (whose paging and search the browser test checks): the workflows list searches
//! ids, names and descriptions and pages by 25 in id order; a board column shows 50 cards and "More" pages through
//! that state alone, with no card twice and none left out.

use std::collections::BTreeSet;

use regex::Regex;
use serde_json::json;

use crate::support::{Mcp, http, start, token};

/// The workflow ids a workflows page lists, in order.
fn workflow_ids(page: &str) -> Vec<String> {
    let row = Regex::new(r#"<small class="muted">([a-z0-9_-]+)</small></td>"#).unwrap();
    row.captures_iter(page).map(|c| c[1].to_owned()).collect()
}

#[tokio::test]
async fn the_workflows_list_searches_and_pages() {
    let env = start().await;
    let folder = env.home.join("workflows");
    for i in 0..30 {
        let text = format!("name: flow-{i:02}\ndescription: Step {i}\ninitial: a\nnodes:\n  a:\n    type: human\n    config: {{ prompt: Go? }}\n    transitions: {{ go: $end }}\n");
        std::fs::write(folder.join(format!("flow-{i:02}.yaml")), text).unwrap();
    }
    let get = |path: String| {
        let url = env.served.url(&path);
        async move { http().get(url).send().await.unwrap().text().await.unwrap() }
    };
    let first = get("/workflows?project=global".into()).await;
    let ids = workflow_ids(&first);
    assert_eq!(ids.len(), 25, "a page of 25: {ids:?}");
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "in id order");
    let next = Regex::new(r#"id="next" rel="next" href="([^"]+)""#).unwrap().captures(&first).expect("a next link")[1]
        .replace("&amp;", "&");
    let second = workflow_ids(&get(next).await);
    let all: BTreeSet<String> = ids.iter().chain(&second).cloned().collect();
    assert_eq!(all.len(), 32, "30 flows, decide and ship, each once: {second:?}");
    assert_eq!(second.last().map(String::as_str), Some("ship"));

    let found = workflow_ids(&get("/workflows?project=global&q=STEP+1".into()).await);
    assert_eq!(found, ["flow-01", "flow-10", "flow-11", "flow-12", "flow-13", "flow-14", "flow-15", "flow-16", "flow-17", "flow-18", "flow-19"], "by description, any case");
    let none = get("/workflows?project=global&q=nothing-like-it".into()).await;
    assert!(none.contains("No workflows match."), "{none}");
}

#[tokio::test]
async fn a_board_column_pages_through_its_state() {
    let env = start().await;
    let writer = Mcp::connect(env.served.url("/mcp"), &token(&env)).await;
    let space = writer.ok("decisions_create_space", json!({"name": "Big"})).await["space"]["id"].as_str().unwrap().to_owned();
    let mut made = BTreeSet::new();
    for i in 0..60 {
        let item = writer.ok("work_create", json!({"space_id": space, "title": format!("Task {i}")})).await;
        made.insert(item["item"]["id"].as_str().unwrap().to_owned());
    }
    let cards = Regex::new(r#"class="card" data-item="([^"]+)""#).unwrap();
    let board = http().get(env.served.url("/work")).send().await.unwrap().text().await.unwrap();
    let first: Vec<String> = cards.captures_iter(&board).map(|c| c[1].to_owned()).collect();
    assert_eq!(first.len(), 50, "a column shows 50");
    let more = Regex::new(r#"href="/work\?([^"]+)" data-more="open""#).unwrap().captures(&board).expect("a More link")[1]
        .replace("&#38;", "&");
    assert!(more.contains("state=open") && more.contains("after="), "{more}");
    let rest = http().get(env.served.url(&format!("/work?{more}"))).send().await.unwrap().text().await.unwrap();
    let second: Vec<String> = cards.captures_iter(&rest).map(|c| c[1].to_owned()).collect();
    assert_eq!(second.len(), 10, "the other ten: {more}");
    let seen: BTreeSet<String> = first.into_iter().chain(second).collect();
    assert_eq!(seen, made, "every item once");
    assert!(!rest.contains("data-more="), "nothing more after the last page");
}
