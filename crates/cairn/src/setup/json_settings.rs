//! A JSON settings file being edited: read whole (a missing file is an empty object), keys set, removed or added to
//! lists one at a time with each change recorded, and written back with two-space indents and the keys in their
//! order. A file that is not a JSON object, or a key on the way that is not an object, is refused untouched.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::edit::{Change, Edit};

/// A JSON settings file and the changes made to it so far.
#[derive(Debug)]
pub(crate) struct JsonSettings {
    path: PathBuf,
    root: Map<String, Value>,
    changes: Vec<Change>,
}

impl JsonSettings {
    /// The file at `path` (empty when it does not exist), or an error saying why it cannot be edited.
    pub(crate) fn open(path: &Path) -> anyhow::Result<JsonSettings> {
        let root = match std::fs::read_to_string(path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Map::new(),
            Err(err) => anyhow::bail!("could not read {}: {err}", path.display()),
            Ok(text) if text.trim().is_empty() => Map::new(),
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(root)) => root,
                Ok(_) => anyhow::bail!("{} does not hold a JSON object; fix it, then run setup again (nothing was changed)", path.display()),
                Err(err) => anyhow::bail!(
                    "{} is not valid JSON ({err}); fix it, then run setup again (nothing was changed)",
                    path.display()
                ),
            },
        };
        Ok(JsonSettings { path: path.to_owned(), root, changes: Vec::new() })
    }

    /// The object at `keys`, created (with the objects on the way) when missing.
    fn object(&mut self, keys: &[&str]) -> anyhow::Result<&mut Map<String, Value>> {
        let mut here = &mut self.root;
        for (depth, key) in keys.iter().enumerate() {
            let value = here.entry((*key).to_owned()).or_insert_with(|| Value::Object(Map::new()));
            here = match value {
                Value::Object(object) => object,
                other => anyhow::bail!(
                    "{}: `{}` is {other}, not an object; fix it, then run setup again (nothing was changed)",
                    self.path.display(),
                    keys[..=depth].join(".")
                ),
            };
        }
        Ok(here)
    }

    /// Sets the key at `path` (the last of `keys`) to `value`.
    pub(crate) fn set(&mut self, keys: &[&str], value: Value) -> anyhow::Result<()> {
        let (last, parents) = keys.split_last().expect("a key");
        let object = self.object(parents)?;
        let change = match object.get(*last) {
            Some(old) if *old == value => None,
            Some(old) => Some(Change::Changed(keys.join("."), value.to_string(), old.to_string())),
            None => Some(Change::Added(keys.join("."), value.to_string())),
        };
        object.insert((*last).to_owned(), value);
        self.changes.extend(change);
        Ok(())
    }

    /// Removes the key at `keys` if it is there.
    pub(crate) fn remove(&mut self, keys: &[&str]) -> anyhow::Result<()> {
        let (last, parents) = keys.split_last().expect("a key");
        if let Some(old) = self.object(parents)?.shift_remove(*last) {
            self.changes.push(Change::Removed(keys.join("."), old.to_string()));
        }
        Ok(())
    }

    /// Adds `item` to the list at `keys` (created when missing) unless it is there already.
    pub(crate) fn add_to_list(&mut self, keys: &[&str], item: &str) -> anyhow::Result<()> {
        let (last, parents) = keys.split_last().expect("a key");
        let path = self.path.display().to_string();
        let object = self.object(parents)?;
        let list = object.entry((*last).to_owned()).or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = list else {
            anyhow::bail!("{path}: `{}` is {list}, not a list; fix it, then run setup again (nothing was changed)", keys.join("."))
        };
        if !list.iter().any(|v| v.as_str() == Some(item)) {
            list.push(Value::String(item.to_owned()));
            self.changes.push(Change::Added(format!("{}[]", keys.join(".")), Value::String(item.to_owned()).to_string()));
        }
        Ok(())
    }

    /// The planned edit.
    pub(crate) fn finish(self) -> Edit {
        let mut content = serde_json::to_string_pretty(&Value::Object(self.root)).expect("JSON serializes");
        content.push('\n');
        Edit { path: self.path, changes: self.changes, content }
    }
}
