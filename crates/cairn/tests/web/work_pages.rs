//! The work pages over plain HTTP: evidence recorded over `/mcp` shown on the board (escaped), and signing in with a
//! work token — the board and its claim button act as the token's principal, a bad token and a missing scope are
//! refused with a message on the page (state untouched), signing out returns to the local person, and a server that
//! answers other host names serves work pages only after a sign-in.

use regex::Regex;
use serde_json::{Value, json};

use crate::cairn_serve::Served;
use crate::rest::post_json;
use crate::support::{Env, Mcp, http, start, token, token_as};

const ALL: &str = "mcp:read,mcp:write,decisions:read,decisions:write";

/// A urlencoded form body (the values here need no escaping).
fn form(request: reqwest::RequestBuilder, fields: &[(&str, &str)]) -> reqwest::RequestBuilder {
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
    request.header("content-type", "application/x-www-form-urlencoded").body(body.join("&"))
}

/// The form token in a page.
fn csrf_of(html: &str) -> String {
    Regex::new(r#"name="csrf" value="([0-9a-f]{64})""#).unwrap().captures(html).expect("a form token")[1].to_owned()
}

/// The `name=value` of the cookie `name` a response sets, if it does.
fn set_cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|v| v.starts_with(&format!("{name}=")))
}

/// Item `id` as `GET /api/work/items` lists it (it must be open or claimed).
async fn item(env: &Env, bearer: &str, id: &str) -> Value {
    for state in ["open", "claimed"] {
        let url = env.served.url(&format!("/api/work/items?state={state}&page_size=200"));
        let listed: Value = http().get(url).bearer_auth(bearer).send().await.unwrap().json().await.unwrap();
        if let Some(found) = listed["items"].as_array().unwrap().iter().find(|i| i["id"] == id) {
            return found.clone();
        }
    }
    panic!("item {id} is neither open nor claimed")
}

#[tokio::test]
async fn evidence_recorded_over_mcp_shows_on_the_board_escaped() {
    let env = start().await;
    let writer = Mcp::connect(env.served.url("/mcp"), &token(&env)).await;
    let ci = Mcp::connect(env.served.url("/mcp"), &token_as(&env, "ci <b>bot</b>", "service", ALL)).await;
    let space = writer.ok("decisions_create_space", json!({"name": "Web"})).await;
    let links = ["https://github.com/acme/web/pull/742", "https://github.com/Acme/Web/pull/744"];
    let made = writer
        .ok("work_create", json!({"space_id": space["space"]["id"], "title": "Ship <i>SSO</i>", "links": links}))
        .await;
    let item = made["item"]["id"].as_str().unwrap().to_owned();
    // A second card, in another column, links only to the other pull request the roll names.
    let other = writer
        .ok("work_create", json!({"space_id": space["space"]["id"], "title": "Docs", "links": ["https://github.com/acme/web/pull/700"]}))
        .await;
    let other = other["item"]["id"].as_str().unwrap().to_owned();
    let commit = "abc1234def5678abc1234def5678abc1234def56";
    let merged = json!({"kind": "merged", "repository": "acme/web", "commit": commit, "pull_requests": [742],
        "at": "2026-01-02T03:04:05Z"});
    ci.ok("work_record_evidence", merged).await;
    let rolled = json!({"kind": "rolled", "repository": "acme/web", "commit": commit, "pull_requests": [742, 700],
        "service": "prod-eu"});
    ci.ok("work_record_evidence", rolled).await;
    writer.ok("work_claim", json!({"item_id": item, "claimant": "claude-worker"})).await;

    let board = http().get(env.served.url("/work")).send().await.unwrap().text().await.unwrap();
    let card = &board[board.find(&format!(r#"data-item="{item}""#)).expect("the item's card")..];
    let card = &card[..card.find(r#"<div class="card""#).unwrap_or(card.len())];
    assert!(card.contains("held by <strong>claude-worker</strong>"), "the claimant: {card}");
    assert!(card.contains(r#"data-pr="acme/web#742" data-kind="merged""#), "the merge: {card}");
    assert!(card.contains(r#"<code title="abc1234def5678abc1234def5678abc1234def56">abc1234def56</code>"#), "{card}");
    assert!(card.contains("2026-01-02T03:04:05.000Z"), "when it merged: {card}");
    assert!(card.contains(r#"data-kind="rolled">acme/web#742 <strong>rolled</strong> to <strong class="service">prod-eu</strong>"#), "{card}");
    assert!(card.contains("recorded by <span class=\"recorded-by\">ci &#60;b&#62;bot&#60;/b&#62; (service)</span> <time datetime="), "{card}");
    assert!(card.contains(r#"Acme/Web#744: <span class="muted">no evidence recorded</span>"#), "{card}");
    assert!(card.contains("Ship &#60;i&#62;SSO&#60;/i&#62;"), "{card}");
    assert!(!board.contains("<b>bot</b>") && !board.contains("<i>SSO</i>"), "untrusted text is never markup");
    let card = &board[board.find(&format!(r#"data-item="{other}""#)).expect("the other item's card")..];
    let card = &card[..card.find(r#"<div class="card""#).unwrap_or(card.len())];
    assert!(card.contains(r#"data-pr="acme/web#700" data-kind="rolled""#), "the roll names #700 too: {card}");
    assert!(!card.contains(r#"data-kind="merged""#), "#700 never merged: {card}");
    let fragment = http().get(env.served.url("/work?fragment=1")).send().await.unwrap().text().await.unwrap();
    assert!(fragment.contains(r#"data-kind="rolled""#), "the live fragment shows the evidence too");
}

#[tokio::test]
async fn a_signed_in_token_acts_on_the_board_within_its_scopes_until_sign_out() {
    let env = start().await;
    let client = http();
    let url = |p: &str| env.served.url(p);
    let writer = token(&env);
    let ada = token_as(&env, "Ada", "person", ALL);
    let reader = token_as(&env, "Rita", "person", "mcp:read,decisions:read");
    let space: Value =
        post_json(&client, url("/api/spaces"), &writer, &json!({"name": "S"})).await;
    let mut items = Vec::new();
    for title in ["First", "Second"] {
        let made = client.post(url("/api/work/items")).bearer_auth(&writer);
        let made: Value = made.json(&json!({"space_id": space["space"]["id"], "title": title})).send().await.unwrap().json().await.unwrap();
        items.push((made["id"].as_str().unwrap().to_owned(), made["account_id"].as_str().unwrap().to_owned()));
    }
    // Nobody signed in: the loopback-only server's board acts as the local person.
    let page = client.get(url("/signin")).send().await.unwrap();
    assert!(set_cookie(&page, "cairn_csrf").is_none(), "no form cookie: a form token belongs to a sign-in");
    let html = page.text().await.unwrap();
    assert!(html.contains("act as the local person"), "{html}");
    let csrf = csrf_of(&html);
    let board = client.get(url("/work")).send().await.unwrap().text().await.unwrap();
    assert!(board.contains(r#"<span id="acting">local person (person)</span>"#), "{board}");

    // Bad attempts change nothing and say why.
    let sign_in = |token: &str, csrf: &str| form(client.post(url("/signin")), &[("csrf", csrf), ("token", token)]);
    let forged = sign_in(&ada, &"0".repeat(64)).send().await.unwrap();
    assert_eq!(forged.status(), 403, "no sign-in without the form token");
    let unknown = sign_in("cairn_01ABCDEFGHJKMNPQRSTVWXYZ00_nope", &csrf).send().await.unwrap();
    assert_eq!(unknown.status(), 401);
    assert!(set_cookie(&unknown, "cairn_session").is_none(), "a bad token is not kept");
    let html = unknown.text().await.unwrap();
    assert!(html.contains(r#"<p class="error" id="signin-error">this token is unknown, expired or revoked"#), "{html}");
    assert_eq!(sign_in("", &csrf).send().await.unwrap().status(), 400, "an empty field");

    // Ada signs in: an HttpOnly, SameSite=Strict cookie holding a sign-in of its own (never the token), and the
    // board (and its claim button) act as Ada.
    let signed = sign_in(&ada, &csrf).send().await.unwrap();
    assert_eq!(signed.status(), 303);
    assert_eq!(signed.headers()["location"], "/");
    let cookie = set_cookie(&signed, "cairn_session").expect("the sign-in cookie");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(!cookie.contains(&ada) && !cookie.contains("Secure"), "no token in the cookie, no Secure over plain HTTP: {cookie}");
    let as_ada = cookie.split(';').next().unwrap().to_owned();
    let board = client.get(url("/work")).header("cookie", &as_ada).send().await.unwrap().text().await.unwrap();
    assert!(board.contains(r#"<span id="acting">Ada (person)</span>"#), "{board}");
    let ada_csrf = csrf_of(&board);
    assert_ne!(ada_csrf, csrf, "a sign-in has a form token of its own");
    assert!(board.contains(r#"action="/signout""#), "the header offers to sign out");
    let (first, account) = &items[0];
    let claim = url(&format!("/work/items/{first}/claim"));
    let claimed = form(client.post(&claim).header("cookie", &as_ada), &[("csrf", &ada_csrf), ("account_id", account)]).send().await.unwrap();
    assert_eq!(claimed.status(), 303);
    let held = item(&env, &writer, first).await;
    let held = (held["state"].as_str(), held["claimant"].as_str(), held["claimant_kind"].as_str());
    assert_eq!(held, (Some("claimed"), Some("Ada"), Some("person")), "the claim is the token's principal's");
    let again = form(client.post(&claim).header("cookie", &as_ada), &[("csrf", &ada_csrf), ("account_id", account)]).send().await.unwrap();
    assert_eq!(again.status(), 303, "claiming one's own item again is a no-op");
    let wrong = form(client.post(url("/signin")).header("cookie", &as_ada), &[("csrf", &ada_csrf), ("token", "cairn_x_y")]);
    let wrong = wrong.send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    assert!(set_cookie(&wrong, "cairn_session").is_none(), "a failed attempt keeps the earlier sign-in");
    assert!(wrong.text().await.unwrap().contains("Signed in as <strong>Ada (person)</strong>"));
    let bearer = format!("Bearer%20{reader}");
    let pasted = form(client.post(url("/signin")), &[("csrf", &csrf), ("token", &bearer)]);
    assert_eq!(pasted.send().await.unwrap().status(), 303, "a pasted `Bearer ` prefix is dropped");

    // A read-only token sees the board but may not claim: a page that says which scopes are missing.
    let signed = sign_in(&reader, &csrf).send().await.unwrap();
    let as_rita = set_cookie(&signed, "cairn_session").unwrap().split(';').next().unwrap().to_owned();
    let board = client.get(url("/work")).header("cookie", &as_rita).send().await.unwrap();
    assert_eq!(board.status(), 200);
    let board = board.text().await.unwrap();
    assert!(board.contains(r#"<span id="acting">Rita (person)</span>"#));
    let rita_csrf = csrf_of(&board);
    let (second, account) = &items[1];
    let refused = form(client.post(url(&format!("/work/items/{second}/claim"))).header("cookie", &as_rita), &[("csrf", &rita_csrf), ("account_id", account)]);
    let refused = refused.send().await.unwrap();
    assert_eq!(refused.status(), 403);
    let html = refused.text().await.unwrap();
    assert!(
        html.contains("POST /work/items/{id}/claim needs scopes mcp:write, decisions:write; this token has mcp:read, decisions:read; sign in at /signin with a token that has them"),
        "{html}"
    );
    assert!(html.contains(r#"<a href="/signin">Sign in</a>"#), "{html}");
    assert_eq!(item(&env, &writer, second).await["state"], "open", "the refused claim changed nothing");

    // A sign-in that no longer works is never taken for the local person: the browser forgets it and is sent to
    // sign in again, with the reason.
    let dead = "cairn_session=gone";
    let board = client.get(url("/work?x=1")).header("cookie", dead).send().await.unwrap();
    assert_eq!(board.status(), 303);
    assert_eq!(board.headers()["location"], "/signin?ended=1&next=/work%3Fx%3D1");
    assert!(set_cookie(&board, "cairn_session").unwrap().contains("Max-Age=0"), "the dead sign-in is forgotten");
    let html = client.get(url("/signin?ended=1&next=/work")).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("sign-in has ended (its token was revoked or expired)"), "{html}");

    // Signing out needs the form token, clears the cookie, and the board is the local person's again.
    let out = form(client.post(url("/signout")).header("cookie", &as_rita), &[("csrf", &"0".repeat(64))]).send().await.unwrap();
    assert_eq!(out.status(), 403);
    let out = form(client.post(url("/signout")).header("cookie", &as_rita), &[("csrf", &rita_csrf)]).send().await.unwrap();
    assert_eq!(out.status(), 303);
    assert_eq!(out.headers()["location"], "/signin");
    let cleared = set_cookie(&out, "cairn_session").expect("the cookie is cleared");
    assert!(cleared.starts_with("cairn_session=;") && cleared.contains("Max-Age=0"), "{cleared}");
    let ended = client.get(url("/work")).header("cookie", &as_rita).send().await.unwrap();
    assert_eq!(ended.status(), 303, "the sign-in ended on the server too, not only in this browser");
    let board = client.get(url("/work")).send().await.unwrap().text().await.unwrap();
    assert!(board.contains(r#"<span id="acting">local person (person)</span>"#), "{board}");
}

#[tokio::test]
async fn a_server_answering_other_names_shows_work_pages_only_after_a_sign_in() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.args(["serve", "--allowed-host", "cairn.lan"]).env("CAIRN_HOME", &home).env_remove("CAIRN_DATABASE_URL");
    let served = Served::start(command).await;
    let client = http();
    let anonymous = client.get(served.url("/work")).send().await.unwrap();
    assert_eq!(anonymous.status(), 303, "a page without a sign-in sends the browser to sign in");
    assert_eq!(anonymous.headers()["location"], "/signin?next=/work");

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["work", "token", "create", "--principal", "Ada", "--kind", "person", "--scopes", ALL])
        .env("CAIRN_HOME", &home)
        .env_remove("CAIRN_DATABASE_URL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ada = serde_json::from_slice::<Value>(&out.stdout).unwrap()["token"].as_str().unwrap().to_owned();
    let page = client.get(served.url("/signin")).send().await.unwrap();
    let html = page.text().await.unwrap();
    assert!(html.contains("This server needs a sign-in for every page."), "{html}");
    let fields = [("csrf", csrf_of(&html)), ("token", ada.clone()), ("next", "/work".to_owned())];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let signed = form(client.post(served.url("/signin")), &fields).send().await.unwrap();
    assert_eq!(signed.status(), 303);
    assert_eq!(signed.headers()["location"], "/work", "back to the page that asked for the sign-in");
    let cookie = set_cookie(&signed, "cairn_session").unwrap().split(';').next().unwrap().to_owned();
    let board = client.get(served.url("/work")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(board.status(), 200);
    assert!(board.text().await.unwrap().contains(r#"<span id="acting">Ada (person)</span>"#));
    let documents = client.get(served.url("/work/documents")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(documents.status(), 200);
}

#[tokio::test]
async fn the_board_filters_by_claimant_space_and_text() {
    let env = start().await;
    let writer = Mcp::connect(env.served.url("/mcp"), &token(&env)).await;
    let mut spaces = Vec::new();
    for name in ["Web", "Mobile"] {
        spaces.push(writer.ok("decisions_create_space", json!({"name": name})).await["space"]["id"].as_str().unwrap().to_owned());
    }
    let mut ids = Vec::new();
    for (space, title, claimant) in [(0, "Checkout page", "ada"), (0, "Search box", "bob"), (1, "Checkout screen", "")] {
        let made = writer.ok("work_create", json!({"space_id": spaces[space], "title": title})).await;
        let id = made["item"]["id"].as_str().unwrap().to_owned();
        if !claimant.is_empty() {
            writer.ok("work_claim", json!({"item_id": id, "claimant": claimant})).await;
        }
        ids.push(id);
    }
    let shown = |query: String| {
        let env = &env;
        let ids = ids.clone();
        async move {
            let page = http().get(env.served.url(&format!("/work?{query}"))).send().await.unwrap().text().await.unwrap();
            ids.iter().map(|id| page.contains(&format!(r#"data-item="{id}""#))).collect::<Vec<bool>>()
        }
    };
    assert_eq!(shown(String::new()).await, [true, true, true]);
    assert_eq!(shown("claimant=ada".into()).await, [true, false, false], "by claimant");
    assert_eq!(shown(format!("space={}", spaces[1])).await, [false, false, true], "by space");
    assert_eq!(shown("q=CHECKOUT".into()).await, [true, false, true], "by words, any case");
    assert_eq!(shown(format!("q=checkout&space={}", spaces[0])).await, [true, false, false], "together");
    let fragment = http().get(env.served.url("/work?q=search")).send().await.unwrap().text().await.unwrap();
    let live = Regex::new(r#"hx-get="([^"]*)""#).unwrap().captures(&fragment).unwrap()[1].to_owned();
    assert!(live.ends_with("q=search") && live.contains("fragment=1"), "the live refresh keeps the filter: {live}");
}

#[tokio::test]
async fn a_document_reads_as_markdown_the_header_says_what_it_counts_and_only_a_held_item_offers_finish() {
    let env = start().await;
    let client = http();
    let url = |p: &str| env.served.url(p);
    let writer = Mcp::connect(url("/mcp"), &token(&env)).await;
    let space = writer.ok("decisions_create_space", json!({"name": "Texts"})).await;
    let space_id = space["space"]["id"].as_str().or(space["id"].as_str()).unwrap().to_owned();
    let body = "# Plan\n\nShip **soon**. <script>alert(1)</script>\n\n- [link](javascript:alert(2))\n";
    let doc = writer.ok("decisions_create_document", json!({"space_id": space_id, "title": "Plan", "body": body})).await;
    let doc_id = doc["document"]["id"].as_str().or(doc["id"].as_str()).unwrap().to_owned();
    let page = client.get(url(&format!("/work/spaces/{space_id}/documents/{doc_id}"))).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let page = page.text().await.unwrap();
    let rendered = page.split(r#"<div class="doc" id="document-body">"#).nth(1).expect("the body").split("</div>").next().unwrap();
    assert!(rendered.contains("<h1>Plan</h1>") && rendered.contains("<strong>soon</strong>"), "markdown rendered: {rendered}");
    assert!(rendered.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !rendered.contains("<script"), "HTML stays text: {rendered}");
    assert!(rendered.contains(r##"<a href="#">link</a>"##) && !rendered.contains("javascript:"), "{rendered}");

    // A loopback server needs no sign-in: the header offers none (the page itself still works); the workspace
    // switcher says what its number counts.
    let started = client.post(url("/api/runs?project=global")).json(&json!({"workflowId": "decide"}));
    assert!(started.send().await.unwrap().status().is_success());
    let home = client.get(url("/")).send().await.unwrap().text().await.unwrap();
    assert!(!home.contains(r#"<a href="/signin">Sign in</a>"#), "{home}");
    assert!(home.contains(">Global (1 run)</option>"), "{home}");
    assert_eq!(client.get(url("/signin")).send().await.unwrap().status(), 200);
    let guarded = crate::support::start_with(&["--require-auth"]).await;
    let signin = client.get(guarded.served.url("/signin")).send().await.unwrap().text().await.unwrap();
    assert!(signin.contains(r#"<a href="/signin">Sign in</a>"#), "a server that needs a sign-in offers it: {signin}");

    // Finish is offered on an item someone holds, not on one nobody has claimed.
    let item = writer.ok("work_create", json!({"space_id": space_id, "title": "Unclaimed"})).await;
    let item_id = item["item"]["id"].as_str().or(item["id"].as_str()).unwrap().to_owned();
    let item_page = |id: String| {
        let request = client.get(url(&format!("/work/items/{id}")));
        async move { request.send().await.unwrap().text().await.unwrap() }
    };
    let finish = r#"value="done" class="primary">Finish</button>"#;
    let open = item_page(item_id.clone()).await;
    assert!(open.contains(">Claim</button>") && !open.contains(finish), "{open}");
    writer.ok("work_claim", json!({"item_id": item_id, "claimant": "ada"})).await;
    assert!(item_page(item_id).await.contains(finish), "a held item can be finished");
}
