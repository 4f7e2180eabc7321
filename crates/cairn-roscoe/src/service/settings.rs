//! The effective `roscoe.yaml` of a scope as people read it (the web UI's settings page): which files exist, the
//! models and the prices in force, and the file each section comes from — the project's file replaces the global
//! one section by section; a section in neither is built in (models) or empty (pricing). Runs read their prices here
//! too, so the page shows what runs are charged.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::Service;
use super::check::{config_file, read_config};
use crate::authoring_guide::{Models, models_section};
use crate::engine::state::Price;
use crate::scope::Scope;

/// One `roscoe.yaml` the scope reads.
#[derive(Clone, Debug)]
pub struct SettingsFile {
    /// Its path.
    pub path: String,
    /// Whether it exists.
    pub found: bool,
    /// Why it cannot be used, when it cannot.
    pub error: Option<String>,
}

/// What `roscoe.yaml` settles for a scope.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The global file, then the project's (in project scope).
    pub files: Vec<SettingsFile>,
    /// The models in force.
    pub models: Models,
    /// The file whose `models` section is in force, or `built-in`.
    pub models_from: String,
    /// USD per million input and output tokens, per model id.
    pub pricing: BTreeMap<String, Price>,
    /// The file whose `pricing` section is in force, or `none`.
    pub pricing_from: String,
}

impl Service {
    /// The `roscoe.yaml` files of `scope`: the global one, then the project's.
    fn config_paths(&self, scope: &Scope) -> Vec<PathBuf> {
        let mut paths = vec![self.home.join("roscoe.yaml")];
        if let Some(root) = scope.root() {
            paths.push(root.join("roscoe.yaml"));
        }
        paths
    }

    /// The prices runs in `scope` are charged by, and the file they come from (the project's `pricing` section
    /// replaces the global one; a file that cannot be read or parsed is passed over).
    pub fn pricing(&self, scope: &Scope) -> (BTreeMap<String, Price>, Option<PathBuf>) {
        let mut pricing = BTreeMap::new();
        let mut from = None;
        for path in self.config_paths(scope) {
            let Ok(Some((_, text))) = read_config(&path) else { continue };
            let Ok(doc) = cairn_yaml::parse(&text) else { continue };
            if let Some(Value::Object(prices)) = doc.value.get("pricing") {
                pricing.clear();
                for (model, price) in prices {
                    let read = |k: &str| price.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                    let cache = |k: &str| price.get(k).and_then(Value::as_f64);
                    let price = Price { input: read("input"), output: read("output"), cache_read: cache("cacheRead"), cache_write: cache("cacheWrite") };
                    pricing.insert(model.clone(), price);
                }
                from = Some(path);
            }
        }
        (pricing, from)
    }

    /// The effective `roscoe.yaml` of `scope`, for people.
    pub fn settings(&self, scope: &Scope) -> Settings {
        let mut files = Vec::new();
        let mut models = None;
        for path in self.config_paths(scope) {
            let shown = path.display().to_string();
            let section = read_config(&path).and_then(|read| read.as_ref().map(config_file).map(models_section).transpose());
            let (found, error) = match section {
                Ok(None) => (false, None),
                Ok(Some(Some(section))) => {
                    models = Some((section, shown.clone()));
                    (true, None)
                }
                Ok(Some(None)) => (true, None),
                Err(error) => (true, Some(error.message)),
            };
            files.push(SettingsFile { path: shown, found, error });
        }
        let (models, models_from) = models.unwrap_or_else(|| (Models::default(), "built-in".to_owned()));
        let (pricing, from) = self.pricing(scope);
        let pricing_from = from.map_or_else(|| "none".to_owned(), |p| p.display().to_string());
        Settings { files, models, models_from, pricing, pricing_from }
    }
}
