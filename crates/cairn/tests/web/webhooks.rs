//! Inbound webhooks over the real `cairn serve`: `POST /hooks/roscoe/<project>/<workflow>` signed with cairn's
//! timestamped scheme or GitHub's, refused with 401 / 404 / 400 / 413 as docs/roscoe/guides/webhooks.md says, one run
//! per delivery, the body mapped to the input, the secret from the environment or the global roscoe.yaml, and the
//! guide's openssl signing command.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cairn_roscoe::signature;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;
use crate::support::http;

/// A person approves a release of the branch the webhook names.
const RELEASE: &str = "name: release\ninputs:\n  ref: { type: string, required: true }\ntriggers:\n  - webhook:\n      \
    secret_env: ROSCOE_HOOK_RELEASE\ninitial: ask\nnodes:\n  ask:\n    type: human\n    \
    config: { prompt: \"Release {{ input.ref }}?\", labels: { ship: Ship it } }\n    \
    transitions: { ship: $end, stop: $fail }\n";

/// The same, with GitHub's pull-request payload mapped to typed inputs; its secret is in the global roscoe.yaml.
const REVIEW: &str = "name: review\ninputs:\n  branch: { type: string, required: true }\n  \
    number: { type: integer, required: true }\n\
    triggers:\n  - webhook:\n      secret_env: ROSCOE_HOOK_REVIEW\n      \
    input: { branch: \"{{ body.pull_request.head.ref }}\", number: \"{{ body.pull_request.number }}\" }\n\
    initial: ask\nnodes:\n  ask:\n    type: human\n    \
    config: { prompt: \"Review #{{ input.number }} on {{ input.branch }}?\", labels: { ok: Approve } }\n    \
    transitions: { ok: $end, stop: $fail }\n";

/// A script that prints the branch the webhook names: the value is one quoted shell word, whatever it holds.
const ECHO: &str = "name: echo\ninputs:\n  ref: { type: string, required: true }\ntriggers:\n  - webhook:\n      \
    secret_env: ROSCOE_HOOK_RELEASE\ninitial: say\nnodes:\n  say:\n    type: script\n    \
    config: { command: \"printf %s {{ input.ref }}\" }\n    transitions: { success: $end }\n";

/// No trigger at all.
const PLAIN: &str = "name: plain\ninitial: ask\nnodes:\n  ask:\n    type: human\n    \
    config: { prompt: Go?, labels: { go: Go } }\n    transitions: { go: $end, stop: $fail }\n";

const RELEASE_SECRET: &str = "release-secret-7f3a";
const REVIEW_SECRET: &str = "review-secret-from-the-file";

/// A server (with `--require-auth`: webhooks need no token) on a home holding the three workflows as global ones
/// and, served as a project, a git repository holding `release` as a repo workflow.
struct Hooked {
    served: Served,
    project: PathBuf,
    /// A token that may read runs.
    token: String,
    /// A token that may save workflows with scripts (`roscoe:exec`).
    exec: String,
    _tmp: tempfile::TempDir,
    _database: TestDatabase,
}

impl Hooked {
    async fn start() -> Hooked {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join("workflows")).unwrap();
        for (id, text) in [("release", RELEASE), ("review", REVIEW), ("plain", PLAIN), ("echo", ECHO)] {
            std::fs::write(home.join("workflows").join(format!("{id}.yaml")), text).unwrap();
        }
        let secrets = format!("webhooks:\n  ROSCOE_HOOK_REVIEW: {REVIEW_SECRET}\n");
        std::fs::write(home.join("roscoe.yaml"), secrets).unwrap();
        let project = tmp.path().join("app");
        std::fs::create_dir_all(project.join(".roscoe/workflows")).unwrap();
        std::fs::write(project.join(".roscoe/workflows/release.yaml"), RELEASE).unwrap();
        std::fs::write(project.join(".roscoe/workflows/echo.yaml"), ECHO).unwrap();
        // A project's roscoe.yaml never supplies secrets.
        let chosen = "webhooks:\n  ROSCOE_HOOK_RELEASE: chosen-by-the-project\n";
        std::fs::write(project.join("roscoe.yaml"), chosen).unwrap();
        assert!(std::process::Command::new("git").arg("init").arg("-q").arg(&project).status().unwrap().success());
        let project = project.canonicalize().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
        command
            .args(["serve", "--require-auth", "--project", project.to_str().unwrap()])
            .env("CAIRN_HOME", &home)
            .env("RUST_LOG", "info")
            .env("ROSCOE_HOOK_RELEASE", RELEASE_SECRET)
            .env_remove("ROSCOE_HOOK_REVIEW")
            .env_remove("ROSCOE_PUBLIC_URL");
        let database = TestDatabase::fresh();
        database.apply(&mut command);
        let served = Served::start(command).await;
        let mut mint = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        mint.args(["work", "token", "create", "--principal", "ops", "--kind", "person", "--scopes", "roscoe:read"]);
        let out = database.apply_std(mint.env("CAIRN_HOME", &home)).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let token = serde_json::from_slice::<Value>(&out.stdout).unwrap()["token"].as_str().unwrap().to_owned();
        let mut mint = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        let scopes = "roscoe:exec,roscoe:write";
        mint.args(["work", "token", "create", "--principal", "maintainer", "--kind", "person", "--scopes", scopes]);
        let out = database.apply_std(mint.env("CAIRN_HOME", &home)).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let exec = serde_json::from_slice::<Value>(&out.stdout).unwrap()["token"].as_str().unwrap().to_owned();
        Hooked { served, project, token, exec, _tmp: tmp, _database: database }
    }

    /// Posts `body` to the hook of `workflow` in `project` with `headers`: the status and the JSON answer.
    async fn post(&self, project: &str, workflow: &str, headers: &[(&str, String)], body: &[u8]) -> (u16, Value) {
        let mut request = http().post(self.served.url(&format!("/hooks/roscoe/{project}/{workflow}")));
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = request.header("content-type", "application/json").body(body.to_vec()).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}")))
    }

    /// The runs of `workflow` in `project` (all when ""), through the REST API.
    async fn runs(&self, project: &str, workflow: &str) -> Vec<Value> {
        let answer = self.get(&format!("/api/runs?project={project}&workflowId={workflow}")).await;
        answer.as_array().unwrap_or_else(|| panic!("a list of runs: {answer}")).clone()
    }

    /// `GET path` of the REST API with a token that may read runs.
    async fn get(&self, path: &str) -> Value {
        http().get(self.served.url(path)).bearer_auth(&self.token).send().await.unwrap().json().await.unwrap()
    }

    /// The run `run_id` in `project` once it has completed (within a generous deadline): its history.
    async fn completed(&self, project: &str, run_id: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let history = self.get(&format!("/api/runs/{run_id}?project={project}")).await;
            if history["run"]["status"] == "completed" {
                return history;
            }
            assert!(Instant::now() < deadline, "run {run_id} did not complete: {history}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The run `run_id`'s status and pending prompt once it has paused (within a generous deadline).
    async fn paused(&self, project: &str, run_id: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let runs = self.runs(project, "").await;
            let run = runs.iter().find(|r| r["id"] == run_id).cloned();
            if let Some(run) = run.filter(|r| r["status"] == "paused") {
                return run;
            }
            assert!(Instant::now() < deadline, "run {run_id} did not pause: {runs:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

/// cairn's headers for `body` signed with `secret` at `timestamp`, with delivery id `delivery` when given.
fn signed(secret: &str, timestamp: i64, body: &[u8], delivery: Option<&str>) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("x-roscoe-timestamp", timestamp.to_string()),
        ("x-roscoe-signature-256", signature::sign(secret.as_bytes(), timestamp, body)),
    ];
    headers.extend(delivery.map(|d| ("x-roscoe-delivery", d.to_owned())));
    headers
}

/// GitHub's headers for `body` signed with `secret`, delivery `delivery`.
fn github(secret: &str, body: &[u8], delivery: &str) -> Vec<(&'static str, String)> {
    vec![
        ("x-github-event", "pull_request".to_owned()),
        ("x-github-delivery", delivery.to_owned()),
        ("x-hub-signature-256", signature::sign_body(secret.as_bytes(), body)),
    ]
}

#[tokio::test]
async fn a_signed_delivery_starts_one_run_and_a_redelivery_starts_none() {
    let hooks = Hooked::start().await;
    let body = br#"{"ref":"v1.2.0"}"#;
    let first = signed(RELEASE_SECRET, now(), body, Some("d-1"));
    let (status, started) = hooks.post("global", "release", &first, body).await;
    assert_eq!(status, 202, "{started}");
    let run_id = started["runId"].as_str().unwrap().to_owned();
    assert!(started["url"].as_str().unwrap().ends_with(&format!("/open/runs/{run_id}?project=global")), "{started}");
    let run = hooks.paused("global", &run_id).await;
    assert_eq!(run["workflowId"], "release");
    assert_eq!(run["startedBy"], "webhook:release", "{run}");

    // The same delivery again, signed anew a second later: the first run, nothing started.
    let again = signed(RELEASE_SECRET, now() + 1, body, Some("d-1"));
    let (status, repeated) = hooks.post("global", "release", &again, body).await;
    assert_eq!((status, &repeated["runId"], &repeated["repeated"]), (200, &json!(run_id), &json!(true)), "{repeated}");

    // Without a delivery id, the signature is the delivery: the same request twice starts one run.
    let headers = signed(RELEASE_SECRET, now(), body, None);
    let (first, one) = hooks.post("global", "release", &headers, body).await;
    let (second, two) = hooks.post("global", "release", &headers, body).await;
    assert_eq!((first, second), (202, 200), "{one} {two}");
    assert_eq!(one["runId"], two["runId"]);
    assert_eq!(hooks.runs("global", "release").await.len(), 2, "two deliveries, two runs");

    // A served project's repo workflow, by its projectId; its own roscoe.yaml's secret is not taken.
    let project = cairn_roscoe::scope::project_id(&hooks.project);
    let (status, started) = hooks.post(&project, "release", &signed(RELEASE_SECRET, now(), body, None), body).await;
    assert_eq!(status, 202, "{started}");
    hooks.paused(&project, started["runId"].as_str().unwrap()).await;
    let chosen = signed("chosen-by-the-project", now(), body, None);
    assert_eq!(hooks.post(&project, "release", &chosen, body).await.0, 401);
}

#[tokio::test]
async fn bad_stale_and_unsigned_requests_are_refused_and_start_nothing() {
    let hooks = Hooked::start().await;
    let body = br#"{"ref":"main"}"#;
    let expect = |answer: (u16, Value), status: u16, says: &str| {
        assert_eq!(answer.0, status, "{}", answer.1);
        let error = answer.1["error"].as_str().unwrap().to_owned();
        assert!(error.contains(says), "{error}");
        assert!(!error.contains(RELEASE_SECRET), "{error}");
    };
    let wrong = signed("not-the-secret", now(), body, None);
    expect(hooks.post("global", "release", &wrong, body).await, 401, "X-Roscoe-Signature-256 does not match");
    let stale = signed(RELEASE_SECRET, now() - 400, body, None);
    expect(hooks.post("global", "release", &stale, body).await, 401, "more than 5 minutes");
    expect(hooks.post("global", "release", &[], body).await, 401, "not signed");
    let tampered = signed(RELEASE_SECRET, now(), br#"{"ref":"evil"}"#, None);
    expect(hooks.post("global", "release", &tampered, body).await, 401, "does not match");
    let mut no_id = github(RELEASE_SECRET, body, "x");
    no_id.retain(|(name, _)| *name != "x-github-delivery");
    expect(hooks.post("global", "release", &no_id, body).await, 401, "X-GitHub-Delivery");
    let (status, answer) = hooks.post("global", "release", &wrong, body).await;
    assert_eq!((status, answer["code"].as_str()), (401, Some("bad_signature")));

    // No webhook: a workflow without the trigger, one that does not exist, a project not served.
    let plain = signed(RELEASE_SECRET, now(), body, None);
    expect(hooks.post("global", "plain", &plain, body).await, 404, "must declare a `webhook` trigger");
    expect(hooks.post("global", "nope", &plain, body).await, 404, "no webhook at /hooks/roscoe/global/nope");
    expect(hooks.post("0123456789abcdef", "release", &plain, body).await, 404, "no webhook");

    // Signed bodies that are not JSON, or not the workflow's input.
    let text = b"ref=main";
    expect(hooks.post("global", "release", &signed(RELEASE_SECRET, now(), text, None), text).await, 400, "not JSON");
    let other = br#"{"tag":"v1"}"#;
    let answer = hooks.post("global", "release", &signed(RELEASE_SECRET, now(), other, None), other).await;
    expect(answer, 400, "input 'ref' is required");

    // Over 1 MiB: 413 before anything is read or checked.
    let big = format!("{{\"ref\":\"{}\"}}", "x".repeat(1024 * 1024));
    let headers = signed(RELEASE_SECRET, now(), big.as_bytes(), None);
    let answer = hooks.post("global", "release", &headers, big.as_bytes()).await;
    expect(answer, 413, "larger than 1 MiB");

    assert!(hooks.runs("global", "release").await.is_empty(), "no refused request started a run");
}

#[tokio::test]
async fn github_deliveries_map_the_payload_with_the_secret_of_the_global_file() {
    let hooks = Hooked::start().await;
    let payload = json!({"action": "opened", "pull_request": {"number": 42, "head": {"ref": "feature/x"}}});
    let body = serde_json::to_vec(&payload).unwrap();
    let delivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958";
    let (status, started) = hooks.post("global", "review", &github(REVIEW_SECRET, &body, delivery), &body).await;
    assert_eq!(status, 202, "{started}");
    let run_id = started["runId"].as_str().unwrap();
    hooks.paused("global", run_id).await;
    let history = hooks.get(&format!("/api/runs/{run_id}?project=global")).await;
    let input = &history["run"]["context"]["input"];
    assert_eq!(input, &json!({"branch": "feature/x", "number": 42}), "typed, mapped input: {history}");
    assert_eq!(history["nodes"][0]["input"]["prompt"], "Review #42 on feature/x?");
    assert_eq!(history["actions"][0]["principal"], "webhook:review");
    let (status, repeated) = hooks.post("global", "review", &github(REVIEW_SECRET, &body, delivery), &body).await;
    assert_eq!((status, &repeated["runId"]), (200, &started["runId"]), "{repeated}");
    let other = hooks.post("global", "review", &github(REVIEW_SECRET, &body, "another-delivery"), &body).await;
    assert_eq!(other.0, 202, "{}", other.1);
    assert_eq!(hooks.runs("global", "review").await.len(), 2);
}

#[tokio::test]
async fn a_value_from_the_body_reaches_a_script_as_one_quoted_word() {
    let hooks = Hooked::start().await;
    let marker = hooks._tmp.path().join("pwned");
    let m = marker.display();
    let hostile = format!("$(touch {m}); `touch {m}` ' \" ; touch {m}");
    let body = serde_json::to_vec(&json!({ "ref": hostile })).unwrap();
    let (status, started) = hooks.post("global", "echo", &signed(RELEASE_SECRET, now(), &body, None), &body).await;
    assert_eq!(status, 202, "{started}");
    let history = hooks.completed("global", started["runId"].as_str().unwrap()).await;
    assert_eq!(history["nodes"][0]["output"]["stdout"], json!(hostile), "printed as it was sent: {history}");
    assert!(!marker.exists(), "nothing of the body ran as shell");
}

#[tokio::test]
async fn a_repo_workflows_scripts_run_only_on_the_text_an_exec_holder_approved() {
    let hooks = Hooked::start().await;
    let project = cairn_roscoe::scope::project_id(&hooks.project);
    let body = br#"{"ref":"main"}"#;
    // The file came with the project (a pull, a shared folder): nobody holding roscoe:exec approved it.
    let first = signed(RELEASE_SECRET, now(), body, Some("d-repo"));
    let (status, refused) = hooks.post(&project, "echo", &first, body).await;
    assert_eq!((status, refused["code"].as_str()), (403, Some("insufficient_scope")), "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("approve"), "{refused}");
    assert!(hooks.runs(&project, "echo").await.is_empty(), "nothing started");
    // Saved through the REST API by an exec holder: approved, and the same delivery (given back) now starts the run.
    let saved = http()
        .put(hooks.served.url(&format!("/api/workflows/echo?project={project}")))
        .bearer_auth(&hooks.exec)
        .json(&json!({ "yaml": ECHO }))
        .send()
        .await
        .unwrap();
    assert!(saved.status().is_success(), "{}", saved.text().await.unwrap());
    let again = signed(RELEASE_SECRET, now(), body, Some("d-repo"));
    let (status, started) = hooks.post(&project, "echo", &again, body).await;
    assert_eq!(status, 202, "{started}");
    let history = hooks.completed(&project, started["runId"].as_str().unwrap()).await;
    assert_eq!(history["nodes"][0]["output"]["stdout"], "main", "{history}");
}

/// The signing command docs/roscoe/guides/webhooks.md gives, run by bash with openssl (when the machine has it).
#[tokio::test]
async fn the_guides_openssl_command_signs_a_request_the_server_takes() {
    if std::process::Command::new("openssl").arg("version").output().is_err() {
        eprintln!("openssl is not installed here: the guide's command was not run");
        return;
    }
    let hooks = Hooked::start().await;
    let body = r#"{"ref":"v2.0.0"}"#;
    let script = guide_signing_command();
    let out = std::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .env("SECRET", RELEASE_SECRET)
        .env("BODY", body)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8(out.stdout).unwrap();
    let (timestamp, signature) = printed.trim().split_once(' ').unwrap();
    let headers = [("x-roscoe-timestamp", timestamp.to_owned()), ("x-roscoe-signature-256", signature.to_owned())];
    let (status, started) = hooks.post("global", "release", &headers, body.as_bytes()).await;
    assert_eq!(status, 202, "{started}");
}

/// The guide's two signing lines, followed by a line printing what they made.
fn guide_signing_command() -> String {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/roscoe/guides/webhooks.md");
    let text = std::fs::read_to_string(guide).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("ts=") || l.starts_with("sig=")).take(2).collect();
    assert_eq!(lines.len(), 2, "the guide signs with a `ts=` and a `sig=` line");
    format!("{}\necho \"$ts $sig\"\n", lines.join("\n"))
}
