//! cairn's home directory: `$CAIRN_HOME`, else `~/.cairn`, else a folder in the temporary directory.

use std::path::PathBuf;

/// The cairn home directory (not created here).
pub fn cairn_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CAIRN_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(home) => PathBuf::from(home).join(".cairn"),
        None => std::env::temp_dir().join("cairn"),
    }
}
