//! `cairn setup gemini` (`~/.gemini/settings.json`) and `cairn setup cursor` (the project's `.cursor/mcp.json`): the
//! `mcpServers` entries merged into the user's JSON with their other settings kept, the work server's token named,
//! never written; `--trust` adds the project to Gemini CLI's trusted folders; a second run changes nothing;
//! `--dry-run` writes nothing; broken files are refused untouched.

use serde_json::{Value, json};

use crate::setup_run::{cairn_setup, read, setup, setup_with, write};

#[test]
fn gemini_settings_are_merged_and_a_second_run_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".gemini/settings.json");
    write(&file, r#"{"theme": "Dracula", "mcpServers": {"docs": {"command": "docs-server", "trust": true}}}"#);

    let printed = cairn_setup(home.path(), home.path(), &["gemini", "--command-name", "--url", "https://cairn.example/", "--token-env", "CAIRN_WORK"]);
    assert!(printed.contains("+ mcpServers.work.httpUrl = \"https://cairn.example/mcp\""), "{printed}");
    let settings: Value = serde_json::from_str(&read(&file)).unwrap();
    assert_eq!(
        settings,
        json!({
            "theme": "Dracula",
            "mcpServers": {
                "docs": {"command": "docs-server", "trust": true},
                "deepwork": {"command": "deepwork", "args": ["serve", "--platform", "gemini", "--tool-prefix", "mcp_deepwork_"]},
                "roscoe": {"command": "roscoe", "args": ["mcp"]},
                "work": {"httpUrl": "https://cairn.example/mcp", "headers": {"Authorization": "Bearer ${CAIRN_WORK}"}}
            }
        })
    );
    let written = read(&file);
    let again = cairn_setup(home.path(), home.path(), &["gemini", "--command-name", "--url", "https://cairn.example", "--token-env", "CAIRN_WORK"]);
    assert!(again.contains("already set up; nothing to change.\n"), "{again}");
    assert_eq!(read(&file), written);

    // Without --url the work server is left alone (setup only adds).
    let without_work = cairn_setup(home.path(), home.path(), &["gemini", "--command-name"]);
    assert!(without_work.contains("already set up; nothing to change.\n"), "{without_work}");
}

#[test]
fn deepwork_setup_is_the_same_command_and_a_dry_run_creates_nothing() {
    let home = tempfile::tempdir().unwrap();
    let outcome = setup("deepwork", home.path(), home.path(), &["gemini", "--command-name", "--dry-run"]);
    assert!(outcome.success, "{outcome:?}");
    assert!(outcome.stdout.contains("+ mcpServers.deepwork.args = [\"serve\",\"--platform\",\"gemini\",\"--tool-prefix\",\"mcp_deepwork_\"]"), "{outcome:?}");
    assert!(outcome.stdout.contains("Dry run: nothing was written.\n"), "{outcome:?}");
    assert!(!home.path().join(".gemini").exists());
}

#[test]
fn a_broken_json_file_is_refused_and_left_as_it_is() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".gemini/settings.json");
    let broken = "{\"theme\": \"Dracula\",\n";
    write(&file, broken);
    let outcome = setup("cairn", home.path(), home.path(), &["gemini", "--command-name"]);
    assert!(!outcome.success, "{outcome:?}");
    assert!(outcome.stderr.contains("settings.json is not valid JSON") && outcome.stderr.contains("nothing was changed"), "{outcome:?}");
    assert_eq!(read(&file), broken);

    let wrong_shape = r#"{"mcpServers": ["docs"]}"#;
    write(&file, wrong_shape);
    let outcome = setup("cairn", home.path(), home.path(), &["gemini", "--command-name"]);
    assert!(!outcome.success && outcome.stderr.contains("`mcpServers` is [\"docs\"], not an object"), "{outcome:?}");
    assert_eq!(read(&file), wrong_shape);
}

#[test]
fn cursor_settings_go_to_the_project_and_replace_an_http_entry_by_the_stdio_server() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    let file = project.join(".cursor/mcp.json");
    write(&file, r#"{"mcpServers": {"deepwork": {"url": "http://old.example/mcp", "env": {"DEBUG": "1"}}}}"#);

    let printed = cairn_setup(home.path(), home.path(), &["cursor", "--command-name", "--project", project.to_str().unwrap(), "--url", "http://127.0.0.1:7777"]);
    assert!(printed.contains("- mcpServers.deepwork.url (was \"http://old.example/mcp\")"), "{printed}");
    let settings: Value = serde_json::from_str(&read(&file)).unwrap();
    assert_eq!(
        settings["mcpServers"],
        json!({
            "deepwork": {"env": {"DEBUG": "1"}, "command": "deepwork", "args": ["serve", "--platform", "cursor"]},
            "roscoe": {"command": "roscoe", "args": ["mcp"]},
            "work": {"url": "http://127.0.0.1:7777/mcp", "headers": {"Authorization": "Bearer ${env:CAIRN_TOKEN}"}}
        })
    );
    // The current directory is the default project.
    let again = cairn_setup(home.path(), &project, &["cursor", "--command-name", "--url", "http://127.0.0.1:7777/mcp"]);
    assert!(again.contains("already set up; nothing to change.\n"), "{again}");

    let outcome = setup("cairn", home.path(), home.path(), &["cursor", "--command-name", "--url", "ftp://x"]);
    assert!(!outcome.success && outcome.stderr.contains("is not an http(s) URL"), "{outcome:?}");
}

#[test]
fn gemini_and_cursor_get_absolute_paths_the_variables_set_now_and_what_is_left_to_do() {
    let home = tempfile::tempdir().unwrap();
    let cairn_home = home.path().join("cairn-home");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_cairn")).parent().unwrap().canonicalize().unwrap();
    let gemini = setup_with("cairn", home.path(), home.path(), &["gemini"], &[("CAIRN_HOME", &cairn_home)]);
    assert!(gemini.success, "{gemini:?}");
    let settings: Value = serde_json::from_str(&read(&home.path().join(".gemini/settings.json"))).unwrap();
    assert_eq!(
        settings["mcpServers"]["deepwork"],
        json!({"command": bin.join("deepwork"), "args": ["serve", "--platform", "gemini", "--tool-prefix", "mcp_deepwork_"],
            "env": {"CAIRN_HOME": "$CAIRN_HOME"}})
    );
    assert_eq!(settings["mcpServers"]["roscoe"]["env"], json!({"CAIRN_HOME": "$CAIRN_HOME"}));
    assert!(!read(&home.path().join(".gemini/settings.json")).contains("cairn-home"), "the value stays in the environment");
    for needed in ["ok: ", "trust the project folder", "apiKeyFile", "start the host where CAIRN_HOME is set"] {
        assert!(gemini.stdout.contains(needed), "{needed}: {}", gemini.stdout);
    }

    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let cursor = setup_with("cairn", home.path(), &project, &["cursor"], &[("CAIRN_DATABASE_URL", std::path::Path::new("postgres://db/cairn"))]);
    assert!(cursor.success, "{cursor:?}");
    let settings: Value = serde_json::from_str(&read(&project.join(".cursor/mcp.json"))).unwrap();
    assert_eq!(settings["mcpServers"]["roscoe"], json!({"command": bin.join("roscoe"), "args": ["mcp"],
        "env": {"CAIRN_DATABASE_URL": "${env:CAIRN_DATABASE_URL}"}}));
    assert!(!read(&project.join(".cursor/mcp.json")).contains("postgres://"), "a database URL may hold a password");
}

#[test]
fn gemini_trust_adds_the_project_to_the_trusted_folders_kept_as_they_are_and_only_for_gemini() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let folders = home.path().join(".gemini/trustedFolders.json");
    write(&folders, r#"{"/srv/other": "TRUST_PARENT"}"#);
    let printed = cairn_setup(home.path(), &project, &["gemini", "--command-name", "--trust"]);
    let project = project.canonicalize().unwrap().display().to_string();
    assert!(printed.contains(&format!("  + {project} = \"TRUST_FOLDER\"")), "{printed}");
    assert!(!printed.contains("trust the project folder"), "nothing left to trust: {printed}");
    let trusted: Value = serde_json::from_str(&read(&folders)).unwrap();
    assert_eq!(trusted, json!({"/srv/other": "TRUST_PARENT", project.as_str(): "TRUST_FOLDER"}));
    let again = cairn_setup(home.path(), home.path(), &["gemini", "--command-name", "--trust", "--project", &project]);
    assert!(again.contains(&format!("{}: already set up; nothing to change.", folders.display())), "{again}");

    let codex = setup("cairn", home.path(), home.path(), &["codex", "--trust"]);
    assert!(!codex.success && codex.stderr.contains("--trust is for Gemini CLI"), "{codex:?}");
}
