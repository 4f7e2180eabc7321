//! One scenario for every host set up only by `cairn setup`: in one conversation the model runs a two-step DeepWork
//! job to `workflow_complete`, a roscoe workflow of two handed-back steps to its end, and claims a work item over
//! `/mcp` of a running `cairn serve` with a bearer token. Afterwards cairn's own state says what happened: the
//! deepwork session's completed workflow, the roscoe run in the database, the item's claimant on the server.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tokio::process::Command;

use crate::cairn_serve::Served;
use crate::database::TestDatabase;
use crate::host_script::{Turn, parsed};
use crate::rest::post_json;

const JOB: &str = "name: notes
summary: Name a note, then sign it off
step_arguments:
  - name: title
    description: The note's title
    type: string
  - name: sign_off
    description: Who signed the note off
    type: string
workflows:
  write:
    summary: Name the note and sign it off
    steps:
      - name: name
        instructions: Give the note a title.
        outputs:
          title: {}
      - name: sign
        instructions: Sign the note off.
        inputs:
          title: {}
        outputs:
          sign_off: {}
";

const WORKFLOW: &str = "name: handback
description: Draft a line, then polish it
initial: draft
nodes:
  draft:
    type: ai_agent
    config: { prompt: Draft one line about cairn. }
    transitions: { success: polish }
  polish:
    type: ai_agent
    config: { prompt: Polish the line. }
    transitions: { success: $end }
";

/// The scenario's files, server and work item, for one host (`codex`, `gemini`: also the deepwork platform and
/// the claimant).
pub struct Scenario {
    _tmp: tempfile::TempDir,
    /// The host's `HOME`.
    pub home: PathBuf,
    /// The project the host runs in (a deepwork job, a roscoe workflow).
    pub project: PathBuf,
    /// Where the host's stdio servers keep cairn's state: the default `~/.cairn`, as for a user who sets nothing.
    pub cairn_home: PathBuf,
    /// The running `cairn serve` whose `/mcp` serves the work tools.
    pub served: Served,
    /// A bearer token with `mcp:write`.
    pub token: String,
    item_id: String,
    host: &'static str,
    _database: TestDatabase,
}

impl Scenario {
    /// Files, a server, a token, a space and an item for `host`.
    pub async fn new(host: &'static str) -> Scenario {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, project, server_home) = (root.join("home"), root.join("project"), root.join("server"));
        std::fs::create_dir_all(project.join(".deepwork/jobs/notes")).unwrap();
        std::fs::create_dir_all(project.join(".roscoe/workflows")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(project.join(".deepwork/jobs/notes/job.yml"), JOB).unwrap();
        std::fs::write(project.join(".roscoe/workflows/handback.yaml"), WORKFLOW).unwrap();

        let database = TestDatabase::fresh();
        let mut serve = Command::new(env!("CARGO_BIN_EXE_cairn"));
        serve.arg("serve").env("CAIRN_HOME", &server_home);
        database.apply(&mut serve);
        let served = Served::start(serve).await;
        let mut create = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        create.args(["work", "token", "create", "--principal", host, "--kind", "agent", "--scopes", "mcp:write,decisions:write"]);
        create.env("CAIRN_HOME", &server_home);
        database.apply_std(&mut create);
        let made = create.output().unwrap();
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let token = serde_json::from_slice::<Value>(&made.stdout).unwrap()["token"].as_str().unwrap().to_owned();
        let client = reqwest::Client::new();
        let space: Value = post_json(&client, served.url("/api/spaces"), &token, &json!({"name": "hosts"})).await;
        let item = json!({"space_id": space["space"]["id"], "title": format!("Wire cairn into {host}")});
        let item: Value = post_json(&client, served.url("/api/work/items"), &token, &item).await;
        let item_id = item["id"].as_str().unwrap().to_owned();
        let cairn_home = home.join(".cairn");
        Scenario { _tmp: tmp, home, project, cairn_home, served, token, item_id, host, _database: database }
    }

    /// `cairn setup <host> --url <the server>` and `args` in the project, with the host's environment, as a user
    /// runs it; its output.
    pub fn setup(&self, args: &[&str], env: &[(&str, &Path)]) -> String {
        let mut setup = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        setup.current_dir(&self.project).args(["setup", self.host, "--url", &self.served.base]).args(args);
        setup.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default()).env("HOME", &self.home);
        for (name, value) in env {
            setup.env(name, value);
        }
        let out = setup.output().unwrap();
        let printed = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "cairn setup {} failed:\n{printed}\n{}", self.host, String::from_utf8_lossy(&out.stderr));
        printed
    }

    /// The model's part: deepwork's job, roscoe's run, the claim, then a closing text holding the last answer.
    pub fn script(&self) -> impl Fn(&[String]) -> Turn + Send + Sync + 'static {
        let (cwd, item_id, host) = (self.project.display().to_string(), self.item_id.clone(), self.host);
        move |results: &[String]| {
            let session = || parsed(&results[0])["begin_step"]["session_id"].clone();
            let run_id = || parsed(&results[3])["runId"].clone();
            match results.len() {
                0 => Turn::Call {
                    server: "deepwork",
                    tool: "start_workflow",
                    args: json!({"goal": "Write a note", "job_name": "notes", "workflow_name": "write"}),
                },
                1 => Turn::Call {
                    server: "deepwork",
                    tool: "finished_step",
                    args: json!({"outputs": {"title": "cairn everywhere"}, "session_id": session()}),
                },
                2 => Turn::Call {
                    server: "deepwork",
                    tool: "finished_step",
                    args: json!({"outputs": {"sign_off": host}, "session_id": session()}),
                },
                3 => Turn::Call { server: "roscoe", tool: "start_workflow", args: json!({"cwd": cwd, "id": "handback"}) },
                4 => Turn::Call {
                    server: "roscoe",
                    tool: "advance_run",
                    args: json!({"cwd": cwd, "run_id": run_id(), "node_id": "draft", "response": "cairn runs here"}),
                },
                5 => Turn::Call {
                    server: "roscoe",
                    tool: "advance_run",
                    args: json!({"cwd": cwd, "run_id": run_id(), "node_id": "polish", "response": "cairn runs here."}),
                },
                6 => Turn::Call { server: "work", tool: "work_claim", args: json!({"item_id": item_id, "claimant": host}) },
                _ => Turn::Text(format!("All done. The last tool answered: {}", results.last().unwrap())),
            }
        }
    }

    /// cairn's state after the host ran the script (`transcript`: what the host printed, for failures).
    pub async fn check(&self, transcript: &str) {
        // deepwork: one session of this platform, its workflow completed with both outputs.
        let sessions = self.project.join(".deepwork/tmp/sessions").join(self.host);
        let dirs: Vec<_> = std::fs::read_dir(&sessions)
            .unwrap_or_else(|e| panic!("no deepwork session in {} ({e}):\n{transcript}", sessions.display()))
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}\n{transcript}");
        let state: Value = serde_json::from_str(&std::fs::read_to_string(dirs[0].join("state.json")).unwrap()).unwrap();
        assert_eq!(state["workflow_stack"], json!([]), "{state}\n{transcript}");
        let done = &state["completed_workflows"][0];
        assert_eq!((done["job_name"].as_str(), done["status"].as_str()), (Some("notes"), Some("completed")), "{state}");
        assert_eq!(done["step_progress"]["sign"]["outputs"]["sign_off"], self.host, "{state}");

        // roscoe: the run, in the database under the host's CAIRN_HOME, completed after both steps.
        let listed = std::process::Command::new(Path::new(env!("CARGO_BIN_EXE_cairn")).with_file_name("roscoe"))
            .args(["runs", "list", "--json", "--cwd"])
            .arg(&self.project)
            .env("CAIRN_HOME", &self.cairn_home)
            .env_remove("CAIRN_DATABASE_URL")
            .output()
            .unwrap();
        assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
        let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
        let runs = listed.as_array().unwrap_or_else(|| panic!("{listed}\n{transcript}"));
        assert_eq!(runs.len(), 1, "{listed}\n{transcript}");
        assert_eq!((runs[0]["workflowId"].as_str(), runs[0]["status"].as_str()), (Some("handback"), Some("completed")), "{listed}");

        // work: the item is held by the host's claimant.
        let client = reqwest::Client::new();
        let items: Value = client.get(self.served.url("/api/work/items")).bearer_auth(&self.token).send().await.unwrap().json().await.unwrap();
        let item = items["items"].as_array().unwrap().iter().find(|i| i["id"] == self.item_id.as_str()).unwrap().clone();
        assert_eq!((item["state"].as_str(), item["claimant"].as_str()), (Some("claimed"), Some(self.host)), "{item}\n{transcript}");
    }
}
