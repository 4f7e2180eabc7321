//! One planned change of a settings file: the keys it adds, changes or removes, and the file's new text; reported
//! as a short list and written in one step (a new file renamed over the old), or not at all when nothing changes.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context;

/// What happens to one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A new key and its value.
    Added(String, String),
    /// A key whose value changes: the new value and the old.
    Changed(String, String, String),
    /// A key that goes (it belongs to another kind of server), with its old value.
    Removed(String, String),
}

/// A planned edit of the settings file at `path`.
#[derive(Debug)]
pub struct Edit {
    /// The file.
    pub path: PathBuf,
    /// What changes, in order.
    pub changes: Vec<Change>,
    /// The file's new text.
    pub content: String,
}

impl Edit {
    /// The report printed for this edit: the changes, or that there is nothing to change.
    pub fn report(&self, dry_run: bool) -> String {
        let path = self.path.display();
        if self.changes.is_empty() {
            return format!("{path}: already set up; nothing to change.\n");
        }
        let mut out = format!("{path}:\n");
        for change in &self.changes {
            let _ = match change {
                Change::Added(key, value) => writeln!(out, "  + {key} = {value}"),
                Change::Changed(key, value, old) => writeln!(out, "  ~ {key} = {value} (was {old})"),
                Change::Removed(key, old) => writeln!(out, "  - {key} (was {old})"),
            };
        }
        if dry_run {
            out.push_str("Dry run: nothing was written.\n");
        }
        out
    }

    /// Writes the new text (creating the folder if needed) when something changes.
    pub fn write(&self) -> anyhow::Result<()> {
        if self.changes.is_empty() {
            return Ok(());
        }
        let folder = self.path.parent().context("a settings file has a folder")?;
        std::fs::create_dir_all(folder).with_context(|| format!("could not create {}", folder.display()))?;
        let name = self.path.file_name().context("a settings file has a name")?.to_string_lossy();
        let temporary = folder.join(format!(".{name}.cairn-setup"));
        std::fs::write(&temporary, &self.content).with_context(|| format!("could not write {}", temporary.display()))?;
        std::fs::rename(&temporary, &self.path).with_context(|| format!("could not replace {}", self.path.display()))
    }
}
