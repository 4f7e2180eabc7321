//! The review operations of the deepwork facade: review tasks for changed files, the configured rules, passing a
//! review, and the named DeepSchemas — all outside any workflow session — and, read-only, the reviews a session's
//! current step would still need (for the web UI's session page).
//!
//! Project rules are the `.deepreview` rules (files deepest first) followed by the DeepSchema rules; both come from
//! caches that re-read only what changed. A file to review that resolves outside the project (a symbolic link out of
//! it, or a file in a linked directory) is left out, and the answer says so for each file a rule would have reviewed.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::changed_files::{changed_files, reference_root};
use crate::deepschema::{NamedSchemaInfo, schema_folders};
use crate::glob::is_catch_all;
use crate::confined::{self, Refused};
use crate::ids::check_path_id;
use crate::review::{
    build_tasks, format_tasks, has_passed, instruction_files, mark_passed, not_passed, review_id, root_relative,
    rule_matches_any, rule_part, write_instruction_files,
};
use crate::review_rule::{ReviewRule, ReviewTask};
use crate::service::{Deepwork, Error, Result};
use crate::session_store::SessionStore;
use crate::gate::step_reviews::{output_review_name, process_review_name};

/// A configured rule as `get_configured_reviews` lists it.
#[derive(Debug, Serialize)]
pub struct ConfiguredReview {
    /// Rule name (or `PARSE_ERROR:<path>` for a `.deepreview` that failed to load).
    pub name: String,
    /// Its description (or the error).
    pub description: String,
    /// `<file relative to the root>:<line>`; absolute for files outside the project.
    pub defining_file: String,
}

/// A review that has not passed yet, as a read-only listing shows it.
#[derive(Debug, Clone, Serialize)]
pub struct OpenReview {
    /// Its review id (what `mark_review_as_passed` takes once it passes).
    pub review_id: String,
    /// The rule that asks for it.
    pub rule_name: String,
    /// The files under review, relative to the project root; empty for a review of text.
    pub files: Vec<String>,
    /// `step` (the current step's own reviews, as the quality gate last asked for them) or `project`
    /// (`.deepreview` and DeepSchema rules over the files changed on this branch).
    pub origin: &'static str,
}

/// The reviews a session's current step would still need, and what could not be looked at.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionReviews {
    /// The active workflow's current step, `""` when the session has no active workflow.
    pub step: String,
    /// Reviews without a `.passed` marker, step reviews first, each once.
    pub reviews: Vec<OpenReview>,
    /// One sentence per thing that could not be looked at (git, rule files, the job).
    pub problems: Vec<String>,
}

/// Project rules and the problems met loading them.
pub(crate) struct ProjectRules {
    /// `.deepreview` rules, then DeepSchema rules.
    pub(crate) rules: Vec<ReviewRule>,
    /// `(file, error)` of `.deepreview` files that failed to load.
    pub(crate) deepreview_errors: Vec<(PathBuf, String)>,
    /// `(manifest, error)` of DeepSchemas that failed to load.
    pub(crate) schema_errors: Vec<(PathBuf, String)>,
}

impl Deepwork {
    /// The project's `.deepreview` and DeepSchema rules.
    pub(crate) fn project_rules(&self, root: &Path) -> ProjectRules {
        let reviews = self.deepreview_cache().load(root);
        let schemas = self.deepschema_cache().load(root, &self.schema_folders(root));
        let mut rules = reviews.rules.clone();
        rules.extend(schemas.rules.iter().cloned());
        ProjectRules {
            rules,
            deepreview_errors: reviews.errors.clone(),
            schema_errors: schemas.errors.clone(),
        }
    }

    fn schema_folders(&self, root: &Path) -> Vec<PathBuf> {
        let config = self.config();
        schema_folders(root, &config.standard_schemas, &config.additional_schema_folders)
    }

    /// Review tasks for `files` (or, when `None`, the files changed on this branch), written to instruction files and
    /// formatted for the platform. Every outcome is a message for the agent.
    pub fn get_review_instructions(&self, root: &Path, files: Option<Vec<String>>) -> String {
        let project = self.project_rules(root);
        let mut problems: Vec<String> = project
            .deepreview_errors
            .iter()
            .map(|(path, err)| format!("  - {}: {err}", path.display()))
            .collect();
        // DeepSchema messages already name their manifest.
        problems.extend(project.schema_errors.iter().map(|(_, err)| format!("  - deepschema: {err}")));
        if project.rules.is_empty() {
            return if problems.is_empty() {
                "No .deepreview configuration files or DeepSchema definitions found.".to_owned()
            } else {
                format!("No valid review rules found. Parse errors:\n{}", problems.join("\n"))
            };
        }
        let explicit = files.is_some();
        let mut ref_root = None;
        let files = match files {
            Some(files) => inside_project(root, &files),
            None => {
                // Both ask git; run them side by side.
                let (changed, reference) =
                    std::thread::scope(|s| {
                        let reference = s.spawn(|| reference_root(root));
                        (changed_files(root, None), reference.join().ok())
                    });
                ref_root = reference;
                match changed {
                    Ok(files) => files,
                    Err(err) => return format!("Review error: Git error: {err}"),
                }
            }
        };
        let (files, left_out) = leave_out_outside(root, files, &project.rules);
        let with_left_out = |text: String| {
            if left_out.is_empty() {
                text
            } else {
                format!("Warning: Some files were left out of the review:\n  - {}\n\n{text}", left_out.join("\n  - "))
            }
        };
        if files.is_empty() {
            return with_left_out("No changed files detected.".to_owned());
        }
        let platform = &self.config().platform;
        let tasks = build_tasks(&project.rules, &files, root, platform, explicit);
        if tasks.is_empty() {
            return with_left_out("No review rules matched the changed files.".to_owned());
        }
        let pending = match write_instruction_files(root, tasks) {
            Ok(pending) => pending,
            Err(err) => return format!("Review error: Error writing instruction files: {err}"),
        };
        let ref_root = ref_root.unwrap_or_else(|| reference_root(root));
        let body = with_left_out(format_tasks(&pending, platform, self.config().names.reviewer_agent(), root, &ref_root));
        if problems.is_empty() {
            body
        } else {
            format!("Warning: Some .deepreview files could not be parsed:\n{}\n\n{body}", problems.join("\n"))
        }
    }

    /// Every configured rule, or those matching at least one of `only_matching` (catch-all rules left out then),
    /// followed by `.deepreview` files that failed to load.
    pub fn get_configured_reviews(&self, root: &Path, only_matching: Option<Vec<String>>) -> Vec<ConfiguredReview> {
        let project = self.project_rules(root);
        let mut listed: Vec<ConfiguredReview> = project
            .rules
            .iter()
            .filter(|rule| match &only_matching {
                None => true,
                Some(files) => !is_catch_all(&rule.include) && rule_matches_any(rule, files, root),
            })
            .map(|rule| ConfiguredReview {
                name: rule.name.clone(),
                description: rule.description.clone(),
                defining_file: format!("{}:{}", display_relative(root, &rule.source_file), rule.source_line),
            })
            .collect();
        listed.extend(project.deepreview_errors.iter().map(|(path, err)| ConfiguredReview {
            name: format!("PARSE_ERROR:{}", path.display()),
            description: err.clone(),
            defining_file: path.display().to_string(),
        }));
        listed
    }

    /// Records that a review passed; the message says what happened or what was wrong with the id.
    pub fn mark_review_as_passed(&self, root: &Path, review_id: &str) -> String {
        mark_passed(root, review_id).unwrap_or_else(|err| err)
    }

    /// The reviews the active workflow of session `session_id` (its main stack) would still need at its current
    /// step: the step's own reviews (of its outputs, and of its process requirements) that the quality gate asked for
    /// at the step's last `finished_step`, then the project's rules over the files changed on this branch (what
    /// `get_review_instructions` lists) — each only while it has no `.passed` marker for the files as they are now.
    /// The step's outputs are known only to the gate (a session records them once the step passes), so its own
    /// reviews come from the instruction files the gate wrote; they expire with them.
    ///
    /// Read-only: no instruction file is written and no precompute command runs. It asks git, so it is meant for
    /// one session at a time. Fails only for a session id that is not a valid id or a stack file that does not parse.
    pub fn session_reviews(&self, root: &Path, session_id: &str) -> Result<SessionReviews> {
        check_path_id("session_id", session_id).map_err(Error::Failed)?;
        let platform = &self.config().platform;
        let store = SessionStore::new(root, platform);
        let stack = store.read(session_id, None).map_err(Error::Failed)?;
        let mut found = SessionReviews::default();
        if let Some(top) = stack.workflow_stack.last() {
            found.step = top.current_step_id.clone();
            match self.find_job(root, &store, Some(session_id), &top.job_name) {
                Err(err) => found.problems.push(format!("the step's own reviews are unknown: {err}")),
                Ok(job) => {
                    let step = job.workflows.get(&top.workflow_name).and_then(|w| {
                        w.step_index(&top.current_step_id).map(|i| &w.steps[i])
                    });
                    let mut names = vec![process_review_name(&found.step)];
                    for output in step.into_iter().flat_map(|s| s.outputs.keys()) {
                        names.extend((0..2).map(|i| output_review_name(&found.step, output, i)));
                    }
                    for (asked_id, files) in instruction_files(root) {
                        let Some(name) = names.iter().find(|n| asked_id.starts_with(&format!("{}--", rule_part(n)))) else {
                            continue;
                        };
                        // A review of files is needed again once they change: its id follows their contents now.
                        let review_id = if files.is_empty() { asked_id } else { review_id(&ReviewTask::of_files(name, files.clone()), root) };
                        if !has_passed(root, &review_id) && !found.reviews.iter().any(|r| r.review_id == review_id) {
                            found.reviews.push(OpenReview { review_id, rule_name: name.clone(), files, origin: "step" });
                        }
                    }
                }
            }
        }
        let project = self.project_rules(root);
        found.problems.extend(project.deepreview_errors.iter().map(|(path, err)| format!("{}: {err}", path.display())));
        found.problems.extend(project.schema_errors.iter().map(|(_, err)| format!("deepschema: {err}")));
        if !project.rules.is_empty() {
            match changed_files(root, None) {
                Ok(files) => {
                    let (files, left_out) = leave_out_outside(root, files, &project.rules);
                    found.problems.extend(left_out.into_iter().map(|file| format!("left out of the reviews: {file}")));
                    let tasks = build_tasks(&project.rules, &files, root, platform, false);
                    found.reviews.extend(not_passed(root, tasks).into_iter().map(|(task, review_id)| OpenReview {
                        review_id,
                        rule_name: task.rule_name,
                        files: task.files,
                        origin: "project",
                    }));
                }
                Err(err) => found.problems.push(format!("the changed files are unknown: {err}")),
            }
        }
        Ok(found)
    }

    /// Every named DeepSchema: project, standard, then extra folders.
    pub fn get_named_schemas(&self, root: &Path) -> Vec<NamedSchemaInfo> {
        self.deepschema_cache().load(root, &self.schema_folders(root)).named_schemas.clone()
    }
}


/// Explicit file names as rules match them: relative to the root (`./x` and absolute paths inside the root included),
/// sorted, de-duplicated; names that point outside the project are left out.
fn inside_project(root: &Path, files: &[String]) -> Vec<String> {
    let mut inside: Vec<String> = files
        .iter()
        .map(|f| root_relative(root, f))
        .filter(|f| {
            let path = Path::new(f);
            !path.is_absolute() && !path.components().any(|c| matches!(c, std::path::Component::ParentDir))
        })
        .collect();
    inside.sort();
    inside.dedup();
    inside
}

/// `files` (root-relative) without those that resolve outside the project, and `<file>: <why>` for each of those that
/// some rule would have reviewed.
fn leave_out_outside(root: &Path, files: Vec<String>, rules: &[ReviewRule]) -> (Vec<String>, Vec<String>) {
    let mut kept = Vec::with_capacity(files.len());
    let mut left_out = Vec::new();
    for file in files {
        match confined::resolve(&root.join(&file), Some(root)) {
            Err(err @ Refused::Outside { .. }) => {
                if rules.iter().any(|rule| rule_matches_any(rule, std::slice::from_ref(&file), root)) {
                    left_out.push(format!("{file}: {err}"));
                }
            }
            _ => kept.push(file),
        }
    }
    (kept, left_out)
}

/// `path` relative to `root` when inside it, else absolute.
fn display_relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).map_or_else(|_| path.display().to_string(), |rel| rel.display().to_string())
}
