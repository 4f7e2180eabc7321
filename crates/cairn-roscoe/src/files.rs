//! File primitives the workflow readers and writers share: reading a regular file with a size cap, atomic writes, and
//! moving or copying an asset directory.
//!
//! A read never blocks and never runs away: the path is opened without waiting (a FIFO or a device would otherwise
//! block the open or stream forever), the opened file must be a regular file, and its size is checked before a
//! byte is read and capped while reading (a file can grow after the check).
//!
//! An atomic write goes to a temp file in the target's own directory and is renamed over the target, so a reader sees
//! the old or the new text, never half of it. A target marked read-only is refused rather than silently replaced (a
//! rename would otherwise succeed in a writable directory). The file keeps the mode it had; a new one is 0644 like
//! every file a person writes (the temp file is created private, which a workflow is not). Nothing here knows about
//! workflows or sources.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::Path;

/// Opens `path` (following links) for reading when it is a regular file; otherwise an `InvalidInput` error saying
/// what it is. Never blocks: a FIFO is opened without waiting for a writer, then refused.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let what = if kind.is_dir() { "a directory" } else { "not a regular file (a device, FIFO or socket)" };
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("it is {what}, not a file")))
}

/// The bytes of the regular file at `path`; a `FileTooLarge` error when it holds more than `max` bytes, found
/// before reading it.
pub(crate) fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let too_large = |len: u64| {
        io::Error::new(io::ErrorKind::FileTooLarge, format!("it is {len} bytes, more than the {max} bytes allowed"))
    };
    let len = file.metadata()?.len();
    if len > max {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Writes `text` to `path` through a temp file in the same directory and a rename; the file keeps its mode, and a
/// new one is 0644.
pub(crate) fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    let existing = fs::metadata(path).ok();
    if let Some(meta) = &existing
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
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = existing.map_or(0o644, |meta| meta.permissions().mode() & 0o7777);
        temp.as_file().set_permissions(fs::Permissions::from_mode(mode))?;
    }
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
    fn only_regular_files_are_read_and_only_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        fs::write(&path, "12345").unwrap();
        assert_eq!(read_regular(&path, 5).unwrap(), b"12345");
        assert_eq!(read_regular(&path, 4).unwrap_err().kind(), io::ErrorKind::FileTooLarge);
        let err = read_regular(dir.path(), 5).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("directory"), "{err}");
        #[cfg(unix)]
        {
            // A FIFO with no writer and an endless device: refused at once, neither waited on nor read.
            let fifo = dir.path().join("fifo.yaml");
            let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
            assert!(status.success());
            assert_eq!(read_regular(&fifo, 5).unwrap_err().kind(), io::ErrorKind::InvalidInput);
            let zero = dir.path().join("zero.yaml");
            std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
            assert_eq!(read_regular(&zero, 5).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_is_0644_and_a_replaced_one_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o7777;
        let path = dir.path().join("new.yaml");
        write_atomic(&path, "a").unwrap();
        assert_eq!(mode(&path), 0o644);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, "b").unwrap();
        assert_eq!(mode(&path), 0o640);
        assert_eq!(fs::read_to_string(&path).unwrap(), "b");
    }

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
