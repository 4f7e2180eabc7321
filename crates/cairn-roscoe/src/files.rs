//! File primitives the workflow writers share: atomic writes, and moving or copying an asset directory.
//!
//! An atomic write goes to a temp file in the target's own directory and is renamed over the target, so a reader sees
//! the old or the new text, never half of it. A target marked read-only is refused rather than silently replaced (a
//! rename would otherwise succeed in a writable directory). Nothing here knows about workflows or sources.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `text` to `path` through a temp file in the same directory and a rename.
pub(crate) fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    if let Ok(meta) = fs::metadata(path)
        && meta.permissions().readonly()
    {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the file is read-only",
        ));
    }
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no parent directory"))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Moves a directory tree, copying and deleting when a rename cannot cross file systems.
pub(crate) fn move_tree(from: &Path, to: &Path) -> io::Result<()> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)?;
    }
    match fs::rename(from, to) {
        Ok(()) => Ok(()),
        Err(_) => {
            copy_tree(from, to)?;
            fs::remove_dir_all(from)
        }
    }
}

/// Copies a directory tree (files and directories; symbolic links are copied as the files they point at).
pub(crate) fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        write_atomic(&path, "one").unwrap();
        write_atomic(&path, "two").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_atomic_refuses_a_read_only_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        fs::write(&path, "one").unwrap();
        let mut perms = fs::metadata(&path).unwrap().permissions();
        perms.set_readonly(true);
        fs::set_permissions(&path, perms).unwrap();
        let err = write_atomic(&path, "two").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(fs::read_to_string(&path).unwrap(), "one");
    }

    #[test]
    fn move_and_copy_trees() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::create_dir_all(a.join("scripts")).unwrap();
        fs::write(a.join("scripts/run.sh"), "echo hi").unwrap();
        let b = dir.path().join("x/b");
        copy_tree(&a, &b).unwrap();
        assert_eq!(
            fs::read_to_string(b.join("scripts/run.sh")).unwrap(),
            "echo hi"
        );
        let c = dir.path().join("y/c");
        move_tree(&a, &c).unwrap();
        assert!(!a.exists());
        assert!(c.join("scripts/run.sh").is_file());
    }
}
