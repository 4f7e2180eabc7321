//! The one error type of cairn-roscoe: scope errors (§3), the workflow writers' `WriterErrorCode`s (§13, §19), the
//! refusals of the run engine and of the run and docs tools, server failures, and failed skill-conversion stages.
//!
//! Every variant has a stable code ([`Error::as_code`]) — the seed's spelling: `CWD_REQUIRED`, `CWD_GLOBAL_CONFLICT`,
//! `CWD_INVALID` for scopes (and cairn's `not_a_project` for a folder `cairn serve` does not serve), lower-case codes (`not_found`, `conflict`, `stale_step`, …) for the rest — and a message
//! that says what to do. [`Error::body`] is the error object the tools and REST return: the seed's `{ error, code,
//! cwd?, details?, referencedBy?, path?, …extra }`, or for a skill stage `{ ok: false, stage, message, error, code,
//! details?, rawModelOutput? }`. Turning it into an MCP result or an HTTP status is the adapters' job: run tools
//! answer every error but [`Error::Internal`] as a normal result, the others as `isError`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::engine::Rejection;
use crate::source::{Source, UnknownSource};

/// A subworkflow node that points at a workflow (`list_workflow_references`, `delete_workflow`'s refusal).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Referrer {
    /// The referring workflow's id.
    pub workflow_id: String,
    /// The subworkflow node inside it.
    pub node_id: String,
    /// Which source the referring workflow lives in.
    pub source: Source,
}

/// The step of a skill conversion that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Finding and reading the skill, the id or the source.
    Resolve,
    /// Finding the workflow YAML in the completion.
    Parse,
    /// Schema and integrity validation.
    Validate,
    /// Writing the workflow and its scripts.
    Write,
}

/// Why a roscoe operation failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    /// Neither `cwd` nor `global: true` was given.
    #[error("pass `cwd` (the absolute path of the project you are working in) or `global: true`")]
    CwdRequired,
    /// Both `cwd` and `global: true` were given.
    #[error("pass either `cwd` or `global: true`, not both")]
    CwdGlobalConflict {
        /// The `cwd` given.
        cwd: String,
    },
    /// `cwd` is not an absolute path to an existing directory.
    #[error("cwd '{cwd}' {reason}; pass the absolute path of an existing directory")]
    CwdInvalid {
        /// The `cwd` given.
        cwd: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `cwd` names a folder outside the projects a `cairn serve` serves (its `--project` folders).
    #[error("{}", not_a_project_message(cwd, served))]
    NotAProject {
        /// The `cwd` given.
        cwd: String,
        /// The project roots the server serves.
        served: Vec<PathBuf>,
    },
    /// A workflow id that cannot be a file stem.
    #[error(
        "workflow id '{id}' is invalid: use 1–64 of a-z, 0-9, '_' and '-', starting with a letter or digit"
    )]
    InvalidId {
        /// The id given.
        id: String,
    },
    /// The workflow text is not schema-valid (or a stored file cannot be read as a workflow).
    #[error("{message}")]
    InvalidConfig {
        /// What is wrong.
        message: String,
        /// One line per problem.
        details: Vec<String>,
    },
    /// The workflow is schema-valid but breaks an integrity rule.
    #[error("the workflow breaks {} integrity rule(s); fix every entry of `details` and retry", details.len())]
    IntegrityError {
        /// One line per problem.
        details: Vec<String>,
    },
    /// The target id already exists in that source.
    #[error(
        "workflow '{id}' already exists in the {in_source} source ({}); pick another id, or update/delete the existing one",
        path.display()
    )]
    Conflict {
        /// The id.
        id: String,
        /// The source it exists in.
        in_source: Source,
        /// The existing file.
        path: PathBuf,
    },
    /// `source: "repo"` with no repo source (global scope).
    #[error(
        "there is no repo source in global scope; pass `cwd` to work on a project's .roscoe/workflows, or use source \"global\""
    )]
    NoRepoSource,
    /// A file-system operation failed.
    #[error("could not {action} {}: {message}; check that the path is writable and retry", path.display())]
    IoError {
        /// What was being done (`write`, `read`, `delete`, …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// No workflow with that id in scope (or in the named source).
    #[error("{}", not_found_message(id, *in_source))]
    NotFound {
        /// The id asked for.
        id: String,
        /// The source asked for, if one was.
        in_source: Option<Source>,
    },
    /// `delete_workflow` without `confirm: true`.
    #[error("deleting is permanent: pass `confirm: true` to delete {}", path.display())]
    ConfirmRequired {
        /// The file that would be deleted.
        path: PathBuf,
    },
    /// `delete_workflow` of a workflow other workflows still use.
    #[error(
        "workflow '{id}' is used by {} subworkflow node(s) (see referencedBy); change them first, or pass `force: true` to delete anyway",
        referenced_by.len()
    )]
    Referenced {
        /// The workflow.
        id: String,
        /// Who uses it.
        referenced_by: Vec<Referrer>,
    },
    /// The input's shape is wrong (e.g. both `config` and `yaml`, or `to` equal to `from`).
    #[error("{0}")]
    InvalidInput(String),
    /// The caller lacks a scope this needs (writing a workflow with `script` nodes needs `roscoe:exec`).
    #[error("{0}")]
    InsufficientScope(String),
    /// A request refused with a code of its own: the run engine's (`stale_step`, `wrong_tool`, `terminal`,
    /// `not_paused`, …), the run tools' (`Run not found.` as `not_found`, `workflow_not_found`, `invalid_config`), the
    /// docs tools' (`not_found`, `no_sections`); `extra` holds the body's further fields (`expectedTool`, `details`, …).
    #[error("{message}")]
    Refused {
        /// The stable code.
        code: &'static str,
        /// What happened and what to do.
        message: String,
        /// Further fields of the error body, in order.
        extra: Map<String, Value>,
    },
    /// A server failure (the database), not a problem with the request: `internal`.
    #[error("{0}")]
    Internal(String),
    /// A skill conversion failed at `stage`: the seed's `{ ok: false, stage, message, rawModelOutput? }`, plus `error`
    /// (the same sentence), the stable `code` (`skill_not_found`, `no_workflow_yaml`, `integrity_error`, …) and
    /// `details` (one line per validation problem).
    #[error("{message}")]
    Stage {
        /// Where it failed.
        stage: Stage,
        /// The stable code.
        code: &'static str,
        /// What went wrong and what to do.
        message: String,
        /// One line per validation problem.
        details: Vec<String>,
        /// The completion as received (parse and validate failures).
        raw_model_output: Option<String>,
    },
}

fn not_a_project_message(cwd: &str, served: &[PathBuf]) -> String {
    let how = "a folder is served when `cairn serve` is started with `--project DIR` (repeatable)";
    if served.is_empty() {
        return format!("cwd '{cwd}' is not a project this server serves: it serves none, only `global: true`; {how}");
    }
    let list: Vec<String> = served.iter().map(|p| p.display().to_string()).collect();
    format!(
        "cwd '{cwd}' is not a project this server serves; pass a directory inside {} or `global: true` ({how})",
        list.join(", ")
    )
}

fn not_found_message(id: &str, source: Option<Source>) -> String {
    match source {
        Some(source) => format!(
            "no workflow '{id}' in the {source} source; call list_workflows to see the ids in scope"
        ),
        None => format!("no workflow '{id}' in scope; call list_workflows to see the ids in scope"),
    }
}

impl Error {
    /// The stable code (§19).
    pub fn as_code(&self) -> &'static str {
        match self {
            Error::CwdRequired => "CWD_REQUIRED",
            Error::CwdGlobalConflict { .. } => "CWD_GLOBAL_CONFLICT",
            Error::CwdInvalid { .. } => "CWD_INVALID",
            Error::NotAProject { .. } => "not_a_project",
            Error::InvalidId { .. } => "invalid_id",
            Error::InvalidConfig { .. } => "invalid_config",
            Error::IntegrityError { .. } => "integrity_error",
            Error::Conflict { .. } => "conflict",
            Error::NoRepoSource => "no_repo_source",
            Error::IoError { .. } => "io_error",
            Error::NotFound { .. } => "not_found",
            Error::ConfirmRequired { .. } => "confirm_required",
            Error::Referenced { .. } => "referenced",
            Error::InvalidInput(_) => "invalid_input",
            Error::InsufficientScope(_) => "insufficient_scope",
            Error::Refused { code, .. } | Error::Stage { code, .. } => code,
            Error::Internal(_) => "internal",
        }
    }

    /// Whether this is a server failure rather than a problem with the request.
    pub fn is_internal(&self) -> bool {
        matches!(self, Error::Internal(_))
    }

    /// Whether this is one of the scope errors (`{ error, code, cwd? }`).
    pub fn is_scope_error(&self) -> bool {
        matches!(
            self,
            Error::CwdRequired
                | Error::CwdGlobalConflict { .. }
                | Error::CwdInvalid { .. }
                | Error::NotAProject { .. }
        )
    }

    /// The error object: `{ error, code }` plus `cwd`, `details`, `referencedBy`, `path` or a refusal's extra fields
    /// where they apply; a skill stage's `{ ok: false, stage, message, error, code, details?, rawModelOutput? }`.
    pub fn body(&self) -> Value {
        if let Error::Stage { stage, code, message, details, raw_model_output } = self {
            let mut body = json!({ "ok": false, "stage": stage, "message": message, "error": message, "code": code });
            if !details.is_empty() {
                body["details"] = json!(details);
            }
            if let Some(output) = raw_model_output {
                body["rawModelOutput"] = json!(output);
            }
            return body;
        }
        let mut body = Map::new();
        body.insert("error".into(), json!(self.to_string()));
        body.insert("code".into(), json!(self.as_code()));
        match self {
            Error::CwdGlobalConflict { cwd } | Error::CwdInvalid { cwd, .. } => {
                body.insert("cwd".into(), json!(cwd));
            }
            Error::NotAProject { cwd, served } => {
                body.insert("cwd".into(), json!(cwd));
                body.insert("projects".into(), json!(served));
            }
            Error::InvalidConfig { details, .. } | Error::IntegrityError { details } => {
                body.insert("details".into(), json!(details));
            }
            Error::Referenced { referenced_by, .. } => {
                body.insert("referencedBy".into(), json!(referenced_by));
            }
            Error::ConfirmRequired { path } | Error::Conflict { path, .. } => {
                body.insert("path".into(), json!(path));
            }
            Error::Refused { extra, .. } => body.extend(extra.clone()),
            _ => {}
        }
        Value::Object(body)
    }

    /// A refusal with `code`.
    pub fn refused(code: &'static str, message: impl Into<String>) -> Self {
        Error::Refused { code, message: message.into(), extra: Map::new() }
    }

    /// `Run not found.` — also for runs of another project (§3: never leak that they exist).
    pub fn run_not_found() -> Self {
        Error::refused("not_found", "Run not found.")
    }

    /// This refusal with the body field `key` set to `value` (other errors are returned as they are).
    pub fn with(mut self, key: &str, value: Value) -> Self {
        if let Error::Refused { extra, .. } = &mut self {
            extra.insert(key.to_owned(), value);
        }
        self
    }

    /// A skill conversion failure at `stage`.
    pub(crate) fn stage(stage: Stage, code: &'static str, message: String) -> Self {
        Error::Stage { stage, code, message, details: Vec::new(), raw_model_output: None }
    }

    /// `error` as a failure of skill-conversion `stage`: its code, message and `details`.
    pub(crate) fn at_stage(stage: Stage, error: &Error) -> Self {
        let details = error.body().get("details").and_then(Value::as_array).map(|details| {
            details.iter().filter_map(|d| d.as_str().map(str::to_owned)).collect()
        });
        Error::stage(stage, error.as_code(), error.to_string()).with_details(details.unwrap_or_default())
    }

    /// This stage failure with `details`.
    pub(crate) fn with_details(mut self, lines: Vec<String>) -> Self {
        if let Error::Stage { details, .. } = &mut self {
            *details = lines;
        }
        self
    }

    /// This stage failure with the model's completion as received.
    pub(crate) fn with_output(mut self, completion: &str) -> Self {
        if let Error::Stage { raw_model_output, .. } = &mut self {
            *raw_model_output = Some(completion.to_owned());
        }
        self
    }

    /// An `io_error` for `action` on `path`.
    pub(crate) fn io(action: &'static str, path: &Path, err: &std::io::Error) -> Self {
        Error::IoError {
            action,
            path: path.to_owned(),
            message: err.to_string(),
        }
    }
}

/// The error object, as [`Error::body`].
impl Serialize for Error {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.body().serialize(serializer)
    }
}

impl From<Rejection> for Error {
    fn from(rejection: Rejection) -> Self {
        Error::Refused { code: rejection.code, message: rejection.message, extra: rejection.extra }
    }
}

impl From<cairn_store::Error> for Error {
    fn from(error: cairn_store::Error) -> Self {
        Error::Internal(error.to_string())
    }
}

impl From<UnknownSource> for Error {
    fn from(unknown: UnknownSource) -> Error {
        Error::InvalidInput(unknown.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_seeds() {
        assert_eq!(Error::CwdRequired.as_code(), "CWD_REQUIRED");
        assert_eq!(
            Error::CwdGlobalConflict { cwd: "/x".into() }.as_code(),
            "CWD_GLOBAL_CONFLICT"
        );
        assert_eq!(Error::NoRepoSource.as_code(), "no_repo_source");
        assert_eq!(Error::InvalidInput("x".into()).as_code(), "invalid_input");
    }

    #[test]
    fn body_carries_cwd_and_details() {
        let body = Error::CwdInvalid {
            cwd: "rel".into(),
            reason: "is not absolute".into(),
        }
        .body();
        assert_eq!(body["code"], "CWD_INVALID");
        assert_eq!(body["cwd"], "rel");
        assert!(body["error"].as_str().unwrap().contains("rel"));

        let body = Error::IntegrityError {
            details: vec!["a".into()],
        }
        .body();
        assert_eq!(body["details"], json!(["a"]));
        assert!(Error::CwdRequired.body().get("cwd").is_none());
    }

    #[test]
    fn referenced_lists_referrers() {
        let body = Error::Referenced {
            id: "child".into(),
            referenced_by: vec![Referrer {
                workflow_id: "parent".into(),
                node_id: "call".into(),
                source: Source::Repo,
            }],
        }
        .body();
        assert_eq!(body["code"], "referenced");
        assert_eq!(body["referencedBy"][0]["workflowId"], "parent");
        assert_eq!(body["referencedBy"][0]["nodeId"], "call");
    }
}
