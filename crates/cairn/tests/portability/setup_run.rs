//! Running `cairn setup` (or `deepwork setup`) as a user would: the real binary, `HOME` at a temporary folder, and
//! the settings files it leaves there.

use std::path::Path;
use std::process::Command;

/// What one `setup` run printed, and whether it succeeded.
#[derive(Debug)]
pub struct Outcome {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `<binary> setup <args>` in `cwd` with `HOME` at `home` (and neither host-specific settings folders nor cairn's
/// own variables from the environment).
pub fn setup(binary: &str, home: &Path, cwd: &Path, args: &[&str]) -> Outcome {
    setup_with(binary, home, cwd, args, &[])
}

/// [`setup`] with the extra environment variables `env`.
pub fn setup_with(binary: &str, home: &Path, cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Outcome {
    let program = Path::new(env!("CARGO_BIN_EXE_cairn")).with_file_name(binary);
    let mut command = Command::new(program);
    command.arg("setup").args(args).current_dir(cwd).env("HOME", home);
    for variable in ["CODEX_HOME", "CLAUDE_CONFIG_DIR", "CAIRN_HOME", "CAIRN_DATABASE_URL"] {
        command.env_remove(variable);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    Outcome {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `cairn setup <args>` and asserts it succeeded.
pub fn cairn_setup(home: &Path, cwd: &Path, args: &[&str]) -> String {
    let outcome = setup("cairn", home, cwd, args);
    assert!(outcome.success, "cairn setup {args:?} failed: {outcome:?}");
    outcome.stdout
}

/// The text of `path`.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes `text` to `path`, creating its folder.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}
