//! Step 1 of a conversion, `convert_skill`: resolve the skill (by path, or by the name `list_skills` shows), read its
//! bundle, pick the workflow id and source, and hand the host the converter prompt — the task, the conversion rules,
//! the format (gotchas, node types, JSON Schema), the skill and the heads of its bundled scripts.

use std::io::Read;
use std::path::PathBuf;

use super::{
    Bundle, ConvertRequest, FinalizeArgs, Handback, Stage, Staged, fail, read_bundle,
    skill_file,
};
use crate::authoring_guide::{BUILTIN_DEFAULT_MODEL, GOTCHAS, executors};
use crate::definition;
use crate::error::Error;
use crate::scope::Scope;
use crate::service::Service;
use crate::skills::{Skill, UserDirs};
use crate::sources::{Sources, check_id};

/// Bundled scripts shown in the prompt, and lines shown of each.
const PROMPT_SCRIPTS: usize = 20;
const PROMPT_SCRIPT_LINES: usize = 40;
/// The most of a bundled script read for its head in the prompt.
const PROMPT_SCRIPT_BYTES: u64 = 64 * 1024;

impl Service {
    /// `convert_skill`: resolves the skill and returns the converter prompt for the host to run, or a `resolve`
    /// failure.
    pub fn convert_skill(
        &self,
        scope: &Scope,
        user: &UserDirs,
        request: &ConvertRequest,
    ) -> Result<Staged<Handback>, Error> {
        handback(self, scope, user, request)
    }
}

/// Step 1: the converter prompt for the host.
fn handback(
    service: &Service,
    scope: &Scope,
    user: &UserDirs,
    request: &ConvertRequest,
) -> Result<Staged<Handback>, Error> {
    let path = match (&request.skill_path, &request.name) {
        (Some(path), None) => match skill_file(scope, path, &request.reach, user) {
            Ok(path) => path,
            Err(failure) => return Ok(Staged::Failed(*failure)),
        },
        (None, Some(name)) => match by_name(service, scope, user, name) {
            Ok(path) => path,
            Err(failure) => return Ok(Staged::Failed(*failure)),
        },
        _ => {
            return Err(Error::InvalidInput(
                "pass exactly one of `skill_path` (the skill file) or `name` (a name list_skills shows)".into(),
            ));
        }
    };
    let bundle = match read_bundle(&path) {
        Ok(bundle) => bundle,
        Err(failure) => return Ok(Staged::Failed(*failure)),
    };
    let id = match &request.id {
        Some(id) => id.clone(),
        None => id_from_name(&bundle.skill.name),
    };
    if let Err(e) = check_id(&id) {
        return Ok(Staged::Failed(Error::at_stage(Stage::Resolve, &e)));
    }
    let sources = Sources::new(service.home(), scope);
    let source = request.source.unwrap_or_else(|| sources.default_source());
    if let Err(e) = sources.dir(source) {
        return Ok(Staged::Failed(Error::at_stage(Stage::Resolve, &e)));
    }
    let model = service
        .models(scope)
        .map(|m| m.default)
        .unwrap_or_else(|_| BUILTIN_DEFAULT_MODEL.to_owned());
    Ok(Staged::Done(Handback {
        action: "run_completion",
        prompt: prompt(&bundle, &id),
        model,
        finalize_args: FinalizeArgs {
            skill_path: path.to_string_lossy().into_owned(),
            id,
            source,
        },
    }))
}

/// The one skill called `name` (case-insensitively) among those `list_skills` finds.
fn by_name(
    service: &Service,
    scope: &Scope,
    user: &UserDirs,
    name: &str,
) -> Result<PathBuf, Box<Error>> {
    let wanted = name.trim().to_lowercase();
    let matches: Vec<Skill> = service
        .list_skills(scope, user, true, None)
        .skills
        .into_iter()
        .filter(|s| s.name.to_lowercase() == wanted)
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.path.clone()),
        [] => fail(Error::stage(
            Stage::Resolve,
            "skill_not_found",
            format!(
                "no skill named '{name}'; call list_skills to see the names, or pass skill_path"
            ),
        )),
        several => {
            let paths: Vec<String> = several
                .iter()
                .map(|s| s.path.display().to_string())
                .collect();
            fail(Error::stage(
                Stage::Resolve,
                "ambiguous_skill",
                format!(
                    "{} skills are named '{name}': {}; pass skill_path to pick one",
                    several.len(),
                    paths.join(", ")
                ),
            ))
        }
    }
}

/// A workflow id from a skill name: lower-case, runs of other characters as `-`, at most 64 characters.
fn id_from_name(name: &str) -> String {
    let mut id = String::new();
    for c in name.trim().to_lowercase().chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            id.push(c);
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    let id = id.trim_start_matches('_').trim_end_matches('-');
    id.chars()
        .take(64)
        .collect::<String>()
        .trim_end_matches('-')
        .to_owned()
}

/// The converter prompt: the task, the rules, the format (executors, gotchas, JSON Schema), then the skill itself.
fn prompt(bundle: &Bundle, id: &str) -> String {
    let mut p = String::new();
    p.push_str(&format!(
        "You are converting an Agent Skill (a markdown playbook for an AI agent) into a cairn roscoe workflow: a state \
         machine written in YAML whose nodes are run by the workflow server, handed to an AI host, or put to a human.\n\n\
         Read the skill below and design the workflow that carries it out step by step. Answer with a short plan \
         (a few lines) followed by exactly ONE fenced ```yaml block holding the whole workflow, with `name: {id}`. \
         Nothing after the block.\n\n"
    ));
    p.push_str("## How to convert\n\n");
    for rule in CONVERSION_RULES {
        p.push_str("- ");
        p.push_str(rule);
        p.push('\n');
    }
    if !bundle.scripts.is_empty() {
        p.push_str(
            "- This skill bundles scripts. They will be copied to `$ROSCOE_WORKFLOW_DIR/scripts/` beside the \
             workflow. Run each one from a `script` node with `script: scripts/<file>` (a path relative to \
             $ROSCOE_WORKFLOW_DIR; add `interpreter: bash` or `python3` when the file is not executable), or with \
             `command:` and \"$ROSCOE_WORKFLOW_DIR/scripts/<file>\". Never paste a script's body into a prompt.\n",
        );
    }
    if !bundle.skipped.is_empty() {
        let list: Vec<String> = bundle.skipped.iter().map(|d| format!("{d}/")).collect();
        p.push_str(&format!(
            "- The skill's {} folder(s) will NOT be copied. Do not reference their files by path; put what a step \
             needs from them into its prompt.\n",
            list.join(", ")
        ));
    }
    p.push_str("\n## Gotchas of the format\n\n");
    for gotcha in GOTCHAS {
        p.push_str("- ");
        p.push_str(gotcha);
        p.push('\n');
    }
    p.push_str("\n## Node types\n\n");
    for executor in executors() {
        let keys: Vec<String> = executor
            .config_keys
            .iter()
            .map(|k| {
                if k.required {
                    format!("{} (required)", k.name)
                } else {
                    k.name.to_owned()
                }
            })
            .collect();
        p.push_str(&format!(
            "- `{}`: {} Config keys: {}.\n",
            executor.kind.as_str(),
            executor.description,
            keys.join(", ")
        ));
    }
    p.push_str("\n## JSON Schema of the workflow file\n\n```json\n");
    p.push_str(definition::schema().trim_end());
    p.push_str("\n```\n\n## The skill\n\n");
    p.push_str(&format!(
        "Name: {}\nDescription: {}\nFile: {}\n\n<skill>\n{}\n</skill>\n",
        bundle.skill.name,
        bundle.skill.description,
        bundle.skill.path.display(),
        bundle.markdown.trim_end()
    ));
    if let Some(dir) = &bundle.dir
        && !bundle.scripts.is_empty()
    {
        p.push_str("\n## Bundled scripts\n");
        for rel in bundle.scripts.iter().take(PROMPT_SCRIPTS) {
            // Only the head is shown, so only the head is read.
            let mut bytes = Vec::new();
            let _ = crate::files::open_regular(&dir.join("scripts").join(rel))
                .and_then(|file| file.take(PROMPT_SCRIPT_BYTES).read_to_end(&mut bytes));
            let text = String::from_utf8_lossy(&bytes);
            let head: Vec<&str> = text.lines().take(PROMPT_SCRIPT_LINES).collect();
            p.push_str(&format!(
                "\n### scripts/{} (first {} lines)\n\n```\n{}\n```\n",
                rel.display(),
                head.len(),
                head.join("\n")
            ));
        }
        if bundle.scripts.len() > PROMPT_SCRIPTS {
            p.push_str(&format!(
                "\n…and {} more files under scripts/.\n",
                bundle.scripts.len() - PROMPT_SCRIPTS
            ));
        }
    }
    p
}

/// The conversion guidance of the seed, in our words.
const CONVERSION_RULES: &[&str] = &[
    "One node per distinct step of the skill. Deterministic steps (running a command, a check, a build) are `script` \
     nodes; steps that need judgement or writing are `ai_agent` nodes; decisions between paths are `ai_judge` nodes; \
     points where the skill asks the user to confirm or choose are `human` nodes.",
    "Whenever a step uses \"the previous result\", \"the gathered context\" or similar, pass it explicitly with a \
     template: `{{ nodeId.field }}` (e.g. `{{ gather.text }}` for an agent's answer, `{{ tests.stdout }}` for a \
     script's output). Each prompt must stand on its own: the host sees only that prompt.",
    "A template may reference a node only if that node runs on every path that reaches the referencing node (it \
     dominates it). After a branch, reference a node both branches pass through, or give a fallback: \
     `{{ fix.summary || \"no fix was needed\" }}`.",
    "Route routine decisions with one `ai_judge` (its transition keys are the verdicts). Use `consensus` with 3 to 5 \
     agents and a quorum only for high-stakes gates: production deploys, security severity, migration safety, data \
     deletion.",
    "Loops (verify → fix → verify again) must be capped: put `maxIterations` on at least one node of the cycle and \
     route its `max_iterations` event somewhere sensible (often a human node), unless a human node is itself part of \
     the loop.",
    "End paths explicitly: `$end` completes the run, `$fail` fails it; route `failure` of script nodes.",
    "Keep what the skill says; do not invent steps, tools or files it does not mention.",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_names() {
        assert_eq!(id_from_name("PDF Forms"), "pdf-forms");
        assert_eq!(id_from_name("  _weird__ name!! "), "weird__-name");
        assert_eq!(id_from_name("émoji 🎉 helper"), "moji-helper");
        assert_eq!(id_from_name(&"a".repeat(80)).len(), 64);
        assert_eq!(id_from_name("!!!"), "");
    }
}
