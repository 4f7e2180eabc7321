//! `cairn work items …` and `cairn work evidence …` as people and CI scripts use them: on the local database (the
//! local user, or the holder of `CAIRN_TOKEN`) and with `--url` through the REST API of `cairn serve`. The id one
//! command prints with `-q` feeds the next; the ready queue's order and blockers; history; claims refused with exit
//! code 3 naming the holder, 4 for what does not exist; `next` until nothing is ready; and evidence from a script
//! that `work_status` then reflects.

use serde_json::{Value, json};

use crate::support::{ALL, Env, Ran, Via, space};

/// `cairn work` as one user: the local user (`--as` agent unless `args` say otherwise), or with `token` and `url`
/// the holder of that token at that server.
struct Cli<'a> {
    env: &'a Env,
    token: Option<String>,
    url: Option<String>,
}

impl Cli<'_> {
    async fn run(&self, args: &[&str]) -> Ran {
        let mut args: Vec<&str> = args.to_vec();
        if let Some(url) = &self.url {
            args.extend(["--url", url]);
        }
        let envs: Vec<(&str, &str)> = self.token.iter().map(|t| ("CAIRN_TOKEN", t.as_str())).collect();
        self.env.cli_run(&args, &envs).await
    }

    /// A command that must succeed; its JSON.
    async fn ok(&self, args: &[&str]) -> Value {
        let ran = self.run(args).await;
        assert_eq!(ran.code, 0, "cairn work {args:?}: {}", ran.stderr);
        serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("cairn work {args:?} prints JSON ({e}): {ran:?}"))
    }

    /// A command that must succeed, with `-q`; the ids it printed, one a line.
    async fn ids(&self, args: &[&str]) -> Vec<String> {
        let ran = self.run(&[args, &["-q"]].concat()).await;
        assert_eq!(ran.code, 0, "cairn work {args:?} -q: {}", ran.stderr);
        assert!(ran.stdout.is_empty() || ran.stdout.ends_with('\n'), "{ran:?}");
        ran.stdout.lines().map(str::to_owned).collect()
    }

    /// A command that makes one thing, with `-q`; its id.
    async fn id(&self, args: &[&str]) -> String {
        let ids = self.ids(args).await;
        assert_eq!(ids.len(), 1, "one id: {ids:?}");
        ids[0].clone()
    }

    /// A command that must fail with exit code `code`; its stderr (nothing on stdout).
    async fn fails(&self, args: &[&str], code: i32) -> String {
        let ran = self.run(args).await;
        assert_eq!(ran.code, code, "cairn work {args:?}: {ran:?}");
        assert_eq!(ran.stdout, "", "a failed command prints nothing on stdout");
        ran.stderr
    }
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

/// Two string fields of `value` ("<none>" for one that is not a string).
fn two<'a>(value: &'a Value, a: &str, b: &str) -> (&'a str, &'a str) {
    (value[a].as_str().unwrap_or("<none>"), value[b].as_str().unwrap_or("<none>"))
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn items_from_the_command_line_on_the_local_database() {
    let env = Env::new();
    let person = env.local("person").await;
    let sp = space(&person, "Checkout").await;
    person.close().await;
    let cli = Cli { env: &env, token: None, url: None };

    let parser =
        cli.id(&["items", "create", "--space", &sp, "--title", "Write the parser", "--labels", "api,backend"]).await;
    assert!(parser.starts_with("wi_"), "{parser}");
    let schema = cli
        .id(&["items", "create", "--space", &sp, "--title", "Design the schema", "--priority", "1", "--labels", "api"])
        .await;
    let review = cli.id(&["items", "create", "--space", &sp, "--title", "Review the schema", "--priority", "1"]).await;
    let made = cli
        .ok(&[
            "items", "create", "--space", &sp, "--title", "Ship the parser", "--notes", "after the parser",
            "--priority", "0", "--blocked-by", &parser, "--link", "https://github.com/acme/web/pull/9",
        ])
        .await;
    let ship = made["item"]["id"].as_str().unwrap().to_owned();
    assert_eq!(made["item"]["state"], "open");
    assert_eq!(made["item"]["priority"], 0);
    assert_eq!(strings(&made["item"]["blocked_by"]), [parser.as_str()]);
    assert_eq!(made["item"]["links"], json!(["https://github.com/acme/web/pull/9"]));

    // Most urgent first, then oldest; the blocked one is left out until its blocker is done.
    let ready = cli.ids(&["items", "ready", "--space", &sp]).await;
    assert_eq!(ready, [schema.clone(), review.clone(), parser.clone()]);
    assert_eq!(cli.ids(&["items", "list", "--space", &sp, "--state", "ready"]).await, ready);
    let listed = cli.ok(&["items", "ready", "--space", &sp, "--labels", "api"]).await;
    assert_eq!(listed["items"][0]["title"], "Design the schema", "{listed}");
    assert_eq!(listed["items"].as_array().unwrap().len(), 2);

    let list = |extra: &'static [&'static str]| {
        let mut args = vec!["items", "list", "--space", sp.as_str()];
        args.extend(extra);
        args
    };
    assert_eq!(sorted(cli.ids(&list(&["--labels", "api"])).await), sorted(vec![parser.clone(), schema.clone()]));
    assert_eq!(cli.ids(&list(&["--labels", "api,backend"])).await, [parser.as_str()]);
    assert_eq!(sorted(cli.ids(&list(&["--priority", "1"])).await), sorted(vec![schema.clone(), review.clone()]));
    assert_eq!(sorted(cli.ids(&list(&["--query", "parser"])).await), sorted(vec![parser.clone(), ship.clone()]));
    let all = cli.ok(&list(&[])).await;
    assert_eq!((all["items"].as_array().unwrap().len(), all["next_page_token"].as_str()), (4, Some("")));

    let shown = cli.ok(&["items", "show", &ship]).await;
    assert_eq!(shown["item"]["notes"], "after the parser");
    assert_eq!(two(&shown["blockers"][0], "id", "state"), (parser.as_str(), "open"));
    assert_eq!(shown["events"][0]["kind"], "created");
    let shown = cli.ok(&["items", "show", &parser]).await;
    assert_eq!(shown["blocks"][0]["id"].as_str(), Some(ship.as_str()), "{shown}");

    // A claim, and someone else's claim of the same item: exit 3 naming the holder.
    let claimed = cli.ok(&["items", "claim", &schema, "--claimant", "alice", "--lease", "10m"]).await;
    assert_eq!(two(&claimed["item"], "state", "claimant"), ("claimed", "alice"));
    assert_ne!(claimed["item"]["lease_expires_at"], "", "a lease was asked for: {claimed}");
    let refused = cli.fails(&["items", "claim", &schema, "--claimant", "bob", "--as", "person"], 3).await;
    assert!(refused.contains("held by \"alice\""), "{refused}");
    assert!(refused.contains("(conflict)"), "{refused}");
    let renewed = cli.ok(&["items", "heartbeat", &schema, "--claimant", "alice"]).await;
    assert_ne!(renewed["item"]["lease_expires_at"], "");
    assert_eq!(cli.ids(&list(&["--claimed-by", "alice"])).await, [schema.as_str()]);

    // next: the two ready items in order, then nothing (exit 0, item null).
    assert_eq!(cli.id(&["items", "next", "--space", &sp, "--claimant", "carol"]).await, review);
    let next = cli.ok(&["items", "next", "--space", &sp, "--claimant", "carol", "--lease", "1h"]).await;
    assert_eq!(two(&next["item"], "id", "claimant"), (parser.as_str(), "carol"));
    let none = cli.ok(&["items", "next", "--space", &sp, "--claimant", "carol"]).await;
    assert_eq!(none["item"], Value::Null, "{none}");
    assert!(none["reason"].as_str().unwrap().contains("nothing is ready"), "{none}");
    assert!(cli.ids(&["items", "next", "--space", &sp, "--claimant", "carol"]).await.is_empty());

    let change = ["--priority", "3", "--add-labels", "urgent,release", "--add-blocked-by", &review];
    let updated = cli.ok(&[&["items", "update", &ship][..], &change].concat()).await;
    assert_eq!(sorted(strings(&updated["changed"])), ["blocked_by", "labels", "priority"]);
    assert_eq!(updated["item"]["labels"], json!(["urgent", "release"]));
    let change = ["--remove-labels", "urgent", "--remove-blocked-by", &review, "--parent", &parser];
    let updated = cli.ok(&[&["items", "update", &ship][..], &change].concat()).await;
    assert_eq!(updated["item"]["labels"], json!(["release"]));
    assert_eq!(strings(&updated["item"]["blocked_by"]), [parser.as_str()]);
    assert_eq!(updated["item"]["parent_id"].as_str(), Some(parser.as_str()));
    let stderr = cli.fails(&["items", "update", &ship], 1).await;
    assert!(stderr.contains("give at least one of"), "{stderr}");

    let handed = cli.ok(&["items", "handoff", &review, "--note", "schema half reviewed", "--to", "dave"]).await;
    assert_eq!(two(&handed["item"], "state", "claimant"), ("open", ""));
    assert_eq!(two(&handed["item"]["handoff"], "to", "note"), ("dave", "schema half reviewed"));
    let stderr = cli.fails(&["items", "done", &review], 1).await;
    assert!(stderr.contains("claim it first"), "an unheld item is the holder's to finish: {stderr}");

    assert_eq!(cli.id(&["items", "done", &parser]).await, parser);
    let ready = cli.ids(&["items", "ready", "--space", &sp]).await;
    assert_eq!(ready, [review.clone(), ship.clone()], "the blocker is done: the item waiting for it is ready");
    let shown = cli.ok(&["items", "show", &parser]).await;
    let kinds: Vec<&str> = shown["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["created", "claimed", "state_changed"]);
    assert_eq!(shown["children"][0]["id"].as_str(), Some(ship.as_str()));
    assert_eq!(cli.ids(&list(&["--state", "done"])).await, [parser.as_str()]);

    let missing = cli.fails(&["items", "show", "wi_nope"], 4).await;
    assert!(missing.contains("wi_nope") && missing.contains("(not_found)"), "{missing}");
    cli.fails(&["items", "claim", "wi_nope", "--claimant", "carol"], 4).await;
    cli.fails(&["items", "create", "--space", "sp_nope", "--title", "x"], 4).await;
    let usage = cli.fails(&["items", "claim", &schema, "--claimant", "x", "--lease", "soon"], 2).await;
    assert!(usage.contains("not a span"), "{usage}");
    cli.fails(&["items", "list", "--state", "finished"], 2).await;
}

#[tokio::test]
async fn items_over_the_rest_api_with_a_token() {
    let mut env = Env::new();
    let account = env.account("acme", "acme/web").await;
    let builder = env.bearer(&account, "builder", "agent", ALL).await;
    let reviewer = env.bearer(&account, "reviewer", "agent", ALL).await;
    let client = env.client(Via::Http, &builder).await;
    let sp = space(&client, "Checkout").await;
    client.close().await;
    let base = env.served().await.base.clone();
    let cli = Cli { env: &env, token: Some(builder.clone()), url: Some(base.clone()) };
    let other = Cli { env: &env, token: Some(reviewer), url: Some(base.clone()) };

    let first = cli.id(&["items", "create", "--space", &sp, "--title", "Wire the API", "--labels", "api"]).await;
    let urgent = cli.id(&["items", "create", "--space", &sp, "--title", "Fix the outage", "--priority", "0"]).await;
    let later = ["items", "create", "--space", &sp, "--title", "Later", "--priority", "4", "--blocked-by", &first];
    let made = cli.ok(&later).await;
    let later = made["item"]["id"].as_str().unwrap().to_owned();
    assert_eq!(made["item"]["account_id"], account.as_str(), "{made}");

    let claimed = cli.ok(&["items", "claim", &first, "--claimant", "builder", "--lease", "10m"]).await;
    assert_eq!(two(&claimed["item"], "state", "claimant"), ("claimed", "builder"));
    let refused = other.fails(&["items", "claim", &first, "--claimant", "reviewer"], 3).await;
    assert!(refused.contains("held by \"builder\""), "{refused}");

    assert_eq!(cli.id(&["items", "next", "--space", &sp, "--claimant", "builder"]).await, urgent);
    let none = cli.ok(&["items", "next", "--space", &sp, "--claimant", "builder"]).await;
    assert_eq!(none["item"], Value::Null, "the last one waits for a blocker: {none}");
    assert!(none["reason"].as_str().is_some_and(|r| !r.is_empty()), "{none}");
    assert!(cli.ids(&["items", "next", "--space", &sp, "--claimant", "builder"]).await.is_empty());

    let updated =
        cli.ok(&["items", "update", &urgent, "--add-labels", "ops", "--priority", "1", "--state", "in_progress"]).await;
    assert_eq!(sorted(strings(&updated["changed"])), ["labels", "priority", "state"]);
    let handed = cli.ok(&["items", "handoff", &urgent, "--note", "over to you", "--to", "reviewer"]).await;
    assert_eq!(handed["item"]["handoff"]["to"], "reviewer");
    assert_eq!(other.id(&["items", "claim", &urgent, "--claimant", "reviewer"]).await, urgent);

    let done = cli.ok(&["items", "done", &first]).await;
    assert_eq!((done["item"]["state"].as_str(), strings(&done["changed"])), (Some("done"), vec!["state".to_owned()]));
    let shown = cli.ok(&["items", "show", &later]).await;
    assert_eq!(shown["blockers"][0]["state"], "done", "{shown}");
    assert_eq!(cli.ids(&["items", "list", "--space", &sp, "--state", "done"]).await, [first.as_str()]);
    let done_api = cli.ids(&["items", "list", "--space", &sp, "--labels", "api", "--state", "done"]).await;
    assert_eq!(done_api, [first.as_str()]);
    assert_eq!(cli.ids(&["items", "list", "--claimed-by", "reviewer"]).await, [urgent.as_str()]);

    // CAIRN_URL instead of --url.
    let envs = [("CAIRN_TOKEN", builder.as_str()), ("CAIRN_URL", base.as_str())];
    let ran = env.cli_run(&["items", "ready", "--space", &sp, "-q"], &envs).await;
    assert_eq!((ran.code, ran.stdout.as_str()), (0, format!("{later}\n").as_str()), "{ran:?}");

    let missing = cli.fails(&["items", "show", "wi_nope"], 4).await;
    assert!(missing.contains("wi_nope"), "{missing}");
    let no_token = Cli { env: &env, token: None, url: Some(base.clone()) };
    let stderr = no_token.fails(&["items", "list"], 1).await;
    assert!(stderr.contains("--url needs a bearer token in CAIRN_TOKEN"), "{stderr}");
    let bad_token = Cli { env: &env, token: Some("cairn_tok_nope_secret".into()), url: Some(base.clone()) };
    let stderr = bad_token.fails(&["items", "list"], 1).await;
    assert!(stderr.contains("the server refused CAIRN_TOKEN"), "{stderr}");
}

const ROADMAP: &str = "# Auth roadmap\n## Phase 1\n| Piece | State | PRs |\n|---|---|---|\n\
    | SSO login | ✅ Implemented | #742 |\n| Session refresh | Merged | #743, #744 |\n";

#[tokio::test]
async fn evidence_from_a_ci_script_shows_in_work_status() {
    let mut env = Env::new();
    let account = env.account("acme", "acme/web").await;
    let ci = env.bearer(&account, "ci", "service", ALL).await;
    let ada = env.bearer(&account, "Ada", "person", ALL).await;
    let ada = env.client(Via::Http, &ada).await;
    let sp = space(&ada, "Roadmaps").await;
    let doc = json!({"space_id": sp, "title": "Auth roadmap", "body": ROADMAP});
    let doc = ada.ok("decisions_create_document", doc).await;
    let doc = doc["document"]["id"].as_str().unwrap().to_owned();
    let base = env.served().await.base.clone();
    let remote = Cli { env: &env, token: Some(ci.clone()), url: Some(base) };
    let local = Cli { env: &env, token: Some(ci), url: None };

    let merged = ["evidence", "merged", "--repository", "acme/web", "--pr", "742", "--commit", "abc1234"];
    let first = remote.ok(&[&merged[..], &["--at", "2025-01-02T03:04:05Z"]].concat()).await;
    assert_eq!((first["created"].as_bool(), first["evidence"]["pull_requests"].clone()), (Some(true), json!([742])));
    assert!(first["evidence"]["at"].as_str().unwrap().starts_with("2025-01-02T03:04:05"), "{first}");
    let id = first["evidence"]["id"].as_str().unwrap().to_owned();
    assert_eq!(remote.id(&merged).await, id, "a repeat is the same record");
    let clash = ["evidence", "merged", "--repository", "acme/web", "--pr", "742", "--commit", "fff0000"];
    let stderr = remote.fails(&clash, 3).await;
    assert!(stderr.contains("already recorded merged at abc1234"), "{stderr}");
    // The same from a script on the server's own machine: the local database, as the token's holder.
    let local_merge = ["evidence", "merged", "--repository", "acme/web", "--pr", "743", "--commit", "def5678"];
    assert_eq!(local.ok(&local_merge).await["created"], true);
    let rolled = ["evidence", "rolled", "--service", "web", "--commit", "def5678", "--prs", "743"];
    let rolled = remote.ok(&rolled).await;
    assert_eq!(two(&rolled["evidence"], "kind", "service"), ("rolled", "web"));
    assert_eq!(rolled["evidence"]["repository"], "acme/web", "the account's default repository");
    let bad = ["evidence", "merged", "--repository", "acme", "--pr", "1", "--commit", "abc1234"];
    let stderr = remote.fails(&bad, 1).await;
    assert!(stderr.contains("not a repository"), "{stderr}");

    let status = ada.ok("work_status", json!({"space_id": sp, "document_id": doc})).await;
    let piece = |n: usize| (status["pieces"][n]["shows"].as_str(), status["pieces"][n]["finding"].as_str());
    assert_eq!(piece(0), (Some("merged"), Some("claims implemented; not rolled: #742")), "{status}");
    assert_eq!(status["pieces"][0]["pull_requests"][0]["merge_commit"], "abc1234");
    assert_eq!(piece(1), (Some("partial"), Some("claims merged; not merged: #744")), "{status}");
    assert_eq!(status["pieces"][1]["pull_requests"][0]["services"], json!(["web"]));
    ada.close().await;
}

#[test]
fn the_exit_codes_are_in_the_help() {
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_cairn")).args(["work", "items", "--help"]).output();
    let help = help.unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    for line in ["0  success", "3  conflict", "4  not found", "{\"item\": null, \"reason\": …}"] {
        assert!(help.contains(line), "{line:?} in:\n{help}");
    }
}
