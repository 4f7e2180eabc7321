//! The checks of the facade, which write nothing: `validate_workflow`, `lint_workflow`, `get_workflow_schema` (with
//! the effective models of `roscoe.yaml`) and `get_workflow_diagram`, over given contents or a stored workflow.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::{Body, LintWarning, Service, Subject, errors, invalid, warnings};
use crate::authoring_guide::{
    ConfigError, ConfigFile, Models, WorkflowSchemaInfo, load_models, workflow_schema_info,
};
use crate::definition::{self, Diagnostic, Options};
use crate::diagram::{Diagram, diagram};
use crate::error::Error;
use crate::scope::Scope;
use crate::sources::MAX_FILE_BYTES;

/// `validate_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Validated {
    /// Whether schema + integrity pass.
    pub valid: bool,
    /// When invalid: `invalid_config`, `integrity_error` or `not_found`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// One line per problem.
    pub errors: Vec<String>,
}

/// `lint_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Linted {
    /// Schema and integrity errors (lint runs only without them).
    pub errors: Vec<String>,
    /// Lint findings.
    pub warnings: Vec<LintWarning>,
}

impl Service {
    /// The text and id of a validate/lint subject; `Ok(Err(..))` when a stored id is not found.
    fn subject_text(
        &self,
        scope: &Scope,
        subject: &Subject,
    ) -> Result<Result<(String, Option<String>), Error>, Error> {
        match subject {
            Subject::Body(body) => {
                let id = match body {
                    Body::Config(config) => config.get("name").and_then(Value::as_str),
                    Body::Yaml(_) => None,
                };
                Ok(Ok((body.text(id.unwrap_or("workflow"))?, None)))
            }
            Subject::Stored { id, source } => match self.sources(scope).resolve(id, *source) {
                Ok(located) => Ok(Ok((located.read()?, Some(id.clone())))),
                Err(e @ Error::NotFound { .. }) => Ok(Err(e)),
                Err(e) => Err(e),
            },
        }
    }

    /// `validate_workflow`: schema + integrity, no writes. An invalid workflow is a result, not an error.
    pub fn validate_workflow(&self, scope: &Scope, subject: &Subject) -> Result<Validated, Error> {
        let (text, id) = match self.subject_text(scope, subject)? {
            Ok(found) => found,
            Err(e) => {
                return Ok(Validated {
                    valid: false,
                    code: Some(e.as_code()),
                    errors: vec![e.to_string()],
                });
            }
        };
        let validation = definition::validate(
            &text,
            &Options {
                id,
                ..Options::default()
            },
        );
        if validation.is_valid() {
            return Ok(Validated {
                valid: true,
                code: None,
                errors: Vec::new(),
            });
        }
        let error = invalid(&validation.diagnostics);
        Ok(Validated {
            valid: false,
            code: Some(error.as_code()),
            errors: errors(&validation.diagnostics),
        })
    }

    /// The effective models of `roscoe.yaml` (§2.2): `<cairn home>/roscoe.yaml`, replaced section-wise by
    /// `<project root>/roscoe.yaml` in project scope.
    pub fn models(&self, scope: &Scope) -> Result<Models, ConfigError> {
        let global = read_config(&self.home.join("roscoe.yaml"))?;
        let project = match scope.root() {
            Some(root) => read_config(&root.join("roscoe.yaml"))?,
            None => None,
        };
        load_models(
            global.as_ref().map(config_file),
            project.as_ref().map(config_file),
        )
    }

    /// `get_workflow_schema`: the JSON Schema, the executors, the models of `roscoe.yaml` in scope and the gotchas.
    pub fn workflow_schema(&self, scope: &Scope) -> WorkflowSchemaInfo {
        workflow_schema_info(&self.models(scope))
    }

    /// `get_workflow_diagram`: the diagram of a stored or given workflow. A workflow that passes the schema stage is
    /// drawn even when it breaks integrity rules (a dangling target shows as such); one that does not is
    /// `invalid_config`.
    pub fn workflow_diagram(&self, scope: &Scope, subject: &Subject) -> Result<Diagram, Error> {
        let (text, id) = self.subject_text(scope, subject)??;
        let validation = definition::validate(
            &text,
            &Options {
                id,
                ..Options::default()
            },
        );
        match &validation.workflow {
            Some(workflow) => Ok(diagram(workflow)),
            None => Err(invalid(&validation.diagnostics)),
        }
    }

    /// `lint_workflow`: schema + integrity errors, then (only without them) lint warnings.
    pub fn lint_workflow(&self, scope: &Scope, subject: &Subject) -> Result<Linted, Error> {
        let (text, id) = match self.subject_text(scope, subject)? {
            Ok(found) => found,
            Err(e) => {
                return Ok(Linted {
                    errors: vec![e.to_string()],
                    warnings: Vec::new(),
                });
            }
        };
        let diagnostics = self.diagnose(scope, &text, id)?;
        Ok(Linted {
            errors: errors(&diagnostics),
            warnings: warnings(&diagnostics),
        })
    }

    /// What `lint_workflow` finds in the text of workflow `id` (`None` for a new one), each finding with its line
    /// and column where known: for an editor to show them on their lines.
    pub fn diagnose(&self, scope: &Scope, text: &str, id: Option<String>) -> Result<Vec<Diagnostic>, Error> {
        let sources = self.sources(scope);
        let mut ids = self.ids(&sources)?;
        if let Some(id) = &id {
            ids.insert(id.clone());
        }
        let validation = definition::validate(
            text,
            &Options {
                id,
                lint: true,
                models: self.models(scope).ok().map(|m| m.permitted()),
                workflows: Some(ids.into_iter().collect()),
                calls: Some(self.calls(&sources)?),
            },
        );
        Ok(validation.diagnostics)
    }
}

/// A `roscoe.yaml` file's path and text, `None` when it does not exist. It is read like a workflow file: a regular
/// file of at most 1 MiB, never waited on.
pub(super) fn read_config(path: &Path) -> Result<Option<(String, String)>, ConfigError> {
    let shown = path.display().to_string();
    match crate::files::read_regular(path, MAX_FILE_BYTES as u64) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Ok(Some((shown, text))),
            Err(_) => Err(ConfigError { path: shown, message: "is not UTF-8 text; save it as UTF-8".into() }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError {
            path: shown,
            message: format!("cannot be read ({e}); make it a readable YAML file of at most 1 MiB, or remove it"),
        }),
    }
}

pub(super) fn config_file((path, text): &(String, String)) -> ConfigFile<'_> {
    ConfigFile { path, text }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::service::crud::tests::{CHILD, Env, code};

    #[test]
    fn validate_and_lint_by_text_and_id() {
        let env = Env::new();
        env.create("child", CHILD, None);
        let s = &env.service;
        let ok = s
            .validate_workflow(&env.scope, &Subject::Body(Body::Yaml(CHILD.into())))
            .unwrap();
        assert_eq!(
            serde_json::to_value(&ok).unwrap(),
            json!({"valid": true, "errors": []})
        );
        let stored = Subject::Stored {
            id: "child".into(),
            source: None,
        };
        assert!(s.validate_workflow(&env.scope, &stored).unwrap().valid);
        let bad = Subject::Body(Body::Yaml(
            CHILD.replace("success: $end", "success: nowhere"),
        ));
        let v = s.validate_workflow(&env.scope, &bad).unwrap();
        assert_eq!((v.valid, v.code), (false, Some("integrity_error")));
        assert!(!v.errors.is_empty());
        let v = s
            .validate_workflow(&env.scope, &Subject::Body(Body::Yaml("x: [".into())))
            .unwrap();
        assert_eq!(v.code, Some("invalid_config"));
        let missing = Subject::Stored {
            id: "ghost".into(),
            source: None,
        };
        assert_eq!(
            s.validate_workflow(&env.scope, &missing).unwrap().code,
            Some("not_found")
        );
        assert_eq!(
            code(Subject::from_inputs(
                Some(json!({})),
                None,
                Some("x".into()),
                None
            )),
            "invalid_input"
        );
        assert_eq!(
            code(Subject::from_inputs(None, None, None, None)),
            "invalid_input"
        );

        let lint = s.lint_workflow(&env.scope, &stored).unwrap();
        assert!(lint.errors.is_empty());
        let dead = CHILD.replace("nodes:\n", "nodes:\n  orphan:\n    type: script\n    config: { command: \"true\" }\n    transitions: { success: $end, failure: $fail }\n");
        let lint = s
            .lint_workflow(&env.scope, &Subject::Body(Body::Yaml(dead)))
            .unwrap();
        assert!(lint.errors.is_empty(), "{lint:?}");
        assert!(
            lint.warnings
                .iter()
                .any(|w| w.state.as_deref() == Some("orphan")),
            "{lint:?}"
        );
        let lint = s.lint_workflow(&env.scope, &bad).unwrap();
        assert!(!lint.errors.is_empty());
        assert!(lint.warnings.is_empty());
    }
}
