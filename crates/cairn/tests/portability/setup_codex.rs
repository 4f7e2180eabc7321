//! `cairn setup codex`: `[mcp_servers.*]` merged into `~/.codex/config.toml`, the user's comments, layout and other
//! servers kept; a second run changes nothing; `--dry-run` writes nothing; a broken file is refused untouched.

use crate::setup_run::{cairn_setup, read, setup, setup_with, write};

const BEFORE: &str = r#"# My Codex settings.
model = "o3"   # the one I like

[mcp_servers.docs]
command = "docs-server"
args = ["--quiet"]

[mcp_servers.deepwork]
url = "http://old.example/mcp" # an old set-up
startup_timeout_sec = 20
"#;

#[test]
fn codex_settings_are_merged_keeping_the_users_file_and_a_second_run_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".codex/config.toml");
    write(&file, BEFORE);

    let dry = cairn_setup(home.path(), home.path(), &["codex", "--command-name", "--dry-run", "--url", "http://127.0.0.1:7777", "--token-env", "WORK_TOKEN"]);
    assert!(dry.contains("+ mcp_servers.roscoe.command = \"roscoe\"") && dry.contains("Dry run: nothing was written."), "{dry}");
    assert_eq!(read(&file), BEFORE, "a dry run writes nothing");

    let printed = cairn_setup(home.path(), home.path(), &["codex", "--command-name", "--url", "http://127.0.0.1:7777", "--token-env", "WORK_TOKEN"]);
    for line in [
        "+ mcp_servers.deepwork.command = \"deepwork\"",
        "+ mcp_servers.deepwork.args = [\"serve\", \"--platform\", \"codex\"]",
        "- mcp_servers.deepwork.url (was \"http://old.example/mcp\")",
        "+ mcp_servers.roscoe.args = [\"mcp\"]",
        "+ mcp_servers.work.url = \"http://127.0.0.1:7777/mcp\"",
        "+ mcp_servers.work.bearer_token_env_var = \"WORK_TOKEN\"",
    ] {
        assert!(printed.contains(line), "{line} missing from:\n{printed}");
    }
    let after = read(&file);
    let expected_start = "# My Codex settings.\nmodel = \"o3\"   # the one I like\n\n[mcp_servers.docs]\ncommand = \"docs-server\"\nargs = [\"--quiet\"]\n";
    assert!(after.starts_with(expected_start), "the user's part is kept as written:\n{after}");
    assert!(after.contains("startup_timeout_sec = 20"), "{after}");
    assert!(!after.contains("old.example"), "{after}");
    assert!(after.contains("[mcp_servers.work]\nurl = \"http://127.0.0.1:7777/mcp\"\nbearer_token_env_var = \"WORK_TOKEN\"\n"), "{after}");

    let again = cairn_setup(home.path(), home.path(), &["codex", "--command-name", "--url", "http://127.0.0.1:7777", "--token-env", "WORK_TOKEN"]);
    assert!(again.starts_with(&format!("{}: already set up; nothing to change.\n", file.display())), "{again}");
    assert!(again.contains("warning: `deepwork` does not start"), "a name not on PATH is said: {again}");
    assert_eq!(read(&file), after);
}

#[test]
fn a_codex_file_that_does_not_parse_is_refused_and_left_as_it_is() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".codex/config.toml");
    let broken = "model = \"o3\"\n[mcp_servers.docs\ncommand = \"x\"\n";
    write(&file, broken);
    let outcome = setup("cairn", home.path(), home.path(), &["codex", "--command-name"]);
    assert!(!outcome.success, "{outcome:?}");
    assert!(outcome.stderr.contains("config.toml is not valid TOML") && outcome.stderr.contains("nothing was changed"), "{outcome:?}");
    assert_eq!(read(&file), broken);

    let not_a_table = "mcp_servers = 3\n";
    write(&file, not_a_table);
    let outcome = setup("cairn", home.path(), home.path(), &["codex", "--command-name"]);
    assert!(!outcome.success && outcome.stderr.contains("`mcp_servers` is not a table"), "{outcome:?}");
    assert_eq!(read(&file), not_a_table);
}

#[test]
fn codex_home_and_claude_config_dir_move_the_settings_as_they_move_them_for_the_hosts() {
    let home = tempfile::tempdir().unwrap();
    let (codex_home, claude_dir) = (home.path().join("codex-elsewhere"), home.path().join("claude-elsewhere"));
    let codex = setup_with("cairn", home.path(), home.path(), &["codex", "--command-name"], &[("CODEX_HOME", &codex_home)]);
    assert!(codex.success && codex.stdout.starts_with(&format!("{}:", codex_home.join("config.toml").display())), "{codex:?}");
    assert!(read(&codex_home.join("config.toml")).contains("[mcp_servers.roscoe]"));
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let claude = setup_with("cairn", home.path(), &repo, &["claude"], &[("CLAUDE_CONFIG_DIR", &claude_dir)]);
    assert!(claude.success, "{claude:?}");
    assert!(read(&claude_dir.join("settings.json")).contains("cairn@cairn"));
    assert!(!home.path().join(".codex").exists() && !home.path().join(".claude").exists());
}

#[test]
fn by_default_codex_starts_the_programs_next_to_cairn_by_absolute_path_and_hands_on_cairns_variables() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".codex/config.toml");
    let printed = cairn_setup(home.path(), home.path(), &["codex", "--roscoe-tools", "runs,docs"]);
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_cairn")).parent().unwrap().canonicalize().unwrap();
    let (deepwork, roscoe) = (bin.join("deepwork"), bin.join("roscoe"));
    let settings: toml_edit::DocumentMut = read(&file).parse().unwrap();
    let servers = &settings["mcp_servers"];
    assert_eq!(servers["deepwork"]["command"].as_str(), deepwork.to_str(), "{settings}");
    assert_eq!(servers["roscoe"]["command"].as_str(), roscoe.to_str());
    assert_eq!(servers["roscoe"]["args"].to_string().trim(), r#"["mcp", "--tools", "runs,docs"]"#);
    for server in ["deepwork", "roscoe"] {
        assert_eq!(servers[server]["env_vars"].to_string().trim(), r#"["CAIRN_HOME", "CAIRN_DATABASE_URL"]"#);
    }
    for program in [&deepwork, &roscoe] {
        assert!(printed.contains(&format!("ok: {} starts (", program.display())), "each command is tried: {printed}");
    }
    assert!(printed.contains("Still to do:\n") && printed.contains("start Codex where CAIRN_HOME"), "{printed}");

    let bad = crate::setup_run::setup("cairn", home.path(), home.path(), &["codex", "--roscoe-tools", "everything"]);
    assert!(!bad.success && bad.stderr.contains("--roscoe-tools") && bad.stderr.contains("runs"), "{bad:?}");
}
