//! The effective `roscoe.yaml` of a scope as people read it (the web UI's settings page): which files exist, the
//! models and the prices in force, and where each comes from. The models section of the project's file replaces
//! the global one's; a section in neither is built in. The prices are the ones runs are charged by, read as runs read
//! them (the runs layer's settings): the built-in Claude prices, each model's entry in the global file over them, the
//! project's over those.

use std::collections::BTreeMap;
use std::path::PathBuf;


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
    /// USD per million input and output tokens, per model id: what runs are charged.
    pub pricing: BTreeMap<String, Price>,
    /// Where the prices come from: the built-in table and the files whose `pricing` entries are over it, or why
    /// there are none.
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

    /// The prices runs in `scope` are charged by and where they come from. A `roscoe.yaml` that cannot be used
    /// starts no run, so it leaves no prices.
    fn pricing(&self, scope: &Scope) -> (BTreeMap<String, Price>, String) {
        match crate::runs::settings::Settings::read(&self.home, scope.root()) {
            Ok(read) => {
                let mut from = vec!["the built-in prices".to_owned()];
                for path in self.config_paths(scope) {
                    let Ok(Some((_, text))) = read_config(&path) else { continue };
                    if cairn_yaml::parse(&text).is_ok_and(|doc| doc.value.get("pricing").is_some()) {
                        from.push(path.display().to_string());
                    }
                }
                (read.pricing, from.join(", then "))
            }
            Err(_) => (BTreeMap::new(), "nowhere: a roscoe.yaml cannot be used (see the files above)".to_owned()),
        }
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
        let (pricing, pricing_from) = self.pricing(scope);
        Settings { files, models, models_from, pricing, pricing_from }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prices_shown_are_the_ones_runs_are_charged_by() {
        let home = tempfile::tempdir().unwrap();
        let service = Service::new(home.path());
        let built_in = service.settings(&Scope::Global);
        assert_eq!(built_in.pricing_from, "the built-in prices");
        assert_eq!(built_in.pricing["claude-haiku-4-5"].input, 1.0, "a built-in price with no roscoe.yaml");

        std::fs::write(home.path().join("roscoe.yaml"), "pricing:\n  claude-haiku-4-5: { input: 3, output: 15 }\n").unwrap();
        let priced = service.settings(&Scope::Global);
        let file = home.path().join("roscoe.yaml").display().to_string();
        assert_eq!(priced.pricing_from, format!("the built-in prices, then {file}"));
        assert_eq!(priced.pricing["claude-haiku-4-5"].input, 3.0, "the file's entry over the built-in one");
        assert_eq!(priced.pricing["claude-sonnet-4-5"].input, 3.0, "the other built-in prices stay");

        std::fs::write(home.path().join("roscoe.yaml"), "pricing:\n  m: { input: -1, output: 1 }\n").unwrap();
        let broken = service.settings(&Scope::Global);
        assert!(broken.pricing.is_empty() && broken.pricing_from.starts_with("nowhere"), "{}", broken.pricing_from);
    }
}
