//! Work items agents coordinate on, over both transports: a dependency chain becomes ready in order (each item whose
//! last blocker finishes gets an "unblocked" event), cycles of blockers and of parents are refused naming the cycle
//! and change nothing, the ready queue orders by priority then age and filters by labels, `work_get` returns an item
//! whole (notes in full, blockers, what it blocks, children, history with the evidence about its pull requests), and
//! `work_list` finds items by a word in their notes, by labels and by priority.

use serde_json::{Value, json};

use crate::support::{Client, Via, item, space, worker};

/// The ids `work_ready` lists for `space`, in its order.
async fn ready(client: &Client, space: &str) -> Vec<String> {
    let listed = client.ok("work_ready", json!({"space_id": space})).await;
    ids(&listed)
}

fn ids(listed: &Value) -> Vec<String> {
    listed["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_owned()).collect()
}

/// A new item of `space` made with the extra `fields`; its id.
async fn item_with(client: &Client, space: &str, title: &str, fields: Value) -> String {
    let mut args = json!({"space_id": space, "title": title});
    args.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    let made = client.ok("work_create", args).await;
    made["item"]["id"].as_str().unwrap().to_owned()
}

/// Claims `id` as `who` and marks it done.
async fn finish(client: &Client, id: &str, who: &str) {
    client.ok("work_claim", json!({"item_id": id, "claimant": who})).await;
    let done = client.ok("work_update", json!({"item_id": id, "state": "done"})).await;
    assert_eq!(done["item"]["state"], "done");
}

/// The kinds of `id`'s events, oldest first.
async fn event_kinds(client: &Client, id: &str) -> Vec<String> {
    let whole = client.ok("work_get", json!({"item_id": id})).await;
    whole["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap().to_owned()).collect()
}

async fn a_chain_becomes_ready_in_order(via: Via) {
    let (_env, agent) = worker(via).await;
    let (space, other_space) = (space(&agent, "Chain").await, space(&agent, "Elsewhere").await);
    let schema = item(&agent, &space, "Schema").await;
    let api = item_with(&agent, &space, "API", json!({"blocked_by": [schema]})).await;
    let ui = item_with(&agent, &space, "UI", json!({"blocked_by": [api]})).await;
    let made = agent.ok("work_get", json!({"item_id": ui})).await;
    assert_eq!(made["item"]["blocked_by"], json!([api]));
    assert_eq!(made["blockers"][0]["id"], api.as_str());
    assert_eq!(made["blockers"][0]["state"], "open");

    // A cycle is refused, naming it, and nothing changes.
    let cycle = agent.fail("work_update", json!({"item_id": schema, "add_blocked_by": [ui]}), "invalid_argument").await;
    let message = cycle["message"].as_str().unwrap();
    assert!(message.contains("cycle"), "{message}");
    for id in [&schema, &api, &ui] {
        assert!(message.contains(id.as_str()), "the cycle names {id}: {message}");
    }
    assert!(message.contains(&format!("{schema} waits for {ui}")), "{message}");
    assert_eq!(agent.ok("work_get", json!({"item_id": schema})).await["item"]["blocked_by"], json!([]));
    agent.fail("work_update", json!({"item_id": api, "add_blocked_by": [api]}), "invalid_argument").await;
    let stranger = item(&agent, &other_space, "Stranger").await;
    let refused = agent.fail("work_update", json!({"item_id": api, "add_blocked_by": [stranger]}), "not_found").await;
    assert!(refused["message"].as_str().unwrap().contains("same space"), "{refused}");
    agent.fail("work_create", json!({"space_id": space, "title": "x", "blocked_by": ["wi_missing"]}), "not_found").await;
    // Parents: a cycle of parents is refused too.
    agent.ok("work_update", json!({"item_id": api, "parent_id": schema})).await;
    let parents = agent.fail("work_update", json!({"item_id": schema, "parent_id": api}), "invalid_argument").await;
    assert!(parents["message"].as_str().unwrap().contains("cycle of parents"), "{parents}");
    let whole = agent.ok("work_get", json!({"item_id": schema})).await;
    assert_eq!(whole["children"][0]["id"], api.as_str());
    assert_eq!(whole["blocks"][0]["id"], api.as_str());

    // Ready in order: each becomes ready when the one before it is done.
    assert_eq!(ready(&agent, &space).await, [schema.clone()]);
    let synonym = agent.ok("work_list", json!({"space_id": space, "state": "ready"})).await;
    assert_eq!(ids(&synonym), [schema.clone()], "state: ready is work_ready");
    finish(&agent, &schema, "worker").await;
    assert_eq!(ready(&agent, &space).await, [api.clone()]);
    let kinds = event_kinds(&agent, &api).await;
    assert_eq!(kinds.last().map(String::as_str), Some("unblocked"), "{kinds:?}");
    assert!(!event_kinds(&agent, &ui).await.contains(&"unblocked".to_owned()), "ui still waits for api");
    finish(&agent, &api, "worker").await;
    assert_eq!(ready(&agent, &space).await, [ui.clone()]);
    let history = agent.ok("work_get", json!({"item_id": ui})).await;
    let last = history["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((last["kind"].as_str(), last["data"]["last_blocker"].as_str()), (Some("unblocked"), Some(api.as_str())));
    finish(&agent, &ui, "worker").await;
    assert!(ready(&agent, &space).await.is_empty());

    // Taking a blocker away makes an item ready at once.
    let first = item(&agent, &space, "First").await;
    let second = item_with(&agent, &space, "Second", json!({"blocked_by": [first]})).await;
    assert_eq!(ready(&agent, &space).await, [first.clone()]);
    agent.ok("work_update", json!({"item_id": second, "remove_blocked_by": [first]})).await;
    let mut both = ready(&agent, &space).await;
    both.sort();
    let mut expected = vec![first, second];
    expected.sort();
    assert_eq!(both, expected);
    agent.close().await;
}

#[tokio::test]
async fn a_chain_becomes_ready_in_order_over_stdio() {
    a_chain_becomes_ready_in_order(Via::Stdio).await;
}

#[tokio::test]
async fn a_chain_becomes_ready_in_order_over_http() {
    a_chain_becomes_ready_in_order(Via::Http).await;
}

async fn the_ready_queue_and_the_filters(via: Via) {
    let (_env, agent) = worker(via).await;
    let space = space(&agent, "Queue").await;
    let routine = item_with(&agent, &space, "Routine", json!({"labels": ["backend"]})).await;
    let urgent = item_with(&agent, &space, "Urgent", json!({"priority": 0, "labels": ["backend", "db"]})).await;
    let later = item_with(&agent, &space, "Later", json!({"priority": 4})).await;
    let routine_too = item_with(&agent, &space, "Routine too", json!({"priority": 2, "labels": ["ui"]})).await;
    let soon = item_with(&agent, &space, "Soon", json!({"priority": 1})).await;
    let held = item_with(&agent, &space, "Held", json!({"priority": 0})).await;
    agent.ok("work_claim", json!({"item_id": held, "claimant": "someone"})).await;

    let listed = agent.ok("work_ready", json!({"space_id": space})).await;
    let order = ids(&listed);
    assert_eq!(order.len(), 5, "the held item is not ready: {listed}");
    assert_eq!(order[0], urgent, "priority 0 first");
    assert_eq!(order[1], soon);
    assert_eq!(order[4], later, "priority 4 last");
    // Within a priority, oldest first (ids break a tie within one millisecond).
    let key = |i: &Value| (i["priority"].as_i64().unwrap(), i["created_at"].as_str().unwrap().to_owned(), i["id"].to_string());
    let items = listed["items"].as_array().unwrap();
    let mut sorted = items.clone();
    sorted.sort_by_key(key);
    assert_eq!(*items, sorted, "priority, then age");
    let mut middle = [order[2].clone(), order[3].clone()];
    middle.sort();
    let mut routines = [routine.clone(), routine_too.clone()];
    routines.sort();
    assert_eq!(middle, routines);

    let backend = agent.ok("work_ready", json!({"space_id": space, "labels": ["backend"]})).await;
    assert_eq!(ids(&backend), [urgent.clone(), routine.clone()]);
    let both = agent.ok("work_ready", json!({"space_id": space, "labels": ["backend", "db"]})).await;
    assert_eq!(ids(&both), [urgent.clone()], "all of the labels");
    let page = agent.ok("work_ready", json!({"space_id": space, "page_size": 2})).await;
    assert_eq!(ids(&page), [urgent.clone(), soon.clone()]);

    let mut by_label = ids(&agent.ok("work_list", json!({"labels": ["backend"]})).await);
    by_label.sort();
    let mut expected = vec![urgent.clone(), routine.clone()];
    expected.sort();
    assert_eq!(by_label, expected);
    let urgent_ones = ids(&agent.ok("work_list", json!({"priority": 0})).await);
    assert_eq!(urgent_ones.len(), 2, "urgent and held");
    agent.fail("work_create", json!({"space_id": space, "title": "x", "priority": 5}), "invalid_argument").await;
    let many: Vec<String> = (0..21).map(|i| format!("l{i}")).collect();
    agent.fail("work_create", json!({"space_id": space, "title": "x", "labels": many}), "invalid_argument").await;
    agent.fail("work_ready", json!({}), "invalid_argument").await;

    // Changing priority and labels reorders and refilters.
    let changed = agent.ok("work_update", json!({"item_id": later, "priority": 0, "add_labels": ["db"]})).await;
    assert_eq!(changed["changed"], json!(["priority", "labels"]));
    let order = ids(&agent.ok("work_ready", json!({"space_id": space})).await);
    assert_eq!(&order[..2], [urgent.clone(), later.clone()]);
    agent.ok("work_update", json!({"item_id": urgent, "remove_labels": ["db"]})).await;
    let db = agent.ok("work_ready", json!({"space_id": space, "labels": ["db"]})).await;
    assert_eq!(ids(&db), [later.clone()]);
    agent.close().await;
}

#[tokio::test]
async fn the_ready_queue_orders_by_priority_then_age_over_stdio() {
    the_ready_queue_and_the_filters(Via::Stdio).await;
}

#[tokio::test]
async fn the_ready_queue_orders_by_priority_then_age_over_http() {
    the_ready_queue_and_the_filters(Via::Http).await;
}

async fn one_item_whole_and_search(via: Via) {
    let (_env, agent) = worker(via).await;
    let space = space(&agent, "Whole").await;
    let notes = format!("{} the paginator drops the last page. {}", "Context. ".repeat(200), "x".repeat(100));
    let id = item_with(&agent, &space, "Fix paging", json!({"notes": notes})).await;
    let other = item_with(&agent, &space, "Unrelated", json!({"notes": "nothing to see at a rate of 5x0"})).await;

    let preview = agent.ok("work_list", json!({"space_id": space})).await;
    let listed = preview["items"].as_array().unwrap().iter().find(|i| i["id"] == id.as_str()).unwrap().clone();
    assert!(listed["notes"].as_str().unwrap().chars().count() <= 200, "work_list previews notes");
    let found = agent.ok("work_list", json!({"query": "paginator"})).await;
    assert_eq!(ids(&found), [id.clone()], "a word in the notes");
    let by_title = agent.ok("work_list", json!({"query": "UNRELATED"})).await;
    assert_eq!(ids(&by_title), [other.clone()], "a word in the title, any case");
    assert_eq!(ids(&agent.ok("work_list", json!({"query": "5x0"})).await), [other.clone()]);
    assert!(ids(&agent.ok("work_list", json!({"query": "5_0"})).await).is_empty(), "_ is literal, not a wildcard");

    agent.ok("work_claim", json!({"item_id": id, "claimant": "worker one"})).await;
    let pull = "https://github.com/acme/web/pull/7";
    agent.ok("work_update", json!({"item_id": id, "state": "in_progress", "links": [pull]})).await;
    let merged = json!({"kind": "merged", "repository": "acme/web", "commit": "abc1234", "pull_requests": [7]});
    agent.ok("work_record_evidence", merged).await;
    agent.ok("work_handoff", json!({"item_id": id, "note": "Done: repro. Left: the fix.", "to": "worker two"})).await;
    let whole = agent.ok("work_get", json!({"item_id": id})).await;
    assert_eq!(whole["item"]["notes"], notes.as_str(), "notes in full");
    assert_eq!(whole["item"]["links"], json!([pull]));
    let events = whole["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds[0], "created");
    for kind in ["claimed", "state_changed", "links_added", "evidence", "handed_off"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let handed = events.iter().find(|e| e["kind"] == "handed_off").unwrap();
    assert!(handed.to_string().contains("Done: repro. Left: the fix."), "the note is in the history: {handed}");
    assert!(events.iter().all(|e| !e["at"].as_str().unwrap().is_empty() && !e["by"].as_str().unwrap().is_empty()));
    let evidence = events.iter().find(|e| e["kind"] == "evidence").unwrap();
    assert_eq!((evidence["data"]["pull_request"].as_i64(), evidence["seq"].as_i64()), (Some(7), Some(0)), "{evidence}");
    assert_eq!(evidence["data"]["evidence"]["commit"], "abc1234");
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).filter(|seq| *seq > 0).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "oldest first: {seqs:?}");
    agent.fail("work_get", json!({"item_id": "wi_missing"}), "not_found").await;
    agent.close().await;
}

#[tokio::test]
async fn work_get_returns_the_item_whole_and_query_finds_words_over_stdio() {
    one_item_whole_and_search(Via::Stdio).await;
}

#[tokio::test]
async fn work_get_returns_the_item_whole_and_query_finds_words_over_http() {
    one_item_whole_and_search(Via::Http).await;
}
