//! The board's coordination over plain HTTP: items made over `/mcp` with priorities, labels, blockers, a parent and
//! a leased claim show on the board (priority, labels, "blocked by N" linking the blockers, the lease time left),
//! the ready column leaves a blocked item out until its blocker is done, the label and priority filters and the text
//! search narrow the board, and an item's page lists what it waits for, what waits for it, its parent and children
//! and its history (a claim with its lease, a lease that ran out, the unblocking) — with item text always escaped.

use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::{Value, json};

use crate::support::{Env, Mcp, http, start, token};

/// The HTML of `path` (which must answer 200).
async fn page(env: &Env, path: &str) -> String {
    let response = http().get(env.served.url(path)).send().await.unwrap();
    assert_eq!(response.status(), 200, "GET {path}");
    response.text().await.unwrap()
}

/// The card of item `id` in a board page.
fn card<'a>(board: &'a str, id: &str) -> &'a str {
    let card = &board[board.find(&format!(r#"<div class="card" data-item="{id}""#)).expect("the item's card")..];
    &card[..card[1..].find(r#"<div class="card""#).map_or(card.len(), |end| end + 1)]
}

/// Where the card of item `id` is in a board page.
fn position(board: &str, id: &str) -> usize {
    board.find(&format!(r#"<div class="card" data-item="{id}""#)).expect("the item's card")
}

/// Which of `ids` have a card on the board at `path`.
async fn shown(env: &Env, path: &str, ids: &[&str]) -> Vec<bool> {
    let board = page(env, path).await;
    ids.iter().map(|id| board.contains(&format!(r#"<div class="card" data-item="{id}""#))).collect()
}

/// A space with: `design` (P1, backend, claimed with a lease of an hour), `build` (P0, ui, waiting for `design`,
/// its title holding markup), `docs` (P3, docs) and `part` (under `build`). The server, the client, the space and the
/// ids in that order.
async fn board() -> (Env, Mcp, String, [String; 4]) {
    let env = start().await;
    let work = Mcp::connect(env.served.url("/mcp"), &token(&env)).await;
    let space = work.ok("decisions_create_space", json!({"name": "Web"})).await;
    let space = space["space"]["id"].as_str().unwrap().to_owned();
    let create = |args: Value| {
        let work = &work;
        let mut args = args;
        args["space_id"] = space.clone().into();
        async move { work.ok("work_create", args).await["item"]["id"].as_str().unwrap().to_owned() }
    };
    let design = create(json!({"title": "Design the API", "priority": 1, "labels": ["backend"]})).await;
    let build = json!({"title": "Build <script>alert(1)</script> UI", "priority": 0, "labels": ["ui", "frontend"],
        "blocked_by": [design]});
    let build = create(build).await;
    let docs = json!({"title": "Write the docs", "priority": 3, "labels": ["docs"], "notes": "Guides first"});
    let docs = create(docs).await;
    let part = create(json!({"title": "Style the <b>buttons</b>", "parent_id": build})).await;
    work.ok("work_claim", json!({"item_id": design, "claimant": "designer", "lease_seconds": 3600})).await;
    (env, work, space, [design, build, docs, part])
}

#[tokio::test]
async fn the_board_shows_priorities_labels_blockers_and_leases_and_the_ready_column_waits_for_blockers() {
    let (env, work, space, [design, build, docs, part]) = board().await;
    let ids = [design.as_str(), build.as_str(), docs.as_str(), part.as_str()];
    let board = page(&env, "/work").await;
    assert!(!board.contains("<script>alert") && !board.contains("<b>buttons"), "item text is never markup");
    let waiting = card(&board, &build);
    assert!(waiting.contains("Build &#60;script&#62;alert(1)&#60;/script&#62; UI"), "{waiting}");
    assert!(waiting.contains(r#"data-priority="0""#) && waiting.contains(">P0</span>"), "its priority: {waiting}");
    assert!(waiting.contains(r#"href="/work?labels=ui">ui</a>"#), "its labels, each a filter: {waiting}");
    assert!(waiting.contains(r#"href="/work?labels=frontend">frontend</a>"#), "{waiting}");
    assert!(waiting.contains(r#"<div class="blocked-by" data-blocked-by="1">blocked by 1: "#), "{waiting}");
    assert!(waiting.contains(&format!(r#"data-blocker="{design}" title="claimed">Design the API</a>"#)), "{waiting}");
    assert!(waiting.contains(&format!(r#"href="/work/items/{design}?account="#)), "the blocker is linked: {waiting}");
    assert!(!waiting.contains("lease:"), "nobody holds it: {waiting}");

    // The leased claim: the time left, worked out on the server, and when it runs out.
    let held = work.ok("work_get", json!({"item_id": design})).await;
    let until = held["item"]["lease_expires_at"].as_str().expect("a lease").to_owned();
    let leased = card(&board, &design);
    assert!(leased.contains(&format!(r#"data-lease-expires-at="{until}""#)), "{leased}");
    let left = Regex::new(r">lease: (?:(\d+)h (\d+)m|(\d+)m (\d+)s) left<").unwrap();
    let found = left.captures(leased).unwrap_or_else(|| panic!("the time left: {leased}"));
    let seconds = match (found.get(1), found.get(3)) {
        (Some(h), _) => h.as_str().parse::<u64>().unwrap() * 3600 + found[2].parse::<u64>().unwrap() * 60,
        (_, Some(m)) => m.as_str().parse::<u64>().unwrap() * 60 + found[4].parse::<u64>().unwrap(),
        _ => unreachable!(),
    };
    assert!(seconds > 0 && seconds <= 3600, "at most the hour claimed: {leased}");
    assert!(leased.contains(">P1</span>") && !leased.contains("blocked-by"), "{leased}");

    // The ready column: open, unheld, every blocker done — the blocked item waits, the held one is not there.
    let ready = format!("/work?state=ready&space={space}");
    assert_eq!(shown(&env, &ready, &ids).await, [false, false, true, true], "ready before the blocker is done");
    assert_eq!(shown(&env, "/work?state=ready", &ids).await, [false, false, true, true], "every space's queue");
    let column = page(&env, &ready).await;
    assert!(column.contains(r#"<section class="column" data-state="ready">"#), "one column");
    assert!(position(&column, &part) < position(&column, &docs), "most urgent first: P2 before P3");
    assert_eq!(shown(&env, "/work?state=ready&labels=docs", &ids).await, [false, false, true, false], "with labels");
    assert_eq!(shown(&env, "/work?state=ready&priority=3", &ids).await, [false, false, true, false], "with a priority");
    assert_eq!(shown(&env, "/work?state=ready&q=GUIDES", &ids).await, [false, false, true, false], "with words");

    // The label and priority filters and the text search.
    assert_eq!(shown(&env, "/work?labels=ui", &ids).await, [false, true, false, false], "by label");
    assert_eq!(shown(&env, "/work?labels=ui,+frontend", &ids).await, [false, true, false, false], "every label");
    assert_eq!(shown(&env, "/work?labels=ui,docs", &ids).await, [false; 4], "an item carries every label asked");
    assert_eq!(shown(&env, "/work?priority=1", &ids).await, [true, false, false, false], "by priority");
    assert_eq!(shown(&env, "/work?q=the+api", &ids).await, [true, false, false, false], "by words");
    assert_eq!(shown(&env, "/work?state=claimed", &ids).await, [true, false, false, false], "one state");
    let live = page(&env, "/work?labels=ui&priority=0&state=open").await;
    let live = Regex::new(r#"hx-get="([^"]*)""#).unwrap().captures(&live).unwrap()[1].replace("&#38;", "&");
    assert!(live.contains("state=open&labels=ui&priority=0"), "the live refresh keeps the filter: {live}");
    let wrong = http().get(env.served.url("/work?priority=9")).send().await.unwrap();
    assert_eq!(wrong.status(), 400, "a priority out of range is refused on the page");

    // Its blocker done, the item is ready and no longer says it is blocked.
    work.ok("work_update", json!({"item_id": design, "state": "done"})).await;
    assert_eq!(shown(&env, &ready, &ids).await, [false, true, true, true], "ready once its blocker is done");
    let column = page(&env, &ready).await;
    assert!(position(&column, &build) < position(&column, &part), "P0 first");
    assert!(!card(&page(&env, "/work").await, &build).contains("blocked-by"), "a done blocker blocks nothing");
}

#[tokio::test]
async fn an_item_page_lists_its_blockers_parts_and_history_with_claims_and_leases() {
    let (env, work, _space, [design, build, docs, part]) = board().await;
    let waiting = page(&env, &format!("/work/items/{build}")).await;
    assert!(!waiting.contains("<script>alert") && !waiting.contains("<b>buttons"), "item text is never markup");
    assert!(waiting.contains(r#"<p class="blocked-by" data-blocked-by="1">blocked by 1"#), "{waiting}");
    let blocker = format!(r#"<li data-item="{design}" data-state="claimed"><a href="/work/items/{design}?account="#);
    assert!(waiting.contains(&blocker), "what it waits for, linked: {waiting}");
    let held = r#"Design the API</a> <small class="muted">claimed, held by designer</small>"#;
    assert!(waiting.contains(held), "who holds it: {waiting}");
    assert!(waiting.contains(&format!(r#"<ul id="children"><li data-item="{part}" data-state="open">"#)), "{waiting}");
    assert!(waiting.contains("Style the &#60;b&#62;buttons&#60;/b&#62;</a>"), "its part, escaped: {waiting}");
    assert!(waiting.contains(r#"<dd class="priority" data-priority="0">P0"#), "{waiting}");
    assert!(waiting.contains(r#"<a class="badge label" href="/work?labels=ui">ui</a>"#), "{waiting}");
    assert!(waiting.contains(&format!("created it, waiting for {design}")), "its history: {waiting}");
    let child = page(&env, &format!("/work/items/{part}")).await;
    let parent = format!(r#"<dd id="parent"><a href="/work/items/{build}?account="#);
    assert!(child.contains(&parent), "its parent, linked: {child}");
    assert!(child.contains("Build &#60;script&#62;alert(1)&#60;/script&#62; UI</a>"), "escaped: {child}");

    // The blocker's page: what waits for it, its lease, and its claim in its history.
    let leased = page(&env, &format!("/work/items/{design}")).await;
    assert!(leased.contains(&format!(r#"<ul id="blocks"><li data-item="{build}" data-state="open">"#)), "{leased}");
    let lease = r#"<dd class="lease" data-lease-expires-at="[^"]+" title="until [^"]+">lease: \d+[hm] \d+[ms] left<"#;
    assert!(Regex::new(lease).unwrap().is_match(&leased), "the lease time left: {leased}");
    let claim = concat!(
        r#"<tr data-kind="claimed">.*?<td class="by">designer</td>"#,
        r#"<td class="what">claimed it as designer with a lease until \S+</td>"#
    );
    assert!(Regex::new(claim).unwrap().is_match(&leased), "the claim, by whom, with its lease: {leased}");
    work.ok("work_update", json!({"item_id": design, "state": "done"})).await;
    let unblocked = page(&env, &format!("/work/items/{build}")).await;
    assert!(!unblocked.contains("blocked-by"), "{unblocked}");
    assert!(unblocked.contains(&format!(r#"<li data-item="{design}" data-state="done">"#)), "{unblocked}");
    assert!(unblocked.contains(&format!("its last blocker ({design}) is done")), "the unblocking: {unblocked}");

    // A lease nobody renews runs out: the history says whose, oldest event first.
    work.ok("work_claim", json!({"item_id": docs, "claimant": "sleepy", "lease_seconds": 1})).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let expired = loop {
        let html = page(&env, &format!("/work/items/{docs}")).await;
        if html.contains(r#"data-kind="lease_expired""#) {
            break html;
        }
        assert!(Instant::now() < deadline, "the server's sweep never ended the lease: {html}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let kinds: Vec<String> =
        Regex::new(r#"<tr data-kind="([a-z_]+)">"#).unwrap().captures_iter(&expired).map(|c| c[1].to_owned()).collect();
    assert_eq!(kinds, ["created", "claimed", "lease_expired"], "oldest first");
    let ended = concat!(
        r#"<td class="what">ended the lease of sleepy: it is open again</td>"#,
        r#"<td class="note">lease expired: held by sleepy since "#
    );
    assert!(expired.contains(ended), "{expired}");
    assert!(expired.contains(r#"id="item-state" data-state="open""#) && !expired.contains("lease: "), "open again");
}
