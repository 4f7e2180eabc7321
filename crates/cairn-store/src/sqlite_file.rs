//! Where a SQLite database lives, made ready before connecting: its folder created, and the file private to its
//! owner. The database holds token hashes, runs and work items, so a file cairn creates is `0600` and its new folders
//! `0700` whatever the umask; a file group or others may read is tightened to `0600`, with a log line (SQLite gives
//! its `-wal` and `-shm` files the mode of the database file; those already there are tightened too).

use std::path::Path;

use crate::Error;

/// Makes the file of the SQLite `url` ready (see the module doc); an in-memory database needs nothing.
pub(crate) fn prepare(url: &str) -> Result<(), Error> {
    let path = url.trim_start_matches("sqlite:").trim_start_matches("//");
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    if path.is_empty() || path == ":memory:" || query.split('&').any(|p| p == "mode=memory") {
        return Ok(());
    }
    let path = Path::new(path);
    if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
        create_folder(folder).map_err(|source| Error::Folder { path: folder.display().to_string(), source })?;
    }
    let creates = !query.split('&').any(|p| p.starts_with("mode=") && p != "mode=rwc");
    if creates && !path.exists() {
        // An empty file is an empty database; made here, it has the mode SQLite keeps.
        let _ = create_private(path);
    }
    for file in [path.to_owned(), with_suffix(path, "-wal"), with_suffix(path, "-shm")] {
        tighten(&file);
    }
    Ok(())
}

fn with_suffix(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

#[cfg(unix)]
fn create_folder(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(folder)
}

#[cfg(not(unix))]
fn create_folder(folder: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)
}

#[cfg(unix)]
fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map(drop)
}

#[cfg(not(unix))]
fn create_private(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Makes `file` readable by its owner only, when it is a regular file others may read or write.
#[cfg(unix)]
fn tighten(file: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(found) = std::fs::symlink_metadata(file) else { return };
    let mode = found.permissions().mode() & 0o777;
    if !found.is_file() || mode & 0o077 == 0 {
        return;
    }
    match std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode & 0o600)) {
        Ok(()) => tracing::warn!("{} was open to others (mode {mode:o}); made it private (mode 600)", file.display()),
        Err(error) => tracing::warn!("{} is open to others (mode {mode:o}) and cannot be made private: {error}", file.display()),
    }
}

#[cfg(not(unix))]
fn tighten(_file: &Path) {}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_database_and_its_folder_are_private_and_an_open_one_is_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("new/deeper/cairn.db");
        prepare(&format!("sqlite://{}?mode=rwc", file.display())).unwrap();
        assert_eq!((mode(&file), mode(file.parent().unwrap()), mode(&tmp.path().join("new"))), (0o600, 0o700, 0o700));

        let open = tmp.path().join("open.db");
        let wal = tmp.path().join("open.db-wal");
        for path in [&open, &wal] {
            std::fs::write(path, "").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        prepare(&format!("sqlite://{}", open.display())).unwrap();
        assert_eq!((mode(&open), mode(&wal)), (0o600, 0o600));

        let read_only = tmp.path().join("absent.db");
        prepare(&format!("sqlite://{}?mode=ro", read_only.display())).unwrap();
        assert!(!read_only.exists(), "a read-only URL creates nothing");
        prepare("sqlite::memory:").unwrap();
    }
}
