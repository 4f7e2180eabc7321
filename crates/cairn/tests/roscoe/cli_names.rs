//! The program as installed: a symlink or hard link named `roscoe` or `deepwork` to `cairn` picks that command set,
//! shell completions and man pages come from the clap definitions, `--help` documents the exit codes, and a reader
//! that stops early (`| head`) ends a command quietly.

use std::path::Path;

use crate::support::Env;

/// Runs `program args…` (with this test's home and database) to its end: exit code and stdout.
async fn run(env: &Env, program: &Path, args: &[&str]) -> (i32, String, String) {
    let output = env.cli(program.to_str().unwrap(), args).stdin(std::process::Stdio::null()).output().await.unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code().unwrap(), text(&output.stdout), text(&output.stderr))
}

#[tokio::test]
async fn links_named_roscoe_or_deepwork_pick_their_command_set() {
    let env = Env::new();
    let cairn = Path::new(env!("CARGO_BIN_EXE_cairn"));
    // A hard link must be on the binary's file system: the target folder's scratch space is.
    let links = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let roscoe_symlink = links.path().join("sym").join("roscoe");
    let deepwork_hardlink = links.path().join("hard").join("deepwork");
    let roscoe_hardlink = links.path().join("hard").join("roscoe");
    for dir in ["sym", "hard"] {
        std::fs::create_dir(links.path().join(dir)).unwrap();
    }
    std::os::unix::fs::symlink(cairn, &roscoe_symlink).unwrap();
    std::fs::hard_link(cairn, &deepwork_hardlink).unwrap();
    std::fs::hard_link(cairn, &roscoe_hardlink).unwrap();

    for roscoe in [&roscoe_symlink, &roscoe_hardlink] {
        let (code, help, _) = run(&env, roscoe, &["--help"]).await;
        assert_eq!(code, 0);
        assert!(help.contains("Usage: roscoe") && help.contains("runs") && help.contains("Exit codes:"), "{help}");
        let (code, listed, stderr) = run(&env, roscoe, &["runs", "list", "--global", "--json"]).await;
        assert_eq!((code, listed.trim()), (0, "[]"), "{stderr}");
    }
    let (code, help, _) = run(&env, &deepwork_hardlink, &["--help"]).await;
    assert_eq!(code, 0);
    assert!(help.contains("Usage: deepwork") && help.contains("review"), "{help}");
    let (code, help, _) = run(&env, cairn, &["--help"]).await;
    assert_eq!(code, 0);
    assert!(help.contains("Usage: cairn") && help.contains("completions"), "{help}");
}

#[tokio::test]
async fn run_help_documents_the_exit_codes() {
    let env = Env::new();
    let (code, help, _) = run(&env, Path::new(env!("CARGO_BIN_EXE_roscoe")), &["run", "--help"]).await;
    assert_eq!(code, 0);
    for line in ["0  the run completed", "1  the run failed or was cancelled", "2  usage error", "3  the run waits"] {
        assert!(help.contains(line), "{line:?} in:\n{help}");
    }
    assert!(help.contains("Ctrl-C"), "{help}");
}

#[tokio::test]
async fn completions_and_man_pages_are_generated() {
    let env = Env::new();
    let cairn = Path::new(env!("CARGO_BIN_EXE_cairn"));
    for (shell, mark) in [("bash", "_cairn()"), ("zsh", "#compdef cairn"), ("fish", "complete -c cairn"), ("powershell", "Register-ArgumentCompleter")] {
        let (code, script, stderr) = run(&env, cairn, &["completions", shell]).await;
        assert_eq!(code, 0, "{stderr}");
        assert!(script.contains(mark), "{shell}: {script}");
    }
    let (_, script, _) = run(&env, cairn, &["completions", "bash", "--program", "roscoe"]).await;
    assert!(script.contains("_roscoe()") && script.contains("resume"), "{script}");

    let pages = env.tmp.path().join("man1");
    let (code, listed, stderr) = run(&env, cairn, &["man", pages.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{stderr}");
    for page in ["cairn.1", "roscoe.1", "deepwork.1", "roscoe-run.1", "roscoe-runs-resume.1", "cairn-roscoe-runs-list.1"] {
        assert!(listed.contains(page), "{page} listed: {listed}");
        let text = std::fs::read_to_string(pages.join(page)).unwrap();
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{page} is roff: {text}");
    }
    let run_page = std::fs::read_to_string(pages.join("roscoe-run.1")).unwrap();
    assert!(run_page.contains("detach") && run_page.contains("Exit codes"), "{run_page}");
}

#[tokio::test]
async fn a_reader_that_stops_early_ends_the_command_quietly() {
    let env = Env::new();
    let cairn = env!("CARGO_BIN_EXE_cairn");
    for args in [&["completions", "bash"][..], &["roscoe", "docs", "show", "reference/cli"], &["--help"]] {
        let mut child = env
            .cli(cairn, args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // `… | head -0`: the reader is gone before anything is printed.
        drop(child.stdout.take());
        let output = child.wait_with_output().await.unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "cairn {args:?}: {stderr}");
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "cairn {args:?}: {stderr}");
    }
}
