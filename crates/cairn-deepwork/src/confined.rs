//! Files whose names come from a project's files or from an agent's arguments: read only inside the project, only
//! regular files, only so much; and cairn's scratch directories written only inside the project.
//!
//! A cloned repository is not trusted: its `job.yml`, `.deepreview` and DeepSchema files, and the files they name,
//! could point anywhere through a `..`, an absolute path or a symbolic link, and a file could be a directory, a FIFO
//! or a link to `/dev/zero`. Every such read goes through here:
//!
//! * **Inside the project.** The path is resolved to its real path (every symbolic link followed); when it was found
//!   inside the project (see [`boundary_for`]) the real path must lie inside the project root's real path, otherwise
//!   the read is refused ([`Refused::Outside`]). A link inside the project to another place inside it is fine.
//!   Files of cairn's own folders and of folders the user configured (`DEEPWORK_ADDITIONAL_*`) have no such bound.
//! * **Regular files only.** A directory, FIFO, socket or device is refused before it is opened, so nothing blocks
//!   waiting for a writer or reads forever.
//! * **Bounded.** Definition files (`job.yml`, `.deepreview`, DeepSchemas, instructions files) may be at most
//!   [`MAX_DEFINITION_BYTES`]; a larger one is refused from its size alone, without being read.
//! * **Writes stay home.** Before cairn creates or cleans a scratch directory under `.deepwork/tmp`, [`check_inside`]
//!   makes sure it (or, while it does not exist, its nearest existing parent) resolves inside the project: a
//!   repository shipping `.deepwork/tmp/review_instructions` as a link to a directory of the user's must not get cairn
//!   to write there, or to delete the stale-looking `.md` files it finds there.
//!
//! [`normalize`] resolves `.` and `..` lexically, as every path a project names is judged before it is read.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The most bytes a `job.yml`, `.deepreview`, DeepSchema manifest or instructions file may have (1 MiB).
pub(crate) const MAX_DEFINITION_BYTES: u64 = 1024 * 1024;

/// Why a file was not read.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Its real path is outside the project root.
    Outside {
        /// Where the path leads once every symbolic link is followed.
        real: PathBuf,
        /// The project root it had to stay in.
        root: PathBuf,
    },
    /// It is a directory.
    Directory,
    /// It is a FIFO, socket or device.
    NotRegular,
    /// It is larger than the limit.
    TooLarge {
        /// Its size in bytes.
        len: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// Its bytes are not UTF-8 text.
    NotUtf8,
    /// The file system said no (a missing file is [`std::io::ErrorKind::NotFound`]).
    Io(std::io::Error),
}

impl Refused {
    /// Whether the file (or the target of a link) does not exist.
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, Refused::Io(err) if err.kind() == std::io::ErrorKind::NotFound)
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Outside { real, root } => write!(
                f,
                "it resolves to {}, outside the project root {}; files outside the project are never read or \
                 written (a symbolic link must point inside the project too)",
                real.display(),
                root.display()
            ),
            Refused::Directory => f.write_str("it is a directory, not a file"),
            Refused::NotRegular => f.write_str("it is not a regular file (it is a FIFO, socket or device)"),
            Refused::TooLarge { len, limit } => {
                write!(f, "it is too large: {len} bytes, over the limit of {limit} bytes")
            }
            Refused::NotUtf8 => f.write_str("it is not UTF-8 text"),
            Refused::Io(err) => write!(f, "{err}"),
        }
    }
}

impl From<std::io::Error> for Refused {
    fn from(err: std::io::Error) -> Self {
        Refused::Io(err)
    }
}

/// The directory a file found at `path` must resolve inside: `root` when `path` lies (as written, `..` resolved)
/// inside the project, `None` (anywhere) for cairn's own and user-configured folders outside it.
pub(crate) fn boundary_for<'a>(path: &Path, root: &'a Path) -> Option<&'a Path> {
    normalize(path).starts_with(root).then_some(root)
}

/// The real path of `path` (every symbolic link followed), refused when `boundary` is given and it lies outside it.
pub(crate) fn resolve(path: &Path, boundary: Option<&Path>) -> Result<PathBuf, Refused> {
    let real = std::fs::canonicalize(path)?;
    if let Some(boundary) = boundary {
        let real_root = std::fs::canonicalize(boundary).unwrap_or_else(|_| boundary.to_path_buf());
        if !real.starts_with(&real_root) {
            return Err(Refused::Outside { real, root: boundary.to_path_buf() });
        }
    }
    Ok(real)
}

/// Checks that `path`, or while it does not exist its nearest existing ancestor, resolves inside `root`: the test
/// before cairn creates, writes or cleans up something at `path`.
pub(crate) fn check_inside(path: &Path, root: &Path) -> Result<(), Refused> {
    let mut probe = path;
    loop {
        match resolve(probe, Some(root)) {
            Err(err) if err.is_not_found() => match probe.parent() {
                Some(parent) => probe = parent,
                None => return Err(err),
            },
            outcome => return outcome.map(|_| ()),
        }
    }
}

/// Opens a regular file at `path` (see [`resolve`]) and returns it with its size.
fn open(path: &Path, boundary: Option<&Path>) -> Result<(File, u64), Refused> {
    let real = resolve(path, boundary)?;
    // Checked before opening: opening a FIFO waits for a writer.
    check_kind(&std::fs::metadata(&real)?)?;
    let file = File::open(&real)?;
    let metadata = file.metadata()?;
    check_kind(&metadata)?;
    Ok((file, metadata.len()))
}

fn check_kind(metadata: &std::fs::Metadata) -> Result<(), Refused> {
    if metadata.is_dir() {
        Err(Refused::Directory)
    } else if !metadata.is_file() {
        Err(Refused::NotRegular)
    } else {
        Ok(())
    }
}

/// The bytes of the regular file at `path`, resolving inside `boundary` when given, at most `limit` bytes when given
/// (a larger file is refused without being read).
pub(crate) fn read_bytes(path: &Path, boundary: Option<&Path>, limit: Option<u64>) -> Result<Vec<u8>, Refused> {
    let (file, len) = open(path, boundary)?;
    let limit = limit.unwrap_or(u64::MAX);
    if len > limit {
        return Err(Refused::TooLarge { len, limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // A file that grew since it was measured is still read no further than the limit.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(Refused::TooLarge { len: bytes.len() as u64, limit });
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text.
pub(crate) fn read_text(path: &Path, boundary: Option<&Path>, limit: Option<u64>) -> Result<String, Refused> {
    String::from_utf8(read_bytes(path, boundary, limit)?).map_err(|_| Refused::NotUtf8)
}

/// The first `max` bytes of the regular file at `path` (resolving inside `boundary` when given), and its size.
pub(crate) fn read_prefix(path: &Path, boundary: Option<&Path>, max: u64) -> Result<(Vec<u8>, u64), Refused> {
    let (file, len) = open(path, boundary)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(max)).unwrap_or(0));
    file.take(max).read_to_end(&mut bytes)?;
    Ok((bytes, len))
}

/// `path` with `.` and `..` components resolved lexically (symlinks are not consulted).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_dots() {
        assert_eq!(normalize(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
    }

    #[test]
    fn reads_inside_and_refuses_what_leads_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/a.md"), "inside").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(root.join("docs/a.md"), root.join("link.md")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("leak.md")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();

        assert_eq!(read_text(&root.join("link.md"), Some(&root), None).unwrap(), "inside");
        for path in [root.join("leak.md"), root.join("up/secret.txt"), root.join("../secret.txt")] {
            let err = read_text(&path, Some(&root), None).unwrap_err();
            assert!(matches!(err, Refused::Outside { .. }), "{}: {err}", path.display());
            let text = err.to_string();
            assert!(text.starts_with("it resolves to ") && text.contains("secret.txt, outside the project root"));
        }
        // Without a boundary (cairn's own folders) anything readable is read.
        assert_eq!(read_text(&root.join("leak.md"), None, None).unwrap(), "secret");
        assert!(read_text(&root.join("gone.md"), Some(&root), None).unwrap_err().is_not_found());
    }

    #[test]
    fn refuses_directories_devices_fifos_and_large_files_without_reading_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero")).unwrap();
        assert!(matches!(read_bytes(&root.join("zero"), None, None), Err(Refused::NotRegular)));
        assert!(matches!(read_bytes(root, None, None), Err(Refused::Directory)));
        let fifo = root.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(matches!(read_bytes(&fifo, Some(root), None), Err(Refused::NotRegular)));

        let big = root.join("big");
        File::create(&big).unwrap().set_len(50 * 1024 * 1024).unwrap();
        let err = read_text(&big, Some(root), Some(MAX_DEFINITION_BYTES)).unwrap_err();
        assert_eq!(err.to_string(), "it is too large: 52428800 bytes, over the limit of 1048576 bytes");
        let (prefix, len) = read_prefix(&big, Some(root), 10).unwrap();
        assert_eq!((prefix.len(), len), (10, 50 * 1024 * 1024));

        std::fs::write(root.join("latin1"), [0xe9]).unwrap();
        assert!(matches!(read_text(&root.join("latin1"), None, None), Err(Refused::NotUtf8)));
    }

    #[test]
    fn scratch_directories_must_resolve_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join(".deepwork")).unwrap();
        std::fs::create_dir(dir.path().join("notes")).unwrap();
        let scratch = root.join(".deepwork/tmp/review_instructions");
        check_inside(&scratch, &root).unwrap();
        std::os::unix::fs::symlink(dir.path().join("notes"), root.join(".deepwork/tmp")).unwrap();
        let err = check_inside(&scratch, &root).unwrap_err();
        assert!(matches!(err, Refused::Outside { .. }), "{err}");
    }

    #[test]
    fn the_boundary_follows_where_a_file_was_found() {
        let root = Path::new("/p");
        assert_eq!(boundary_for(Path::new("/p/.deepwork/jobs/j"), root), Some(root));
        assert_eq!(boundary_for(Path::new("/p/a/../../etc"), root), None);
        assert_eq!(boundary_for(Path::new("/elsewhere/standard_jobs/j"), root), None);
    }
}
