//! Validated workflow definitions by their file's text: a start parses and validates a workflow file only when its
//! text changed since the last start of that workflow in this process. The text itself is the key, so an edit of any
//! byte is seen, and a definition that fails validation is never kept (every start reports it afresh).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::definition::{self, Workflow};
use crate::error::Error;

/// At most this many definitions are kept; past it the cache starts over.
const CACHE_LIMIT: usize = 256;

/// A validated workflow and its config as JSON (what a run snapshots).
type Validated = (Arc<Workflow>, Value);

/// Validated definitions by workflow id and file text.
#[derive(Debug, Default)]
pub(super) struct DefinitionCache {
    validated: Mutex<HashMap<(String, String), Validated>>,
}

impl DefinitionCache {
    /// Workflow `id` of file text `text`, validated, and its config; from the cache when this text was seen before.
    pub(super) fn validated(&self, id: &str, text: &str) -> Result<Validated, Error> {
        let key = (id.to_owned(), text.to_owned());
        if let Some(found) = self.validated.lock().expect("cache lock").get(&key) {
            return Ok(found.clone());
        }
        let workflow = definition::parse(text, Some(id)).map_err(|diagnostics| {
            let details: Vec<String> = diagnostics.iter().map(|d| d.to_string()).collect();
            let integrity = diagnostics.iter().any(|d| d.code.stage() == definition::Stage::Integrity);
            let code = if integrity { "integrity_error" } else { "invalid_config" };
            let message =
                format!("workflow '{id}' is not valid; fix every entry of `details` (validate_workflow shows them)");
            Error::refused(code, message).with("details", json!(details))
        })?;
        let config = definition::read_yaml(text).map(|doc| doc.value).map_err(|e| Error::refused("invalid_config", e))?;
        let entry = (Arc::new(workflow), config);
        let mut cache = self.validated.lock().expect("cache lock");
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(key, entry.clone());
        Ok(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = "name: w\ninitial: a\nnodes:\n  a:\n    type: ai_agent\n    config: { prompt: one }\n    transitions: { success: $end }\n";

    #[test]
    fn a_file_is_validated_again_only_when_its_text_changed() {
        let cache = DefinitionCache::default();
        let (first, _) = cache.validated("w", ONE).unwrap();
        let (again, _) = cache.validated("w", ONE).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the same text is not validated twice");
        let edited = ONE.replace("prompt: one", "prompt: two");
        let (changed, config) = cache.validated("w", &edited).unwrap();
        assert!(!Arc::ptr_eq(&first, &changed));
        assert_eq!(config["nodes"]["a"]["config"]["prompt"], "two");
        let broken = ONE.replace("$end", "nowhere");
        for _ in 0..2 {
            let error = cache.validated("w", &broken).unwrap_err();
            assert!(error.to_string().contains("not valid"), "{error}");
        }
    }
}
