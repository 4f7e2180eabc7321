//! cairn's home directory: `$CAIRN_HOME`, else `~/.cairn`, else a folder in the temporary directory. It holds the
//! database (token hashes, runs, work items) and the server's configuration, so it is private to its owner: created
//! `0700`, and tightened to `0700`, with a log line, when group or others may enter it.

use std::path::{Path, PathBuf};

/// The cairn home directory, created private when missing and made private when it is not (see the module doc);
/// a home that cannot be created or changed is left for the first command that writes there to report.
pub fn cairn_home() -> PathBuf {
    let home = home_path();
    keep_private(&home);
    home
}

fn home_path() -> PathBuf {
    if let Some(home) = std::env::var_os("CAIRN_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(home) => PathBuf::from(home).join(".cairn"),
        None => std::env::temp_dir().join("cairn"),
    }
}

#[cfg(unix)]
fn keep_private(home: &Path) {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let Ok(found) = std::fs::metadata(home) else {
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(home);
        return;
    };
    let mode = found.permissions().mode() & 0o777;
    if found.is_dir() && mode & 0o077 != 0 {
        match std::fs::set_permissions(home, std::fs::Permissions::from_mode(mode & 0o700)) {
            Ok(()) => tracing::warn!(
                "{} was open to others (mode {mode:o}); made it private (mode {:o}): it holds cairn's database",
                home.display(),
                mode & 0o700
            ),
            Err(error) => tracing::warn!("{} is open to others (mode {mode:o}) and cannot be made private: {error}", home.display()),
        }
    }
}

#[cfg(not(unix))]
fn keep_private(home: &Path) {
    let _ = std::fs::create_dir_all(home);
}
