//! `ROSCOE_CONTEXT_FILE` (§7.1): the run's input and node outputs handed to a script as a JSON file, kept private.
//!
//! The files live in `$CAIRN_HOME/run/`, a directory only its owner may enter (0700), each readable by its owner only
//! (0600), named `<server pid>-<node run id>.json`. A [`ContextFile`] removes its file when it is dropped, so the file
//! is gone however the script ends — success, failure, timeout, cancel, or a caller that stops waiting. A server that
//! dies cannot remove its files; the next server to start removes every file whose server is gone and that no live
//! process (a script still ending) names in its environment — so servers sharing a cairn home never remove each
//! other's live files.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The environment variable that names the file.
pub(crate) const VARIABLE: &str = "ROSCOE_CONTEXT_FILE";

/// A script's context file, removed when dropped.
#[derive(Debug)]
pub(crate) struct ContextFile {
    path: PathBuf,
}

impl ContextFile {
    /// Writes `context` for node run `node_run_id` into the private run directory of `home`.
    pub(crate) fn create(home: &Path, node_run_id: &str, context: &Value) -> io::Result<ContextFile> {
        let dir = run_dir(home)?;
        let path = dir.join(format!("{}-{node_run_id}.json", std::process::id()));
        // An attempt that did not clean up (it cannot happen while this process lives, but be sure) is replaced.
        let _ = fs::remove_file(&path);
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = ContextFile { path };
        let mut out = options.open(&file.path)?;
        out.write_all(context.to_string().as_bytes())?;
        Ok(file)
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ContextFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// `<home>/run`, created private (0700); refused when it is not a directory of this user that only they can enter.
fn run_dir(home: &Path) -> io::Result<PathBuf> {
    let dir = home.join("run");
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        builder.mode(0o700);
        builder.create(&dir)?;
        let meta = fs::symlink_metadata(&dir)?;
        // SAFETY: `geteuid` has no preconditions.
        let me = unsafe { libc::geteuid() };
        if !meta.is_dir() || meta.uid() != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is not a directory of this user; remove it so it can be created private", dir.display()),
            ));
        }
        if meta.mode() & 0o077 != 0 {
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))?;
        }
    }
    #[cfg(not(unix))]
    builder.create(&dir)?;
    Ok(dir)
}

/// Removes the context files left by servers that are gone (see the module documentation). Quiet: a file it cannot
/// judge or remove stays.
pub(crate) fn sweep(home: &Path) {
    let Ok(entries) = fs::read_dir(home.join("run")) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let Some(server) = name.to_str().and_then(|n| n.split('-').next()).and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if server != std::process::id()
            && super::processes::process_alive(server) == Some(false)
            && !named_by_a_live_process(&path)
        {
            let _ = fs::remove_file(&path);
        }
    }
}

/// Whether a process on this machine has `ROSCOE_CONTEXT_FILE=<path>` in its environment (`true` when that cannot
/// be told).
fn named_by_a_live_process(path: &Path) -> bool {
    let Ok(processes) = fs::read_dir("/proc") else { return true };
    let wanted = format!("{VARIABLE}={}", path.display());
    processes.flatten().any(|process| {
        process.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
            && fs::read(process.path().join("environ"))
                .is_ok_and(|environ| environ.split(|b| *b == 0).any(|entry| entry == wanted.as_bytes()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_file_is_private_and_removed_when_dropped() {
        let home = tempfile::tempdir().unwrap();
        let file = ContextFile::create(home.path(), "n1", &serde_json::json!({"input": {"a": 1}})).unwrap();
        assert_eq!(fs::read_to_string(file.path()).unwrap(), r#"{"input":{"a":1}}"#);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(file.path()).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(fs::metadata(home.path().join("run")).unwrap().permissions().mode() & 0o777, 0o700);
        }
        let path = file.path().to_owned();
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn the_sweep_removes_only_files_of_servers_that_are_gone() {
        let home = tempfile::tempdir().unwrap();
        let mine = ContextFile::create(home.path(), "n1", &Value::Null).unwrap();
        let dir = home.path().join("run");
        // A pid beyond any pid_max is a server that is gone; pid 1 is one that lives.
        let gone = dir.join("4294967294-n2.json");
        let alive = dir.join("1-n3.json");
        for path in [&gone, &alive] {
            fs::write(path, "{}").unwrap();
        }
        sweep(home.path());
        assert!(!gone.exists());
        assert!(alive.exists());
        assert!(mine.path().exists());
    }
}
