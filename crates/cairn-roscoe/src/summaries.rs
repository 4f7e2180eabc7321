//! What `list_workflows` shows of each file (its `name`, `description`, or why it cannot be read) and the workflows
//! its subworkflow nodes call (for lint's call graph), remembered per file and read again only when the file's size,
//! modification time or inode changes, so a scope of a thousand workflows is not parsed again on every call.
//!
//! A file modified in the last 100 ms is not remembered: a second write within the file system's timestamp
//! granularity could leave size and time unchanged.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::definition::Trigger;
use crate::error::Error;
use crate::references::subworkflow_targets;
use crate::sources::Located;

/// How recent a modification must be for its file not to be remembered.
const SETTLE: Duration = Duration::from_millis(100);

/// The listed fields of one workflow file.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Heading {
    /// `name`, when the file has a string one.
    pub(crate) name: Option<String>,
    /// `description`, when the file has a string one.
    pub(crate) description: Option<String>,
    /// Why the file cannot be read as a workflow mapping.
    pub(crate) error: Option<String>,
    /// The workflow ids its subworkflow nodes call.
    pub(crate) calls: Vec<String>,
    /// Its triggers, when it has some and is valid.
    pub(crate) triggers: Vec<Trigger>,
}

/// size, mtime (s, ns), inode.
type Stamp = (u64, i64, i64, u64);

/// Headings by file path, with the stamp each was read at.
#[derive(Debug, Default)]
pub(crate) struct Summaries {
    entries: Mutex<HashMap<PathBuf, (Stamp, Heading)>>,
}

impl Summaries {
    /// The heading of `located`, from memory when the file is unchanged.
    pub(crate) fn heading(&self, located: &Located) -> Heading {
        let meta = std::fs::metadata(&located.path).ok();
        let stamp = meta.as_ref().map(|m| (m.len(), m.mtime(), m.mtime_nsec(), m.ino()));
        if let Some(stamp) = stamp {
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((seen, heading)) = entries.get(&located.path)
                && *seen == stamp
            {
                return heading.clone();
            }
        }
        let heading = read(located);
        let settled = meta
            .and_then(|m| m.modified().ok())
            .and_then(|modified| SystemTime::now().duration_since(modified).ok())
            .is_some_and(|age| age > SETTLE);
        if let (Some(stamp), true) = (stamp, settled) {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            entries.insert(located.path.clone(), (stamp, heading.clone()));
        }
        heading
    }
}

/// Reads and parses the file.
fn read(located: &Located) -> Heading {
    let parsed = located.read().and_then(|text| {
        let doc = crate::definition::read_yaml(&text).map_err(|message| Error::InvalidConfig {
            message: format!("not valid YAML: {message}"),
            details: Vec::new(),
        })?;
        Ok((doc, text))
    });
    match parsed {
        Ok((doc, text)) => {
            let field = |key: &str| doc.value.get(key).and_then(Value::as_str).map(str::to_owned);
            // Only a file with triggers is validated (for them).
            let triggers = match doc.value.get("triggers") {
                Some(_) => crate::definition::parse(&text, Some(&located.id)).map(|w| w.triggers).unwrap_or_default(),
                None => Vec::new(),
            };
            Heading {
                name: field("name"),
                description: field("description"),
                error: (!doc.value.is_object()).then(|| "the file is not a YAML mapping".to_owned()),
                calls: subworkflow_targets(&doc.value),
                triggers,
            }
        }
        Err(e) => Heading { error: Some(e.to_string()), ..Heading::default() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Source;

    fn located(path: PathBuf) -> Located {
        Located { id: "w".into(), source: Source::Global, path }
    }

    fn age(path: &std::path::Path) {
        let old = SystemTime::now() - Duration::from_secs(5);
        std::fs::File::options().write(true).open(path).unwrap().set_modified(old).unwrap();
    }

    #[test]
    fn a_changed_file_is_read_again_and_an_unchanged_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.yaml");
        std::fs::write(&path, "name: w\ndescription: first\n").unwrap();
        age(&path);
        let summaries = Summaries::default();
        let w = located(path.clone());
        assert_eq!(summaries.heading(&w).description.as_deref(), Some("first"));
        assert_eq!(summaries.entries.lock().unwrap().len(), 1, "a settled file is remembered");

        // An atomic replacement (new inode) with the same size and an old time is still seen.
        let next = dir.path().join("next.yaml");
        std::fs::write(&next, "name: w\ndescription: other\nnodes: { c: { type: subworkflow, config: { workflow: x } } }\n").unwrap();
        age(&next);
        std::fs::rename(&next, &path).unwrap();
        let heading = summaries.heading(&w);
        assert_eq!(heading.description.as_deref(), Some("other"));
        assert_eq!(heading.calls, ["x"]);

        // A fresh edit is read but not remembered until it settles.
        std::fs::write(&path, "[not a mapping]\n").unwrap();
        assert_eq!(summaries.heading(&w).error.as_deref(), Some("the file is not a YAML mapping"));
        assert!(summaries.entries.lock().unwrap().get(&path).is_some_and(|(_, h)| h.error.is_none()));
    }
}
