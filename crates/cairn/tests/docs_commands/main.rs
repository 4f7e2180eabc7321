//! Every shell command of README.md and docs/, run as a reader would type them, and what the docs show they print
//! compared with what they print.
//!
//! Each ```sh block of a page runs through `bash -euo pipefail -c BLOCK` (stderr joined to stdout, stdin empty), with
//! this build's `cairn`, `deepwork` and `roscoe` first on `PATH` and no other environment but a fresh `HOME` and
//! `CAIRN_HOME` for the page. A page's blocks run in order in one folder of their own, as a reader types them, so a
//! later block finds what an earlier one made. Every block must exit 0, unless the line just before its opening fence
//! is `<!-- not run: REASON -->` (a real reason: it needs Claude Code, PostgreSQL or a long build, or starts a server
//! that runs until stopped). `<!-- file: PATH -->` before a block of any language writes it to PATH in the page's
//! folder, for the commands after it (a workflow the text says to save).
//!
//! A ```text block right after a run ```sh block (only blank lines between) is what the docs promise it prints:
//! every line shown must appear in the output, in the same order, other lines allowed between. Lines are compared
//! trimmed; blank lines and lines of `…` alone are skipped; `<id>`, `<project>` or any `<lower-case-word>`, and a `…`
//! within a line, stand for text that changes from run to run (ids, times, paths).

mod page;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use page::{Block, Mark};

/// How long one block may run before the test calls it a hang (a server the page forgot to mark): a guard against
/// waiting forever, far above what any documented command takes.
const HANG: Duration = Duration::from_secs(120);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md, then every page under docs/, by path.
fn pages() -> Vec<PathBuf> {
    fn markdown(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                markdown(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut docs = Vec::new();
    markdown(&workspace().join("docs"), &mut docs);
    docs.sort();
    std::iter::once(workspace().join("README.md")).chain(docs).collect()
}

/// What walking the pages found.
#[derive(Default)]
struct Walk {
    ran: usize,
    compared: usize,
    not_run: Vec<String>,
    failures: Vec<String>,
}

/// A page's own folder: `bin` (this build's three programs), `home` (`CAIRN_HOME`), `user` (`HOME`) and `work`, the
/// current folder of its commands.
struct Shell {
    _tmp: tempfile::TempDir,
    path: String,
    home: PathBuf,
    user: PathBuf,
    work: PathBuf,
}

impl Shell {
    fn new() -> Shell {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let tmp = tempfile::tempdir().unwrap();
        let [bin, home, user, work] = ["bin", "home", "user", "work"].map(|name| tmp.path().join(name));
        for dir in [&bin, &home, &user, &work] {
            std::fs::create_dir(dir).unwrap();
        }
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
        symlink(env!("CARGO_BIN_EXE_cairn"), bin.join("cairn")).unwrap();
        symlink(env!("CARGO_BIN_EXE_deepwork"), bin.join("deepwork")).unwrap();
        symlink(env!("CARGO_BIN_EXE_roscoe"), bin.join("roscoe")).unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        Shell { _tmp: tmp, path, home, user, work }
    }

    /// Runs `block` to its end: whether it exited 0, and what it printed on stdout and stderr together.
    async fn run(&self, block: &str) -> Result<(bool, String), String> {
        let mut command = tokio::process::Command::new("bash");
        command
            .args(["-euo", "pipefail", "-c", &format!("exec 2>&1\n{block}")])
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.user)
            .env("CAIRN_HOME", &self.home)
            .current_dir(&self.work)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let child = command.spawn().unwrap();
        let group = child.id().unwrap();
        match tokio::time::timeout(HANG, child.wait_with_output()).await {
            Ok(output) => {
                let output = output.unwrap();
                let printed = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
                Ok((output.status.success(), printed.into_owned()))
            }
            Err(_) => {
                // SAFETY: kill(2) on the process group this test made; it touches no memory.
                unsafe { libc::kill(-i32::try_from(group).unwrap(), libc::SIGKILL) };
                Err(format!("still running after {} s", HANG.as_secs()))
            }
        }
    }
}

/// Runs one page's blocks in order in a folder of its own.
async fn walk_page(name: &str, markdown: &str, walk: &mut Walk) {
    let shell = Shell::new();
    let blocks = page::blocks(markdown);
    let mut last_run: Option<(&Block, String)> = None;
    for block in &blocks {
        let at = format!("{name}:{}", block.line);
        let shown_after = last_run.take().filter(|_| block.lang == "text" && block.follows_previous);
        if let Some((command, printed)) = shown_after {
            walk.compared += 1;
            if let Err(missing) = page::shows(&block.body, &printed) {
                walk.failures.push(format!(
                    "{at}: the ```text block shows `{missing}`, which the ```sh block of line {} does not print \
                     (in that order).\n$ {}\n{printed}",
                    command.line,
                    command.body.trim_end(),
                ));
            }
            continue;
        }
        match (&block.mark, block.lang.as_str()) {
            (Some(Mark::File(path)), _) => std::fs::create_dir_all(shell.work.join(path).parent().unwrap())
                .and_then(|()| std::fs::write(shell.work.join(path), &block.body))
                .unwrap_or_else(|e| walk.failures.push(format!("{at}: cannot write the block to {path}: {e}"))),
            (Some(Mark::NotRun(reason)), "sh") if reason.is_empty() => {
                walk.failures.push(format!("{at}: `<!-- not run: -->` needs a reason after the colon"));
            }
            (Some(Mark::NotRun(reason)), "sh") => walk.not_run.push(format!("{at}: {reason}")),
            (Some(Mark::NotRun(_)), lang) => walk.failures.push(format!(
                "{at}: `<!-- not run: … -->` marks a ```{lang} block; it is meant for ```sh blocks only"
            )),
            (None, "sh") => {
                walk.ran += 1;
                match shell.run(&block.body).await {
                    Ok((true, printed)) => last_run = Some((block, printed)),
                    Ok((false, printed)) => walk.failures.push(format!(
                        "{at}: this ```sh block fails; fix the doc (or the program), or mark it \
                         `<!-- not run: REASON -->` on the line before its fence.\n$ {}\n{printed}",
                        block.body.trim_end(),
                    )),
                    Err(hang) => walk.failures.push(format!(
                        "{at}: this ```sh block is {hang}: a server? Mark it `<!-- not run: REASON -->`.\n$ {}",
                        block.body.trim_end(),
                    )),
                }
            }
            (None, _) => {}
        }
    }
}

#[tokio::test]
async fn every_sh_block_of_the_docs_runs_or_is_marked_not_run_and_prints_what_the_docs_show() {
    let mut walk = Walk::default();
    for path in pages() {
        let name = path.strip_prefix(workspace()).unwrap().display().to_string();
        walk_page(&name, &std::fs::read_to_string(&path).unwrap(), &mut walk).await;
    }
    println!("ran {} blocks, compared {} outputs; not run:\n{}", walk.ran, walk.compared, walk.not_run.join("\n"));
    assert!(walk.failures.is_empty(), "{}", walk.failures.join("\n\n"));
    assert!(walk.ran > 0 && walk.compared > 0, "the walk found no ```sh blocks to run, or no ```text to compare");
}
