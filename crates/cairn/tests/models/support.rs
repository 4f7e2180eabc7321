//! What the model-call tests share: `cairn serve` on a fresh home holding the given global workflows and
//! `roscoe.yaml`, with the Anthropic provider pointed at a stand-in (no key or URL leaks in from the machine), and
//! REST helpers that wait for a server-executed run to stop.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::process::Command;

use super::cairn_serve::Served;
use super::database::TestDatabase;

/// A running server and its home.
pub struct Env {
    /// The server.
    pub served: Served,
    /// How it was started, to start it again on the same home and database.
    command: (PathBuf, Vec<(String, String)>),
    _tmp: tempfile::TempDir,
    database: TestDatabase,
}

/// The environment variables a test's server must not inherit.
const PROVIDER_VARS: [&str; 5] =
    ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ROSCOE_PUBLIC_URL"];

/// Starts `cairn serve` with `workflows` (id, YAML) in the global source, `roscoe_yaml` as the home's `roscoe.yaml`,
/// and `env` set (e.g. `ANTHROPIC_BASE_URL` at a stand-in).
pub async fn start(workflows: &[(&str, &str)], roscoe_yaml: &str, env: &[(&str, &str)]) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    for (id, yaml) in workflows {
        std::fs::write(home.join("workflows").join(format!("{id}.yaml")), yaml).unwrap();
    }
    std::fs::write(home.join("roscoe.yaml"), roscoe_yaml).unwrap();
    let database = TestDatabase::fresh();
    let vars: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let served = Served::start(serve(&home, &vars, &database)).await;
    Env { served, command: (home, vars), _tmp: tmp, database }
}

/// `cairn serve` on `home` and `database` with `vars` set and no provider variable inherited.
fn serve(home: &Path, vars: &[(String, String)], database: &TestDatabase) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("serve").env("CAIRN_HOME", home).env("RUST_LOG", "info");
    for var in PROVIDER_VARS {
        command.env_remove(var);
    }
    for (key, value) in vars {
        command.env(key, value);
    }
    database.apply(&mut command);
    command
}

/// The environment that points the `anthropic` provider at `base` with a made-up key.
pub fn anthropic_env(base: &str) -> Vec<(&'static str, String)> {
    vec![("ANTHROPIC_BASE_URL", base.to_owned()), ("ANTHROPIC_API_KEY", "sk-test-not-a-real-key".to_owned())]
}

impl Env {
    /// Kills the server (SIGKILL: no chance to tidy up) and starts it again on the same home and database.
    pub async fn crash_and_restart(&mut self) {
        self.served.signal("KILL");
        self.served.exited().await;
        let (home, vars) = &self.command;
        self.served = Served::start(serve(home, vars, &self.database)).await;
    }

    /// `POST path` with `body`: status and JSON.
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = reqwest::Client::new().post(self.served.url(path)).json(&body).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    /// `GET path`: JSON.
    pub async fn get(&self, path: &str) -> Value {
        reqwest::Client::new().get(self.served.url(path)).send().await.unwrap().json().await.unwrap()
    }

    /// Starts global workflow `id` over REST with `extra` fields in the body; the start's answer.
    pub async fn start_run(&self, id: &str, extra: Value) -> Value {
        let mut body = json!({ "workflowId": id });
        for (key, value) in extra.as_object().into_iter().flatten() {
            body[key] = value.clone();
        }
        let (status, started) = self.post("/api/runs?project=global", body).await;
        assert_eq!(status, 201, "{started}");
        started
    }

    /// The history of run `run_id` once its status is no longer `running` (at most a minute).
    pub async fn stopped(&self, run_id: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let history = self.get(&format!("/api/runs/{run_id}?project=global")).await;
            if history["run"]["status"] != "running" && !self.child_running(&history).await {
                return history;
            }
            assert!(Instant::now() < deadline, "run {run_id} still running: {history}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Env {
    /// Whether the run of `history` waits on a child run (or a descendant of it) that is still moving: its root
    /// reads `paused` meanwhile. A child still running moves, and so does one that has ended while its parent still
    /// awaits it (the parent has yet to hear that it finished).
    async fn child_running(&self, history: &Value) -> bool {
        let mut child = history["run"]["awaitingChild"]["childRunId"].as_str().map(str::to_owned);
        let mut depth = 0;
        while let Some(id) = child.filter(|_| depth < 16) {
            depth += 1;
            let run = self.get(&format!("/api/runs/{id}?project=global")).await;
            if run["run"]["status"] != "paused" {
                return true;
            }
            child = run["run"]["awaitingChild"]["childRunId"].as_str().map(str::to_owned);
        }
        false
    }
}

/// The top-level node of `history` with id `node_id` (its last visit).
pub fn node<'h>(history: &'h Value, node_id: &str) -> &'h Value {
    history["nodes"].as_array().unwrap().iter().rev().find(|n| n["nodeId"] == node_id).unwrap_or_else(|| {
        panic!("no node {node_id} in {history}")
    })
}
