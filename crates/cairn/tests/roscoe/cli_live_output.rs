//! A script's output while it runs (issue 31, script output in plain sight): `roscoe run --verbose` prints a
//! script's lines as they come, before the script ends; `roscoe runs watch --verbose` in another process reads them
//! through the database; the run page of a `cairn serve` on the same home (and its log fragment) shows what the
//! script printed so far while it runs, and the whole log once it ended.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use crate::runs_support::write_workflow;
use crate::support::Env;

/// A script that prints a line on each stream, then waits until the test opens its gate (a file in the project;
/// at most a minute), then prints a second line.
const LIVE: &str = "name: live\ninitial: talk\nnodes:\n  talk:\n    type: script\n    config:\n      command: |\n        echo first\n        echo warned >&2\n        i=0\n        while [ ! -e \"$ROSCOE_PROJECT_ROOT/gate\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n        echo second\n    transitions: { success: $end, failure: $fail }\n";

/// A command whose stderr is read as it comes.
struct Followed {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Followed {
    fn start(env: &Env, dir: &std::path::Path, args: &[&str]) -> Followed {
        let mut command = env.cli(env!("CARGO_BIN_EXE_roscoe"), args);
        command.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        command.env_remove("NO_COLOR").kill_on_drop(true);
        let mut child = command.spawn().expect("start roscoe");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (pipe, shown) = (child.stderr.take().unwrap(), stderr.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut shown = shown.lock().unwrap();
                shown.push_str(&line);
                shown.push('\n');
            }
        });
        Followed { child, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits (up to a minute) until its stderr shows `text`.
    async fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.stderr().contains(text) {
            assert!(Instant::now() < deadline, "stderr never showed {text:?}; it shows:\n{}", self.stderr());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Its exit code and stdout, once it ended (within two minutes).
    async fn finish(mut self) -> (i32, String) {
        let mut stdout = String::new();
        let mut pipe = self.child.stdout.take().unwrap();
        let ended = async {
            tokio::io::AsyncReadExt::read_to_string(&mut pipe, &mut stdout).await.unwrap();
            self.child.wait().await.unwrap()
        };
        let status = tokio::time::timeout(Duration::from_secs(120), ended).await.expect("roscoe ended");
        (status.code().expect("an exit code"), stdout)
    }
}

/// GETs `url` until its body contains every one of `texts` (up to a minute); the body.
async fn page_with(url: &str, texts: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let body = reqwest::get(url).await.unwrap().text().await.unwrap();
        if texts.iter().all(|t| body.contains(t)) {
            return body;
        }
        assert!(Instant::now() < deadline, "{url} never showed {texts:?}; it shows:\n{body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_scripts_lines_show_while_it_runs_at_the_terminal_and_on_the_run_page() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "live", LIVE);
    let served = env.serve(&[], &[]).await;

    let run = Followed::start(&env, &repo, &["run", "live", "--verbose"]);
    run.wait_for("[talk] first\n").await;
    run.wait_for("[talk:stderr] warned\n").await;
    assert!(!run.stderr().contains("second"), "the script has not printed its second line yet: {}", run.stderr());
    assert!(!repo.join("gate").exists(), "the script is still waiting at its gate");

    let listed = env.roscoe(&repo, &["runs", "list", "--json"]).await.json();
    let run_id = listed[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(listed[0]["status"], "running", "{listed}");
    let shown = env.roscoe(&repo, &["runs", "show", &run_id, "--json"]).await.json();
    let project = shown["url"].as_str().unwrap().split("project=").nth(1).unwrap().to_owned();

    // Another process follows the same script through the database.
    let watch = Followed::start(&env, &repo, &["runs", "watch", &run_id, "--verbose"]);
    watch.wait_for("[talk] first\n").await;

    // The page of a server that does not run the script shows what it printed so far, and polls its log.
    let page_url = served.url(&format!("/runs/{run_id}?project={project}"));
    let so_far = "<pre tabindex=\"0\" class=\"stdout\" aria-label=\"standard output\">first\n</pre>";
    let page = page_with(&page_url, &[so_far, "warned", "log · live while it runs"]).await;
    let marker = format!("hx-get=\"/runs/{run_id}/log/");
    let (_, after) = page.split_once(&marker).unwrap_or_else(|| panic!("the running log polls its fragment: {page}"));
    let poll = format!("/runs/{run_id}/log/{}", after.split('"').next().unwrap().replace("&amp;", "&"));
    let fragment = page_with(&served.url(&poll), &["first"]).await;
    assert!(fragment.contains("hx-trigger=\"every 1s\""), "still polling while it runs: {fragment}");
    let stderr_block = "<pre tabindex=\"0\" class=\"stderr\" aria-label=\"standard error\">warned";
    assert!(fragment.contains(stderr_block), "{fragment}");

    std::fs::write(repo.join("gate"), "").unwrap();
    let stderr = run.stderr.clone();
    let (code, stdout) = run.finish().await;
    let stderr = stderr.lock().unwrap().clone();
    assert_eq!(code, 0, "{stderr}");
    let first = stderr.find("[talk] first").unwrap();
    let second = stderr.find("[talk] second").unwrap_or_else(|| panic!("the second line: {stderr}"));
    let done = stderr.find("✓ talk").unwrap_or_else(|| panic!("the node's line: {stderr}"));
    assert!(first < second && second < done, "the lines in order, then the node's progress line: {stderr}");
    assert_eq!(stderr.matches("[talk] first").count(), 1, "each line once: {stderr}");
    assert!(!stdout.contains("[talk]"), "the lines go to stderr, stdout keeps the run's output: {stdout}");

    let watch_stderr = watch.stderr.clone();
    let (watched, _) = watch.finish().await;
    let watch_stderr = watch_stderr.lock().unwrap().clone();
    assert_eq!(watched, 0, "{watch_stderr}");
    assert!(watch_stderr.contains("[talk] second\n"), "the rest once the node ended: {watch_stderr}");
    assert_eq!(watch_stderr.matches("[talk] first").count(), 1, "each line once: {watch_stderr}");

    let page = page_with(&page_url, &["first", "second", "exit 0"]).await;
    assert!(!page.contains("log · live while it runs"), "the stored log once it ended: {page}");
    let fragment = page_with(&served.url(&poll), &["first\nsecond"]).await;
    assert!(!fragment.contains("hx-trigger"), "no more polling: {fragment}");
    let unknown = reqwest::get(served.url(&format!("/runs/{run_id}/log/nosuch?project={project}"))).await.unwrap();
    assert_eq!(unknown.status(), 404, "a node run the run does not have");
    let elsewhere = reqwest::get(served.url(&poll.replace(&project, "global"))).await.unwrap();
    assert_eq!(elsewhere.status(), 404, "the run is not in another workspace");
}

#[tokio::test]
async fn verbose_does_not_go_with_quiet_or_detach() {
    let env = Env::new();
    let repo = env.repo("project");
    write_workflow(&repo, "live", LIVE);
    for extra in ["--quiet", "--detach"] {
        let refused = env.roscoe(&repo, &["run", "live", "--verbose", extra]).await;
        assert_eq!(refused.code, 2, "{refused:?}");
        assert!(refused.stderr.contains("cannot be used with"), "{}", refused.stderr);
    }
}
