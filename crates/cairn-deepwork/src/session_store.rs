//! Where session state lives on disk, and how it is read and written safely.
//!
//! Layout (under the project root the call runs against):
//! `.deepwork/tmp/sessions/<platform>/session-<id>/state.json` (main stack), `agent_<agent id>.json` (a sub-agent's
//! stack) and `jobs/<job>/job.yml` (session jobs). Every tool call that reads and then writes a session holds an
//! exclusive lock on the session's `.lock` file for the whole call, so two servers on one project never interleave.
//! Files are replaced atomically (temporary file in the same directory, fsync, rename): a kill at any instant leaves
//! the old or the new state. A file that cannot be parsed is reported, never treated as empty.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::confined;
use crate::session::StackFile;

/// Session files of one platform under one project root.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

/// An exclusive lock on one session, released when dropped.
#[derive(Debug)]
pub struct SessionLock {
    _file: File,
}

impl SessionStore {
    /// The store for `platform` under `root`.
    pub fn new(root: &Path, platform: &str) -> Self {
        SessionStore { dir: root.join(".deepwork").join("tmp").join("sessions").join(platform) }
    }

    /// `session-<id>/`.
    pub fn session_dir(&self, session_id: &str) -> PathBuf {
        self.dir.join(format!("session-{session_id}"))
    }

    /// The stack file of the main stack or of a sub-agent.
    pub fn stack_path(&self, session_id: &str, agent_id: Option<&str>) -> PathBuf {
        let name = match agent_id {
            Some(agent) => format!("agent_{agent}.json"),
            None => "state.json".to_owned(),
        };
        self.session_dir(session_id).join(name)
    }

    /// Directory of a session job.
    pub fn session_job_dir(&self, session_id: &str, job_name: &str) -> PathBuf {
        self.session_dir(session_id).join("jobs").join(job_name)
    }

    /// Takes the session's lock, waiting for any other holder (another call or another server) to finish.
    pub fn lock(&self, session_id: &str) -> std::io::Result<SessionLock> {
        let dir = self.session_dir(session_id);
        std::fs::create_dir_all(&dir)?;
        let file = File::options().create(true).truncate(false).write(true).open(dir.join(".lock"))?;
        file.lock()?;
        Ok(SessionLock { _file: file })
    }

    /// Reads a stack; a missing file is an empty stack, a damaged one an error naming the file.
    pub fn read(&self, session_id: &str, agent_id: Option<&str>) -> Result<StackFile, String> {
        read_stack(&self.stack_path(session_id, agent_id))
    }

    /// Replaces a stack file atomically.
    pub fn write(&self, session_id: &str, agent_id: Option<&str>, stack: &StackFile) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(stack).expect("state serializes");
        text.push('\n');
        write_atomic(&self.stack_path(session_id, agent_id), text.as_bytes(), Durability::Synced)
    }

    /// Agent ids that have a stack file in this session, sorted.
    pub fn agent_ids(&self, session_id: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.session_dir(session_id)) else { return Vec::new() };
        let mut ids: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                Some(name.strip_prefix("agent_")?.strip_suffix(".json")?.to_owned())
            })
            .collect();
        ids.sort();
        ids
    }
}

/// Reads one stack file (see [`SessionStore::read`]).
pub fn read_stack(path: &Path) -> Result<StackFile, String> {
    // Never a FIFO or a device: a call must not wait for a writer or read forever.
    let text = match confined::read_text(path, None, None) {
        Ok(text) => text,
        Err(err) if err.is_not_found() => return Ok(StackFile::default()),
        Err(err) => return Err(format!("Could not read session state file {}: {err}", path.display())),
    };
    serde_json::from_str(&text).map_err(|err| {
        format!(
            "Session state file {} is corrupt ({err}). It was left as it is: fix or delete it, then start the \
             workflow again (or use another session_id).",
            path.display()
        )
    })
}

/// Whether a write must reach the disk before the file is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync before the rename: the state survives a crash of the machine, not only of the process.
    Synced,
    /// Rename only: enough for files that are derived and rewritten on the next change (status files).
    Replaced,
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so readers see the old or
/// the new content, never a mix.
pub fn write_atomic(path: &Path, bytes: &[u8], durability: Durability) -> std::io::Result<()> {
    let dir = path.parent().expect("state files live in a directory");
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new().prefix(".tmp").suffix(".tmp").tempfile_in(dir)?;
    temp.write_all(bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Temporary files are created private; state files are ordinary project files.
        temp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    if durability == Durability::Synced {
        temp.as_file().sync_all()?;
    }
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_is_empty_and_corrupt_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::new(root.path(), "claude");
        assert!(store.read("s", None).unwrap().workflow_stack.is_empty());
        let _lock = store.lock("s").unwrap();
        std::fs::write(store.stack_path("s", None), "{not json").unwrap();
        let err = store.read("s", None).unwrap_err();
        assert!(err.contains("state.json is corrupt"), "{err}");
    }

    #[test]
    fn writes_are_readable_and_agents_are_listed() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::new(root.path(), "claude");
        store.write("s", Some("b"), &StackFile::default()).unwrap();
        store.write("s", Some("a"), &StackFile::default()).unwrap();
        store.write("s", None, &StackFile::default()).unwrap();
        assert_eq!(store.agent_ids("s"), ["a", "b"]);
        assert!(store.read("s", Some("a")).is_ok());
    }
}
