//! `cairn setup gemini` (`~/.gemini/settings.json`) and `cairn setup cursor` (the project's `.cursor/mcp.json`): the
//! `mcpServers` entries merged into the user's JSON with their other settings kept, the work server's token named,
//! never written; a second run changes nothing; `--dry-run` writes nothing; broken files are refused untouched.

use serde_json::{Value, json};

use crate::setup_run::{cairn_setup, read, setup, write};

#[test]
fn gemini_settings_are_merged_and_a_second_run_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".gemini/settings.json");
    write(&file, r#"{"theme": "Dracula", "mcpServers": {"docs": {"command": "docs-server", "trust": true}}}"#);

    let printed = cairn_setup(home.path(), home.path(), &["gemini", "--url", "https://cairn.example/", "--token-env", "CAIRN_WORK"]);
    assert!(printed.contains("+ mcpServers.work.httpUrl = \"https://cairn.example/mcp\""), "{printed}");
    let settings: Value = serde_json::from_str(&read(&file)).unwrap();
    assert_eq!(
        settings,
        json!({
            "theme": "Dracula",
            "mcpServers": {
                "docs": {"command": "docs-server", "trust": true},
                "deepwork": {"command": "deepwork", "args": ["serve", "--platform", "gemini"]},
                "roscoe": {"command": "roscoe", "args": ["mcp"]},
                "work": {"httpUrl": "https://cairn.example/mcp", "headers": {"Authorization": "Bearer ${CAIRN_WORK}"}}
            }
        })
    );
    let written = read(&file);
    let again = cairn_setup(home.path(), home.path(), &["gemini", "--url", "https://cairn.example", "--token-env", "CAIRN_WORK"]);
    assert!(again.ends_with("already set up; nothing to change.\n"), "{again}");
    assert_eq!(read(&file), written);

    // Without --url the work server is left alone (setup only adds).
    let without_work = cairn_setup(home.path(), home.path(), &["gemini"]);
    assert!(without_work.ends_with("already set up; nothing to change.\n"), "{without_work}");
}

#[test]
fn deepwork_setup_is_the_same_command_and_a_dry_run_creates_nothing() {
    let home = tempfile::tempdir().unwrap();
    let outcome = setup("deepwork", home.path(), home.path(), &["gemini", "--dry-run"]);
    assert!(outcome.success, "{outcome:?}");
    assert!(outcome.stdout.contains("+ mcpServers.deepwork.args = [\"serve\",\"--platform\",\"gemini\"]"), "{outcome:?}");
    assert!(outcome.stdout.ends_with("Dry run: nothing was written.\n"), "{outcome:?}");
    assert!(!home.path().join(".gemini").exists());
}

#[test]
fn a_broken_json_file_is_refused_and_left_as_it_is() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".gemini/settings.json");
    let broken = "{\"theme\": \"Dracula\",\n";
    write(&file, broken);
    let outcome = setup("cairn", home.path(), home.path(), &["gemini"]);
    assert!(!outcome.success, "{outcome:?}");
    assert!(outcome.stderr.contains("settings.json is not valid JSON") && outcome.stderr.contains("nothing was changed"), "{outcome:?}");
    assert_eq!(read(&file), broken);

    let wrong_shape = r#"{"mcpServers": ["docs"]}"#;
    write(&file, wrong_shape);
    let outcome = setup("cairn", home.path(), home.path(), &["gemini"]);
    assert!(!outcome.success && outcome.stderr.contains("`mcpServers` is [\"docs\"], not an object"), "{outcome:?}");
    assert_eq!(read(&file), wrong_shape);
}

#[test]
fn cursor_settings_go_to_the_project_and_replace_an_http_entry_by_the_stdio_server() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    let file = project.join(".cursor/mcp.json");
    write(&file, r#"{"mcpServers": {"deepwork": {"url": "http://old.example/mcp", "env": {"DEBUG": "1"}}}}"#);

    let printed = cairn_setup(home.path(), home.path(), &["cursor", "--project", project.to_str().unwrap(), "--url", "http://127.0.0.1:7777"]);
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
    let again = cairn_setup(home.path(), &project, &["cursor", "--url", "http://127.0.0.1:7777/mcp"]);
    assert!(again.ends_with("already set up; nothing to change.\n"), "{again}");

    let outcome = setup("cairn", home.path(), home.path(), &["cursor", "--url", "ftp://x"]);
    assert!(!outcome.success && outcome.stderr.contains("is not an http(s) URL"), "{outcome:?}");
}
