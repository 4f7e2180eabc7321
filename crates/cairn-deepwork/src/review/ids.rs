//! Review ids (spec §9.7): `<rule part>--<paths part>--<hash>`.
//!
//! An id names one review of one rule over one set of files *with their current contents*, so it must come out equal
//! to DeepWork's for the same rule, files and contents (agents and `.passed` markers carry ids across tools and
//! servers):
//! * rule part: the rule name with every character outside `[A-Za-z0-9._-]` replaced by `-`;
//! * paths part: each file with `/` replaced by `-`, sorted, joined by `_AND_`; `<N>_files` when that is longer than
//!   100 characters; `inline` for a task without files;
//! * hash: the first 12 hex digits of a SHA-256 over the files' texts (sorted by path; read as UTF-8 with CRLF and CR
//!   turned into LF, `MISSING` for a file that cannot be read or is not UTF-8 — and for one that is not a regular
//!   file or leads out of the project, which is never read), then, for a review of text, the bytes `\0INLINE\0` and
//!   the text.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::confined;
use crate::review_rule::ReviewTask;

/// Longest paths part kept as it is (in characters).
const MAX_PATHS_PART: usize = 100;

/// What an unreadable or non-UTF-8 file contributes to the hash.
const MISSING: &[u8] = b"MISSING";

/// Separates the files' texts from the reviewed text in the hash.
const INLINE_MARKER: &[u8] = b"\x00INLINE\x00";

/// The review id of `task`, reading its files (relative to `root`) as they are now.
pub fn review_id(task: &ReviewTask, root: &Path) -> String {
    format!("{}--{}--{}", rule_part(&task.rule_name), paths_part(&task.files), content_hash(task, root))
}

/// The rule name made safe for a file name.
pub(crate) fn rule_part(rule_name: &str) -> String {
    rule_name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect()
}

/// The files of a task, flattened into one file-name-friendly string.
pub(crate) fn paths_part(files: &[String]) -> String {
    if files.is_empty() {
        return "inline".to_owned();
    }
    let mut parts: Vec<String> = files.iter().map(|file| file.replace('/', "-")).collect();
    parts.sort();
    let joined = parts.join("_AND_");
    if joined.chars().count() > MAX_PATHS_PART { format!("{}_files", files.len()) } else { joined }
}

/// First 12 hex digits of the SHA-256 over the task's contents.
fn content_hash(task: &ReviewTask, root: &Path) -> String {
    let mut files: Vec<&String> = task.files.iter().collect();
    files.sort();
    let mut hasher = Sha256::new();
    for file in files {
        match read_text(&root.join(file), root) {
            Some(text) => hasher.update(text.as_bytes()),
            None => hasher.update(MISSING),
        }
    }
    if let Some(inline) = &task.inline_content {
        hasher.update(INLINE_MARKER);
        hasher.update(inline.as_bytes());
    }
    let hex = format!("{:x}", hasher.finalize());
    hex[..12].to_owned()
}

/// A file's text as Python's text mode reads it: UTF-8, with CRLF and lone CR turned into LF. `None` when the file
/// cannot be read, is not UTF-8, is not a regular file or resolves outside `root`.
fn read_text(path: &Path, root: &Path) -> Option<String> {
    let text = confined::read_text(path, Some(root), None).ok()?;
    Some(universal_newlines(text))
}

/// CRLF and lone CR become LF.
pub(crate) fn universal_newlines(text: String) -> String {
    if !text.contains('\r') {
        return text;
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn task(rule: &str, files: &[&str], inline: Option<&str>) -> ReviewTask {
        ReviewTask {
            inline_content: inline.map(str::to_owned),
            source_file: PathBuf::from("/x/.deepreview"),
            source_line: 1,
            ..ReviewTask::of_files(rule, files.iter().map(|f| (*f).to_owned()).collect())
        }
    }

    #[test]
    fn missing_file_hashes_as_missing() {
        let root = tempfile::tempdir().unwrap();
        let id = review_id(&task("r", &["nope.md"], None), root.path());
        assert_eq!(id, "r--nope.md--8af1d328d75e");
    }

    #[test]
    fn verified_file_content_hash() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("docs")).unwrap();
        std::fs::write(root.path().join("docs/competitors.md"), "# Competitors\n- Notion\n- Evernote\n").unwrap();
        let id = review_id(&task("markdown_quality", &["docs/competitors.md"], None), root.path());
        assert_eq!(id, "markdown_quality--docs-competitors.md--9ec8d7fe635c");
    }

    #[test]
    fn crlf_and_cr_hash_like_lf() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.md"), "# Competitors\r\n- Notion\r- Evernote\r\n").unwrap();
        assert_eq!(review_id(&task("r", &["a.md"], None), root.path()), "r--a.md--9ec8d7fe635c");
    }

    #[test]
    fn non_utf8_and_directories_hash_as_missing() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("bin"), [0xff, 0xfe, 0x00]).unwrap();
        std::fs::create_dir(root.path().join("dir")).unwrap();
        assert!(review_id(&task("r", &["bin"], None), root.path()).ends_with("--8af1d328d75e"));
        assert!(review_id(&task("r", &["dir"], None), root.path()).ends_with("--8af1d328d75e"));
    }

    #[test]
    fn verified_inline_hash() {
        let root = tempfile::tempdir().unwrap();
        let id = review_id(&task("step_choose_topic_output_topic", &[], Some("Rust MCP servers")), root.path());
        assert_eq!(id, "step_choose_topic_output_topic--inline--a1f53798a594");
    }

    #[test]
    fn files_are_hashed_in_path_order() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a"), "# Competitors\n").unwrap();
        std::fs::write(root.path().join("b"), "- Notion\n- Evernote\n").unwrap();
        let forward = review_id(&task("r", &["a", "b"], None), root.path());
        let backward = review_id(&task("r", &["b", "a"], None), root.path());
        assert_eq!(forward, "r--a_AND_b--9ec8d7fe635c");
        assert_eq!(forward, backward);
    }

    #[test]
    fn rule_part_replaces_unsafe_characters() {
        assert_eq!(rule_part("api_doc DeepSchema Compliance"), "api_doc-DeepSchema-Compliance");
        assert_eq!(rule_part("a.b_c-D9/é:x"), "a.b_c-D9---x");
    }

    #[test]
    fn paths_part_flattens_sorts_and_joins() {
        let files = vec!["src/b.rs".to_owned(), "docs/api/users.md".to_owned()];
        assert_eq!(paths_part(&files), "docs-api-users.md_AND_src-b.rs");
        // Sorted after flattening: "a-b" < "a-b-c" although "a-b/c" < "a/b" before.
        let files = vec!["a/b".to_owned(), "a-b/c".to_owned()];
        assert_eq!(paths_part(&files), "a-b_AND_a-b-c");
        assert_eq!(paths_part(&[]), "inline");
    }

    #[test]
    fn long_paths_part_becomes_a_count() {
        let files: Vec<String> = (0..12).map(|i| format!("some/long/directory/file_{i:02}.md")).collect();
        assert_eq!(paths_part(&files), "12_files");
        let exactly_100 = "x".repeat(100);
        assert_eq!(paths_part(std::slice::from_ref(&exactly_100)), exactly_100);
        assert_eq!(paths_part(&["y".repeat(101)]), "1_files");
    }
}
