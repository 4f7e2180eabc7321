//! The command line: the `deepwork` entry name, option errors, `jobs get-stack`, `review` and `hook`, run as the real
//! `deepwork` binary against temporary git repositories isolated from the machine's git configuration.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn deepwork_entry_name_takes_deepworks_options() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_deepwork")).args(["serve", "--help"]).output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for option in ["--path", "--transport", "--port", "--platform"] {
        assert!(help.contains(option), "{option} missing from\n{help}");
    }
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_deepwork"))
        .args(["serve", "--path", "/definitely/not/here", "--no-quality-gate", "--external-runner", "claude"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("Directory '/definitely/not/here' does not exist"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn get_stack_lists_active_workflows() {
    let project = Project::new();
    let client = project.connect(Transport::Stdio).await;
    client.ok("start_workflow", start("research", "full", "s1")).await;
    client.ok("start_workflow", start("single", "only", "s2")).await;
    client.ok("abort_workflow", json!({"explanation": "x", "session_id": "s2"})).await;
    client.close().await;
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_deepwork"))
        .args(["jobs", "get-stack", "--path"])
        .arg(project.dir.path())
        .env("CAIRN_HOME", project.home.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let stack: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sessions = stack["active_sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["session_id"], "s1");
    assert_eq!(sessions[0]["current_step_id"], "gather");
    assert_eq!(sessions[0]["step_number"], 1);
    assert_eq!(sessions[0]["total_steps"], 3);
    assert_eq!(sessions[0]["current_step_instructions"], "Collect notes about the topic.");
}

/// `deepwork hook startup_context` in `project` on `event` (with `cairn_home` as `CAIRN_HOME`): its JSON answer,
/// after checking it exited 0.
fn startup_context(project: &Project, cairn_home: &std::path::Path, event: &Value) -> Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_deepwork"));
    cmd.args(["hook", "startup_context"]).current_dir(project.dir.path()).env("CAIRN_HOME", cairn_home);
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(event.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn startup_context_hook_gives_the_ids_and_after_compaction_the_sessions_workflows() {
    let project = Project::new();
    let client = project.connect(Transport::Stdio).await;
    client.ok("start_workflow", start("research", "full", "s1")).await;
    client.ok("start_workflow", start("single", "only", "s2")).await;
    client.close().await;
    let cwd = project.root();
    let home = project.home.path();

    let started = startup_context(&project, home, &json!({"hook_event_name": "SessionStart", "session_id": "s1",
        "source": "startup", "cwd": cwd}));
    assert_eq!(started["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let text = started["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(text.starts_with("CLAUDE_CODE_SESSION_ID=s1\n"), "{text}");
    assert!(!text.contains("research"), "no workflows unless the context was compacted: {text}");

    let sub = startup_context(&project, home, &json!({"hook_event_name": "SubagentStart", "session_id": "s1",
        "agent_id": "agent-9", "agent_type": "cairn:reviewer", "cwd": cwd}));
    assert_eq!(sub["hookSpecificOutput"]["hookEventName"], "SubagentStart");
    let text = sub["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(text.starts_with("CLAUDE_CODE_SESSION_ID=s1\nCLAUDE_CODE_AGENT_ID=agent-9\n"), "{text}");

    // After a compaction: session s1's workflow, and not s2's.
    let compacted = startup_context(&project, home, &json!({"hook_event_name": "SessionStart", "session_id": "s1",
        "source": "compact", "cwd": cwd}));
    let text = compacted["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    let shown: Value = serde_json::from_str(&text[text.find("{\n").unwrap()..]).unwrap();
    let sessions = shown["active_sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{text}");
    assert_eq!((sessions[0]["session_id"].as_str(), sessions[0]["job_name"].as_str()), (Some("s1"), Some("research")));
    assert_eq!(sessions[0]["current_step_id"], "gather");

    // Unusable input is an empty answer, and a cairn home that cannot be written still gives the session id.
    assert_eq!(startup_context(&project, home, &json!("not an event")), json!({}));
    let blocker = home.join("blocker");
    std::fs::write(&blocker, "a file, not a directory").unwrap();
    let broken = startup_context(&project, &blocker, &json!({"session_id": "s1", "source": "compact", "cwd": cwd}));
    let text = broken["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(text.starts_with("CLAUDE_CODE_SESSION_ID=s1\n"), "{text}");
    assert!(text.contains("The active DeepWork workflows could not be read: could not write cairn's standard jobs"), "{text}");
}

/// A git repository (branch `main`) in a temporary directory, with a private cairn home and `HOME`.
pub struct Repo {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

/// Variables that would point git at another repository than the one around its working directory.
const GIT_LOCATION: [&str; 6] =
    ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_NAMESPACE"];

/// A `.deepreview` with an `individual` rule for Markdown files and a catch-all rule.
const RULES: &str = r#"markdown:
  description: Markdown reads well
  match:
    include: ["**/*.md"]
  review:
    strategy: individual
    instructions: Check {file_path} for clarity.
everything:
  description: Every change at once
  match:
    include: ["**/*"]
  review:
    strategy: matches_together
    instructions: Look at the whole change.
"#;

impl Repo {
    pub fn new() -> Repo {
        let repo = Repo { dir: tempfile::tempdir().unwrap(), home: tempfile::tempdir().unwrap() };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.name", "cairn tests"]);
        repo.git(&["config", "user.email", "tests@cairn.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn env(&self, cmd: &mut std::process::Command) {
        cmd.current_dir(self.dir.path())
            .env("CAIRN_HOME", self.home.path().join("cairn"))
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("DEEPWORK_ADDITIONAL_JOBS_FOLDERS")
            .env_remove("DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS")
            .env_remove("DEEPWORK_HOOK_PLATFORM");
        for name in GIT_LOCATION {
            cmd.env_remove(name);
        }
    }

    fn git(&self, args: &[&str]) -> String {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args).stdin(Stdio::null());
        self.env(&mut cmd);
        let output = cmd.output().unwrap();
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    fn commit(&self, paths: &[&str], message: &str) {
        let mut args = vec!["add", "--"];
        args.extend(paths);
        self.git(&args);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// Runs `deepwork <args>` in the repository, with `stdin` piped in when given (else no input at all).
    fn deepwork(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_deepwork"));
        cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        self.env(&mut cmd);
        cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        let mut child = cmd.spawn().unwrap();
        if let Some(text) = stdin {
            // A command that refuses before reading its input may close the pipe first.
            if let Err(error) = child.stdin.take().unwrap().write_all(text.as_bytes()) {
                assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
            }
        }
        child.wait_with_output().unwrap()
    }

    /// `deepwork review --instructions-for claude <args>`: its standard output, after checking it succeeded.
    fn review(&self, args: &[&str], stdin: Option<&str>) -> String {
        let mut all = vec!["review", "--instructions-for", "claude"];
        all.extend(args);
        let output = self.deepwork(&all, stdin);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// `deepwork hook <name>` on `event`: the JSON it printed, after checking it exited 0.
    pub fn hook(&self, name: &str, event: &Value) -> Value {
        let output = self.deepwork(&["hook", name], Some(&event.to_string()));
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    }

    fn instructions(&self) -> PathBuf {
        self.dir.path().join(".deepwork/tmp/review_instructions")
    }
}

/// The `description:` lines of a Claude task list.
fn descriptions(list: &str) -> Vec<&str> {
    list.lines().filter_map(|line| line.strip_prefix("description: ")).collect()
}

/// The instruction files a Claude task list points at, read.
fn prompts(repo: &Repo, list: &str) -> Vec<String> {
    list.lines()
        .filter_map(|line| line.strip_prefix("\tprompt: \"@").and_then(|rest| rest.strip_suffix('"')))
        .map(|rel| std::fs::read_to_string(repo.dir.path().join(rel)).unwrap())
        .collect()
}

pub fn additional_context(output: &Value) -> &str {
    assert_eq!(output["hookSpecificOutput"]["hookEventName"], "PostToolUse", "{output}");
    output["hookSpecificOutput"]["additionalContext"].as_str().unwrap()
}

#[test]
fn review_lists_the_changed_files_in_claudes_format() {
    let repo = Repo::new();
    repo.write(".deepreview", RULES);
    repo.write("docs/old.md", "# Old\n");
    repo.commit(&[".deepreview", "docs/old.md"], "initial");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("docs/a.md", "# A\n");
    repo.commit(&["docs/a.md"], "a");
    repo.write("b.md", "# B\n");
    repo.write("notes.txt", "n\n");

    let list = repo.review(&[], None);
    assert!(list.starts_with("Invoke the following list of Agents in parallel.\n"), "{list}");
    assert_eq!(descriptions(&list), ["Review markdown", "Review markdown", "Review everything"], "{list}");
    assert!(list.contains("\tsubagent_type: general-purpose\n"), "{list}");
    // Through cairn's plugin, its reviewer agent.
    let list = repo.review(&["--plugin", "cairn"], None);
    assert!(list.contains("\tsubagent_type: cairn:reviewer\n"), "{list}");
    let texts = prompts(&repo, &list);
    assert!(texts[0].contains("Check b.md for clarity."), "{}", texts[0]);
    assert!(texts[1].contains("Check docs/a.md for clarity."), "{}", texts[1]);
    for file in ["b.md", "docs/a.md", "notes.txt"] {
        assert!(texts[2].contains(file), "the catch-all review covers {file}: {}", texts[2]);
    }
    assert!(!texts[2].contains("docs/old.md"), "{}", texts[2]);
    // git does not see the instruction files as changes: the next run lists the same reviews.
    let again = repo.review(&["--path", repo.root().to_str().unwrap()], None);
    assert_eq!(descriptions(&again), descriptions(&list));
    assert!(!prompts(&repo, &again)[2].contains("review_instructions/"), "{}", prompts(&repo, &again)[2]);
}

#[test]
fn review_with_explicit_files_keeps_catch_all_rules() {
    let repo = Repo::new();
    repo.write(".deepreview", RULES);
    repo.write("docs/a.md", "# A\n");
    repo.write("c.txt", "c\n");
    repo.commit(&[".deepreview", "docs/a.md", "c.txt"], "initial");

    // Nothing changed, but the files are named.
    let list = repo.review(&["--files", "docs/a.md", "--files", "./c.txt", "--files", "docs/a.md"], None);
    assert_eq!(descriptions(&list), ["Review markdown", "Review everything"], "{list}");
    let texts = prompts(&repo, &list);
    assert!(texts[0].contains("Check docs/a.md for clarity."));
    assert!(texts[1].contains("c.txt") && texts[1].contains("docs/a.md"), "{}", texts[1]);

    let absolute = repo.root().join("docs/a.md");
    let list = repo.review(&["--files", absolute.to_str().unwrap()], Some("c.txt\n"));
    assert_eq!(descriptions(&list), ["Review markdown", "Review everything"], "--files wins over stdin: {list}");
    assert!(!prompts(&repo, &list)[1].contains("c.txt"));
}

#[test]
fn review_reads_files_from_standard_input() {
    let repo = Repo::new();
    repo.write(".deepreview", RULES);
    repo.write("x.md", "# X\n");
    repo.write("y.md", "# Y\n");
    repo.commit(&[".deepreview", "x.md", "y.md"], "initial");

    // Input without any file name falls back to git, which sees no change.
    assert_eq!(repo.review(&[], Some("\n  \n")), "No changed files detected.\n");

    let list = repo.review(&[], Some("y.md\n\n  x.md  \ny.md\n"));
    assert_eq!(descriptions(&list), ["Review markdown", "Review markdown", "Review everything"], "{list}");
    let texts = prompts(&repo, &list);
    assert!(texts[0].contains("Check x.md for clarity.") && texts[1].contains("Check y.md for clarity."));
}

#[test]
fn review_compares_against_the_base_ref() {
    let repo = Repo::new();
    repo.write(".deepreview", RULES);
    repo.commit(&[".deepreview"], "initial");
    repo.write("one.md", "# One\n");
    repo.commit(&["one.md"], "one");
    repo.git(&["tag", "t1"]);
    repo.write("two.md", "# Two\n");
    repo.commit(&["two.md"], "two");

    // On the default branch itself only uncommitted changes count.
    assert_eq!(repo.review(&[], None), "No changed files detected.\n");
    let list = repo.review(&["--base-ref", "t1"], None);
    assert_eq!(descriptions(&list), ["Review markdown", "Review everything"], "{list}");
    assert!(prompts(&repo, &list)[0].contains("Check two.md for clarity."));
    let list = repo.review(&["--base-ref", "HEAD~2"], None);
    assert_eq!(descriptions(&list), ["Review markdown", "Review markdown", "Review everything"], "{list}");

    let output = repo.deepwork(&["review", "--instructions-for", "claude", "--base-ref", "no-such-ref"], None);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("Error: ") && stderr.contains("no-such-ref"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn review_says_when_there_is_nothing_to_review() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    assert_eq!(repo.review(&[], None), "No .deepreview configuration files found.\n");

    let top_level_markdown = RULES.replace("**/*.md", "*.md");
    repo.write(".deepreview", top_level_markdown.split("everything:").next().unwrap());
    repo.write("sub/.deepreview", "broken: [\n");
    let output = repo.deepwork(&["review", "--instructions-for", "claude"], None);
    assert!(output.status.success());
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "No review rules matched the changed files.\n");
    let stderr = String::from_utf8(output.stderr).unwrap();
    let warning = format!("Warning: {}: ", repo.root().join("sub/.deepreview").display());
    assert!(stderr.starts_with(&warning), "{stderr}");

    repo.commit(&[".deepreview", "a.txt"], "initial");
    repo.git(&["rm", "-q", "--cached", "--ignore-unmatch", "sub/.deepreview"]);
    std::fs::remove_dir_all(repo.dir.path().join("sub")).unwrap();
    assert_eq!(repo.review(&[], None), "No changed files detected.\n");

    // Not a repository: a git error.
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join(".deepreview"), RULES).unwrap();
    let output =
        repo.deepwork(&["review", "--instructions-for", "claude", "--path", plain.path().to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8(output.stderr).unwrap().starts_with("Error: "));
}

#[test]
fn review_for_another_platform_prints_a_plain_list() {
    let repo = Repo::new();
    repo.write(".deepreview", RULES);
    repo.write("a.md", "# A\n");
    let output = repo.deepwork(&["review", "--instructions-for", "gemini", "--files", "a.md"], None);
    assert!(output.status.success());
    let list = String::from_utf8(output.stdout).unwrap();
    assert!(
        list.contains("- Review markdown\n  instructions: .deepwork/tmp/review_instructions/markdown--a.md--"),
        "{list}"
    );
    assert!(!list.contains("subagent_type"), "{list}");
}

const CONFIG_SCHEMA: &str = r#"summary: Service configuration
matchers: ["config/*.yml"]
json_schema_path: config.schema.json
verification_bash_command:
  - "grep -q '^name:' \"$1\" || { echo \"$1 has no name\" >&2; exit 3; }"
"#;

pub fn write_event(repo: &Repo, file: &str) -> Value {
    json!({
        "session_id": "s1",
        "hook_event_name": "PostToolUse",
        "cwd": repo.root(),
        "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "…"},
    })
}

#[test]
fn deepschema_write_hook_notes_and_validates_governed_files() {
    let repo = Repo::new();
    repo.write(".deepwork/schemas/config/deepschema.yml", CONFIG_SCHEMA);
    repo.write(
        ".deepwork/schemas/config/config.schema.json",
        r#"{"type": "object", "required": ["name"], "properties": {"port": {"type": "integer"}}}"#,
    );
    let note = "Note: this file must conform to the DeepSchema at .deepwork/schemas/config/deepschema.yml";

    repo.write("config/app.yml", "name: app\nport: 8080\n");
    let absolute = repo.root().join("config/app.yml");
    let output = repo.hook("deepschema_write", &write_event(&repo, absolute.to_str().unwrap()));
    assert_eq!(output, json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": note}}));

    repo.write("notes/app.yml", "anything: 1\n");
    assert_eq!(repo.hook("deepschema_write", &write_event(&repo, "notes/app.yml")), json!({}));

    repo.write("config/app.yml", "port: 8080\n");
    let output = repo.hook("deepschema_write", &write_event(&repo, "config/app.yml"));
    let text = additional_context(&output);
    assert!(
        text.starts_with(&format!(
            "{note}\n\nCRITICAL: DeepSchema validation failed when it tried to verify this change.\n\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("JSON Schema validation against .deepwork/schemas/config/config.schema.json failed:"),
        "{text}"
    );
    assert!(text.contains("failed (exit code 3):"), "{text}");
    assert!(
        text.contains(&format!("{} has no name", absolute.display())),
        "the command gets the absolute path: {text}"
    );

    // An anonymous schema beside the file.
    repo.write("docs/.deepschema.guide.md.yml", "verification_bash_command:\n  - \"grep -q Guide \\\"$1\\\"\"\n");
    repo.write("docs/guide.md", "# Notes\n");
    let output = repo.hook("deepschema_write", &write_event(&repo, "docs/guide.md"));
    let text = additional_context(&output);
    assert!(
        text.starts_with("Note: this file must conform to the DeepSchema at docs/.deepschema.guide.md.yml\n\nCRITICAL"),
        "{text}"
    );
}

#[test]
fn post_commit_reminder_hook_asks_for_a_review_until_every_review_passed() {
    let repo = Repo::new();
    repo.write(".deepreview", RULES);
    repo.commit(&[".deepreview"], "rules");
    repo.write("docs/a.md", "# A\n");
    repo.commit(&["docs/a.md"], "a");
    let event = |command: &str| {
        json!({
            "hook_event_name": "PostToolUse",
            "cwd": repo.root(),
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_response": {"stdout": ""},
        })
    };
    assert_eq!(repo.hook("post_commit_reminder", &event("git status")), json!({}));

    let commit = event("git add docs/a.md && git commit -m 'a'");
    let reminder = repo.hook("post_commit_reminder", &commit);
    let text = additional_context(&reminder);
    assert!(text.contains("get_review_instructions") && text.contains("commit"), "{text}");
    // Through cairn's plugin, its review command.
    let output = repo.deepwork(&["hook", "post_commit_reminder", "--plugin", "cairn"], Some(&commit.to_string()));
    let through_plugin: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(additional_context(&through_plugin).contains("reviewed with `/cairn:review`"), "{through_plugin}");

    // Review the committed file and mark every review passed: no re-review needed.
    let list = repo.review(&["--files", "docs/a.md"], None);
    assert!(!descriptions(&list).is_empty());
    for entry in std::fs::read_dir(repo.instructions()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            std::fs::write(path.with_extension("passed"), "").unwrap();
        }
    }
    let passed = repo.hook("post_commit_reminder", &commit);
    assert_eq!(additional_context(&passed), "No re-review needed - all reviews passed for committed files");

    // Changing the file afterwards changes its review id.
    repo.write("docs/a.md", "# A, edited\n");
    let output = repo.hook("post_commit_reminder", &commit);
    assert_eq!(additional_context(&output), text);
}

#[test]
fn hook_errors_and_unknown_hooks() {
    let repo = Repo::new();
    let output = repo.deepwork(&["hook", "no_such_hook"], Some("{}"));
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "Error: Hook 'no_such_hook' not found. Available hooks: deepschema_write, post_commit_reminder, startup_context.\n"
    );
    for input in ["", "not json"] {
        let output = repo.deepwork(&["hook", "deepschema_write"], Some(input));
        assert!(output.status.success());
        assert_eq!(String::from_utf8(output.stdout).unwrap(), "{}\n");
    }
    // A cairn home that cannot be written is reported in the hook's answer, and the hook still exits 0.
    let blocker = repo.home.path().join("blocker");
    std::fs::write(&blocker, "a file, not a directory").unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_deepwork"));
    cmd.args(["hook", "post_commit_reminder"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    repo.env(&mut cmd);
    cmd.env("CAIRN_HOME", &blocker);
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"{}").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["decision"], "block");
    assert!(answer["reason"].as_str().unwrap().starts_with("## Hook Script Error\n\n"), "{answer}");
}
