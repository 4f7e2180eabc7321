//! Pages of other origins cannot drive `cairn serve` through a browser: an `Origin` is this server's only with the
//! same scheme, host and port (a page on another port of the same host is another origin), `Sec-Fetch-Site` of
//! another site or origin changes nothing, every state-changing REST route takes only `Content-Type:
//! application/json`, and a form token belongs to the sign-in it was made for (not to a cookie any page of the host
//! can set). The browser's side of the same attacks is `browser.rs` (`cross_port.mjs`).

use cairn_web::access::{Door, RULES};
use regex::Regex;
use serde_json::{Value, json};

use crate::cairn_serve::Served;
use crate::support::{Env, http, start, token, token_as};

/// Starts a `decide` run (waiting at its human step) as the local person; its id.
async fn paused_run(env: &Env) -> String {
    let started = http().post(env.served.url("/api/runs?project=global")).json(&json!({"workflowId": "decide"}));
    let started: Value = started.send().await.unwrap().json().await.unwrap();
    started["runId"].as_str().unwrap().to_owned()
}

/// The run's status, as the REST API says.
async fn status(env: &Env, run: &str) -> String {
    let history: Value = http().get(env.served.url(&format!("/api/runs/{run}"))).send().await.unwrap().json().await.unwrap();
    history["run"]["status"].as_str().unwrap().to_owned()
}

/// The port of `served`.
fn port(served: &Served) -> u16 {
    served.base.rsplit(':').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn an_origin_of_another_port_scheme_or_name_is_refused() {
    let env = start().await;
    let run = paused_run(&env).await;
    let cancel = env.served.url(&format!("/api/runs/{run}/cancel"));
    let port = port(&env.served);
    let others = [
        format!("http://127.0.0.1:{}", port + 1),
        format!("http://127.0.0.1:{}", port - 1),
        "http://127.0.0.1".to_owned(),
        format!("https://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
        format!("http://127.0.0.1:{port}/"),
    ];
    for origin in &others {
        let refused = http().post(&cancel).header("origin", origin).json(&json!({})).send().await.unwrap();
        assert_eq!(refused.status(), 403, "Origin {origin} on a server at {}", env.served.base);
        let reason = refused.text().await.unwrap();
        assert!(reason.contains(&format!("Origin '{origin}' is not allowed")), "{reason}");
        assert!(reason.contains(&format!("http://127.0.0.1:{port}")), "the refusal names the server's own origin: {reason}");
    }
    assert_eq!(status(&env, &run).await, "paused", "refused requests change nothing");
    let own = http().post(&cancel).header("origin", &env.served.base).json(&json!({})).send().await.unwrap();
    assert_eq!(own.status(), 200, "the server's own origin is served");
    assert_eq!(status(&env, &run).await, "cancelled");
}

#[tokio::test]
async fn a_browser_request_from_another_site_changes_nothing_but_may_open_pages() {
    let env = start().await;
    let run = paused_run(&env).await;
    let cancel = env.served.url(&format!("/api/runs/{run}/cancel"));
    for site in ["cross-site", "same-site"] {
        let refused = http().post(&cancel).header("sec-fetch-site", site).json(&json!({})).send().await.unwrap();
        assert_eq!(refused.status(), 403, "Sec-Fetch-Site: {site}");
        let reason = refused.text().await.unwrap();
        assert!(reason.contains(&format!("Sec-Fetch-Site: {site}")), "{reason}");
        // A link from elsewhere still opens a page.
        let page = http().get(env.served.url(&format!("/runs/{run}"))).header("sec-fetch-site", site).send().await.unwrap();
        assert_eq!(page.status(), 200, "GET with Sec-Fetch-Site: {site}");
    }
    assert_eq!(status(&env, &run).await, "paused");
    let own = http().post(&cancel).header("sec-fetch-site", "same-origin").json(&json!({})).send().await.unwrap();
    assert_eq!(own.status(), 200, "the server's own pages are served");
}

/// `cairn serve` with `args` and `ROSCOE_PUBLIC_URL` = `public_url` on a fresh home.
async fn serve(args: &[&str], public_url: Option<&str>) -> (Served, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("serve").args(args).env("CAIRN_HOME", tmp.path()).env_remove("CAIRN_DATABASE_URL");
    command.env_remove("ROSCOE_PUBLIC_URL");
    if let Some(url) = public_url {
        command.env("ROSCOE_PUBLIC_URL", url);
    }
    (Served::start(command).await, tmp)
}

/// The status of `GET /healthz` with `host` and, if given, `origin`.
async fn health(served: &Served, host: &str, origin: Option<&str>) -> u16 {
    let mut request = http().get(served.url("/healthz")).header("host", host);
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn an_allowed_host_with_a_port_allows_that_port_and_one_without_the_default_ports() {
    let (served, _home) = serve(&["--allowed-host", "cairn.lan:8443", "--allowed-host", "Proxy.Example"], None).await;
    assert_eq!(health(&served, "cairn.lan:8443", None).await, 200);
    assert_eq!(health(&served, "cairn.lan:8443", Some("https://cairn.lan:8443")).await, 200);
    assert_eq!(health(&served, "cairn.lan:8443", Some("http://cairn.lan:8443")).await, 200);
    for host in ["cairn.lan:9000", "cairn.lan"] {
        assert_eq!(health(&served, host, None).await, 403, "Host {host}: another port");
    }
    assert_eq!(health(&served, "cairn.lan:8443", Some("https://cairn.lan:9000")).await, 403);
    // A name without a port: any port in `Host`, and its default ports as an origin (behind a TLS proxy that keeps
    // `Host` or rewrites it to loopback alike).
    assert_eq!(health(&served, "proxy.example:8080", None).await, 200);
    for host in ["proxy.example", "127.0.0.1"] {
        assert_eq!(health(&served, host, Some("https://proxy.example")).await, 200, "Host {host}");
        assert_eq!(health(&served, host, Some("https://proxy.example:443")).await, 200, "Host {host}");
        assert_eq!(health(&served, host, Some("https://proxy.example:8443")).await, 403, "Host {host}");
    }
}

#[tokio::test]
async fn the_public_url_is_an_origin_of_the_server() {
    let (served, _home) = serve(&[], Some("https://cairn.example.com:8443/cairn")).await;
    let loopback = format!("127.0.0.1:{}", port(&served));
    assert_eq!(health(&served, &loopback, Some("https://cairn.example.com:8443")).await, 200);
    assert_eq!(health(&served, &loopback, Some("https://cairn.example.com")).await, 403);
    assert_eq!(health(&served, &loopback, Some("http://cairn.example.com:8443")).await, 403);
}

/// Whether `body` is a 415 refusal in either REST shape (`{ error, code }`, or work's `{ error: { code } }`).
fn unsupported(body: &Value) -> bool {
    let code = body["code"].as_str().or_else(|| body["error"]["code"].as_str());
    let message = body["error"].as_str().or_else(|| body["error"]["message"].as_str()).unwrap_or_default();
    code == Some("unsupported_media_type") && message.contains("Content-Type: application/json")
}

#[tokio::test]
async fn every_state_changing_rest_route_takes_only_json() {
    let env = start().await;
    let bearer = token(&env);
    let changing: Vec<_> = RULES.iter().filter(|r| r.path.starts_with("/api/") && r.method != "GET").collect();
    assert!(changing.len() >= 20, "the REST routes that change something: {changing:?}");
    for rule in changing {
        let url = env.served.url(&rule.path.replace('{', "").replace('}', ""));
        for (content_type, body) in [(None, ""), (Some("text/plain;charset=UTF-8"), "{}"), (Some("application/x-www-form-urlencoded"), "a=1"), (Some("multipart/form-data; boundary=x"), "")] {
            let mut request = http().request(rule.method.parse().unwrap(), &url).body(body);
            if let Some(content_type) = content_type {
                request = request.header("content-type", content_type);
            }
            if rule.door == Door::Token {
                request = request.bearer_auth(&bearer);
            }
            let response = request.send().await.unwrap();
            let what = format!("{} {} with Content-Type {content_type:?}", rule.method, rule.path);
            assert_eq!(response.status(), 415, "{what}");
            let body: Value = response.json().await.unwrap();
            assert!(unsupported(&body), "{what}: {body}");
        }
    }
}

#[tokio::test]
async fn a_bodiless_post_needs_the_json_type_and_may_leave_the_body_empty() {
    let env = start().await;
    let run = paused_run(&env).await;
    let cancel = env.served.url(&format!("/api/runs/{run}/cancel"));
    let bare = http().post(&cancel).send().await.unwrap();
    assert_eq!(bare.status(), 415, "a POST without Content-Type, as fetch(…, {{mode: 'no-cors'}}) sends it");
    let body: Value = bare.json().await.unwrap();
    assert!(unsupported(&body), "{body}");
    assert!(body["error"].as_str().unwrap().contains("POST /api/runs/{id}/cancel"), "names the route: {body}");
    assert_eq!(status(&env, &run).await, "paused", "the refused request changed nothing");
    let bad = http().post(&cancel).header("content-type", "application/json").body("{").send().await.unwrap();
    assert_eq!(bad.status(), 400, "a body that is not JSON");
    assert_eq!(status(&env, &run).await, "paused");
    let empty = http().post(&cancel).header("content-type", "application/json; charset=utf-8").send().await.unwrap();
    assert_eq!(empty.status(), 200, "an empty JSON-typed body is no reason");
    assert_eq!(status(&env, &run).await, "cancelled");
}

/// The form token of a page.
fn csrf_of(html: &str) -> String {
    Regex::new(r#"name="csrf" value="([0-9a-f]{64})""#).unwrap().captures(html).expect("a form token")[1].to_owned()
}

/// The `name=value` pairs of the cookies `response` sets.
fn cookies_set(response: &reqwest::Response) -> Vec<String> {
    let values = response.headers().get_all("set-cookie").iter();
    values.map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned()).collect()
}

/// `GET path` with `cookie`: every cookie it sets and its form token.
async fn visit(env: &Env, path: &str, cookie: &str) -> (Vec<String>, String) {
    let page = http().get(env.served.url(path)).header("cookie", cookie).send().await.unwrap();
    assert_eq!(page.status(), 200, "{path}");
    let set = cookies_set(&page);
    (set, csrf_of(&page.text().await.unwrap()))
}

/// Signs a browser (`cookie`, with the sign-in form's `csrf`) in with `token`: its sign-in cookie.
async fn sign_in(env: &Env, cookie: &str, csrf: &str, token: &str) -> String {
    let form = format!("csrf={csrf}&token={token}");
    let signed = http().post(env.served.url("/signin")).header("cookie", cookie);
    let signed = signed.header("content-type", "application/x-www-form-urlencoded").body(form).send().await.unwrap();
    assert_eq!(signed.status(), 303, "signing in");
    cookies_set(&signed).into_iter().find(|c| c.starts_with("cairn_session=")).expect("the sign-in cookie")
}

/// Posts the decision `ship` on `run`'s page as `cookie` with form token `csrf`; the status.
async fn decide(env: &Env, run: &str, cookie: &str, csrf: &str) -> u16 {
    let form = format!("csrf={csrf}&transition=ship&node_id=ask");
    let post = http().post(env.served.url(&format!("/runs/{run}/resume?project=global"))).header("cookie", cookie);
    let post = post.header("content-type", "application/x-www-form-urlencoded").body(form);
    post.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn a_form_token_belongs_to_the_sign_in_it_was_made_for() {
    let env = start().await;
    let ada = token_as(&env, "Ada", "person", "roscoe:run");
    let bob = token_as(&env, "Bob", "person", "roscoe:run");
    let run = paused_run(&env).await;

    // What any local process can read from the sign-in page: the cookies it sets and its form token.
    let (anonymous_cookies, anonymous_csrf) = visit(&env, "/signin", "").await;
    let planted = anonymous_cookies.join("; ");
    let ada_session = sign_in(&env, &planted, &anonymous_csrf, &ada).await;
    let (bob_cookies, bob_csrf) = visit(&env, "/signin", "").await;
    let bob_session = sign_in(&env, &bob_cookies.join("; "), &bob_csrf, &bob).await;
    let (_, bob_csrf) = visit(&env, "/runs", &[bob_cookies, vec![bob_session]].concat().join("; ")).await;

    // Ada's browser, with whatever cookies a page on another port of the host planted (cookies ignore ports), and the
    // tokens other browsers or the sign-in page were given: refused.
    let victim = if planted.is_empty() { ada_session.clone() } else { format!("{planted}; {ada_session}") };
    for (csrf, whose) in [(&anonymous_csrf, "the sign-in page's"), (&bob_csrf, "Bob's")] {
        assert_eq!(decide(&env, &run, &victim, csrf).await, 403, "{whose} form token in Ada's browser");
    }
    assert_eq!(status(&env, &run).await, "paused", "refused forms change nothing");

    // Ada's own token, read from a page of her sign-in.
    let (set, ada_csrf) = visit(&env, &format!("/runs/{run}?project=global"), &ada_session).await;
    assert!(set.iter().all(|c| !c.starts_with("cairn_csrf=")), "no form cookie any page of the host could set: {set:?}");
    assert_ne!(ada_csrf, bob_csrf, "each sign-in has its own token");
    assert_eq!(decide(&env, &run, &ada_session, &ada_csrf).await, 303, "Ada's form");
    assert_eq!(status(&env, &run).await, "completed");

    // The local person of a loopback server, without a sign-in: the token of no sign-in, which a signed-in
    // browser's forms never take.
    let second = paused_run(&env).await;
    let (_, local_csrf) = visit(&env, &format!("/runs/{second}?project=global"), "").await;
    assert_eq!(decide(&env, &second, &ada_session, &local_csrf).await, 403, "the local person's token with Ada's sign-in");
    assert_eq!(decide(&env, &second, "", &local_csrf).await, 303, "the local person's form");
    assert_eq!(status(&env, &second).await, "completed");
}
