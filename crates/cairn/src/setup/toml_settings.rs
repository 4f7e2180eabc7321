//! A TOML settings file being edited with `toml_edit`, which keeps the user's comments, spacing and order: a table
//! of tables (`[mcp_servers.<name>]`) gets keys set or removed one at a time, each change recorded. A file that does
//! not parse, or a key on the way that is not a table, is refused untouched.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, Value};

use super::edit::{Change, Edit};

/// A TOML settings file and the changes made to it so far.
#[derive(Debug)]
pub(crate) struct TomlSettings {
    path: PathBuf,
    document: DocumentMut,
    changes: Vec<Change>,
}

/// A value as plain TOML, without the spacing and comments around it (for comparing and reporting).
fn plain(value: &Value) -> String {
    match value {
        Value::Array(items) => format!("[{}]", items.iter().map(plain).collect::<Vec<_>>().join(", ")),
        other => {
            let mut other = other.clone();
            other.decor_mut().clear();
            other.to_string()
        }
    }
}

impl TomlSettings {
    /// The file at `path` (empty when it does not exist), or an error saying why it cannot be edited.
    pub(crate) fn open(path: &Path) -> anyhow::Result<TomlSettings> {
        let document = match std::fs::read_to_string(path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => DocumentMut::new(),
            Err(err) => anyhow::bail!("could not read {}: {err}", path.display()),
            Ok(text) => text.parse::<DocumentMut>().map_err(|err| {
                anyhow::anyhow!(
                    "{} is not valid TOML ({}); fix it, then run setup again (nothing was changed)",
                    path.display(),
                    err.to_string().trim()
                )
            })?,
        };
        Ok(TomlSettings { path: path.to_owned(), document, changes: Vec::new() })
    }

    /// The table `[group.name]`, created when missing (`group` as a dotted parent with no header of its own).
    fn table(&mut self, group: &str, name: &str) -> anyhow::Result<&mut Table> {
        let path = self.path.display().to_string();
        let refuse = |key: String| {
            anyhow::anyhow!("{path}: `{key}` is not a table; fix it, then run setup again (nothing was changed)")
        };
        let parent = self.document.entry(group).or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        });
        let parent = parent.as_table_mut().ok_or_else(|| refuse(group.to_owned()))?;
        let table = parent.entry(name).or_insert_with(|| Item::Table(Table::new()));
        table.as_table_mut().ok_or_else(|| refuse(format!("{group}.{name}")))
    }

    /// Sets `key` of `[group.name]` to `value`.
    pub(crate) fn set(&mut self, group: &str, name: &str, key: &str, value: Value) -> anyhow::Result<()> {
        let table = self.table(group, name)?;
        let change = match table.get(key).and_then(Item::as_value) {
            Some(old) if plain(old) == plain(&value) => None,
            Some(old) => Some(Change::Changed(format!("{group}.{name}.{key}"), plain(&value), plain(old))),
            None => Some(Change::Added(format!("{group}.{name}.{key}"), plain(&value))),
        };
        if change.is_some() {
            table.insert(key, Item::Value(value));
        }
        self.changes.extend(change);
        Ok(())
    }

    /// Removes `key` of `[group.name]` if it is there.
    pub(crate) fn remove(&mut self, group: &str, name: &str, key: &str) -> anyhow::Result<()> {
        if let Some(old) = self.table(group, name)?.remove(key) {
            let old = old.as_value().map(plain).unwrap_or_else(|| old.to_string().trim().to_owned());
            self.changes.push(Change::Removed(format!("{group}.{name}.{key}"), old));
        }
        Ok(())
    }

    /// The planned edit.
    pub(crate) fn finish(self) -> Edit {
        Edit { path: self.path, changes: self.changes, content: self.document.to_string() }
    }
}
