//! The effective `roscoe.yaml` of a scope as people read it (the web UI's settings page): which files exist, the
//! models in force, and the file their section comes from — the project's file replaces the global one's; a section
//! in neither is built in. The prices runs are charged by are the runs layer's
//! ([`Runs::prices`](crate::Runs::prices)).

use std::path::PathBuf;

use super::Service;
use super::check::{config_file, read_config};
use crate::authoring_guide::{Models, models_section};
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
        Settings { files, models, models_from }
    }
}
