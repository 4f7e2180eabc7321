//! The link crawl: from `/` and a docs search, every same-server link of every page (`<a href>`, `<link href>`, `<script src>`) is
//! followed, redirects included, over a server with a run, a workflow and a work item in it; no link may answer an
//! error, and a `#fragment` on a docs page must name an element of that page.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use regex::Regex;
use serde_json::json;

use crate::support::{Env, Mcp, http, start, token};

/// Pages fetched at most; the UI has far fewer, so reaching it means a link generates links without end.
const MAX_PAGES: usize = 600;

/// A server with something on every page: a paused run, a finished run and a work item with history.
pub async fn populated() -> Env {
    let env = start().await;
    let client = http();
    for workflow in ["ship", "decide"] {
        let started = client.post(env.served.url("/api/runs?project=global")).json(&json!({"workflowId": workflow}));
        assert!(started.send().await.unwrap().status().is_success());
    }
    let work = Mcp::connect(env.served.url("/mcp"), &token(&env)).await;
    let space = work.ok("decisions_create_space", json!({"name": "Crawl"})).await;
    let space_id = space["space"]["id"].as_str().or(space["id"].as_str()).unwrap().to_owned();
    let item = work.ok("work_create", json!({"space_id": space_id, "title": "Crawl every page"})).await;
    let item_id = item["item"]["id"].as_str().or(item["id"].as_str()).unwrap().to_owned();
    work.ok("work_claim", json!({"item_id": item_id, "claimant": "crawler"})).await;
    work.ok("decisions_create_document", json!({"space_id": space_id, "title": "Plan", "body": "# Plan\n"})).await;
    env
}

/// `(path without fragment, fragment)` of `href` as seen from `page` (a path), or `None` for another site.
fn resolve(page: &str, href: &str) -> Option<(String, String)> {
    let href = href.replace("&amp;", "&");
    if href.starts_with("http:") || href.starts_with("https:") || href.starts_with("mailto:") || href.starts_with("//") {
        return None;
    }
    let (path, fragment) = href.split_once('#').map_or((href.as_str(), ""), |(p, f)| (p, f));
    let page_path = page.split(['?', '#']).next().unwrap_or(page);
    let path = match path {
        "" => page.to_owned(),
        p if p.starts_with('/') => p.to_owned(),
        p if p.starts_with('?') => format!("{page_path}{p}"),
        p => format!("{}/{p}", page_path.rsplit_once('/').map_or("", |(dir, _)| dir)),
    };
    Some((path, fragment.to_owned()))
}

#[tokio::test]
async fn every_link_of_every_page_leads_somewhere() {
    let env = populated().await;
    let client = http();
    let link = Regex::new(r#"(?:href|src)="([^"]*)""#).unwrap();
    let id = Regex::new(r#"\sid="([^"]*)""#).unwrap();
    // The home page, and a docs search whose hits link to sections of pages.
    let starts = ["/", "/docs?q=human+decision+transitions"];
    let mut seen: BTreeSet<String> = starts.iter().map(|s| (*s).to_owned()).collect();
    let mut queue: VecDeque<(String, String)> = starts.iter().map(|s| ((*s).to_owned(), "the start".to_owned())).collect();
    let mut broken = Vec::new();
    // Fragments asked of docs pages: page → (fragment → the page that links to it).
    let mut fragments: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut ids: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    while let Some((path, from)) = queue.pop_front() {
        assert!(seen.len() < MAX_PAGES, "more than {MAX_PAGES} distinct links: {seen:?}");
        let response = client.get(env.served.url(&path)).send().await.unwrap();
        let status = response.status();
        if status.is_redirection() {
            let location = response.headers()["location"].to_str().unwrap().to_owned();
            if let Some((next, _)) = resolve(&path, &location)
                && seen.insert(next.clone())
            {
                queue.push_back((next, path.clone()));
            }
            continue;
        }
        if !status.is_success() {
            broken.push(format!("{path} ({status}) linked from {from}"));
            continue;
        }
        let html_page = response.headers().get("content-type").is_some_and(|t| t.to_str().unwrap().starts_with("text/html"));
        if !html_page {
            continue;
        }
        let body = response.text().await.unwrap();
        if path.starts_with("/docs/") {
            ids.insert(path.clone(), id.captures_iter(&body).map(|c| c[1].to_owned()).collect());
        }
        for capture in link.captures_iter(&body) {
            let Some((next, fragment)) = resolve(&path, &capture[1]) else { continue };
            if next.starts_with("/docs/") && !fragment.is_empty() {
                fragments.entry(next.clone()).or_default().insert(fragment, path.clone());
            }
            if seen.insert(next.clone()) {
                queue.push_back((next, path.clone()));
            }
        }
    }
    for (page, wanted) in &fragments {
        for (fragment, from) in wanted {
            if ids.get(page).is_some_and(|ids| !ids.contains(fragment)) {
                broken.push(format!("{page}#{fragment} (no such id) linked from {from}"));
            }
        }
    }
    assert!(broken.is_empty(), "{} broken links:\n{}", broken.len(), broken.join("\n"));
    for expected in ["/docs", "/workflows", "/work"] {
        assert!(seen.iter().any(|p| p.starts_with(expected)), "the crawl reached {expected}: {seen:?}");
    }
    let docs = seen.iter().filter(|p| p.starts_with("/docs/")).count();
    assert!(docs >= 20, "the crawl reached every docs page ({docs}): {seen:?}");
}
