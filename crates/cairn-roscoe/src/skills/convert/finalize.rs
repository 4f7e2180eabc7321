//! Step 2 of a conversion, `finalize_skill_conversion`: trusting nothing the host echoes back but the completion, it
//! resolves the skill again, parses the workflow YAML out of the completion, forces its `name`, validates it, and
//! writes it with the bundle's scripts (staged in a temp folder, the YAML written last, everything put back on a
//! failure). Each failure names its stage.

use std::fs;
use std::path::Path;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde_json::{Map, Value};

use super::{Bundle, Converted, FinalizeRequest, Stage, Staged, fail, read_bundle, skill_file};
use crate::actor::Actor;
use crate::definition;
use crate::error::Error;
use crate::files::write_atomic;
use crate::scope::Scope;
use crate::skills::UserDirs;
use crate::service::{Body, Service, Subject, allow_scripts};
use crate::sources::{MAX_FILE_BYTES, Sources, check_id};
use crate::yaml_edit::replace_scalar;

impl Service {
    /// `finalize_skill_conversion`: re-reads the skill, extracts and validates the workflow from `completion`,
    /// copies `scripts/` and writes the workflow; a failure names its stage.
    pub fn finalize_skill_conversion(
        &self,
        scope: &Scope,
        user: &UserDirs,
        request: &FinalizeRequest,
        actor: &Actor,
    ) -> Result<Staged<Converted>, Error> {
        finalize(self, scope, user, request, actor)
    }
}

/// Step 2: extract, validate and write the workflow the host's completion holds.
fn finalize(
    service: &Service,
    scope: &Scope,
    user: &UserDirs,
    request: &FinalizeRequest,
    actor: &Actor,
) -> Result<Staged<Converted>, Error> {
    Ok(match finalize_staged(service, scope, user, request, actor) {
        Ok(converted) => Staged::Done(converted),
        Err(failure) => Staged::Failed(*failure),
    })
}

fn finalize_staged(
    service: &Service,
    scope: &Scope,
    user: &UserDirs,
    request: &FinalizeRequest,
    actor: &Actor,
) -> Result<Converted, Box<Error>> {
    // resolve: nothing echoed back is trusted; the bundle is read again from disk.
    let id = request.id.as_str();
    check_id(id).map_err(|e| Error::at_stage(Stage::Resolve, &e))?;
    let bundle = read_bundle(&skill_file(scope, &request.skill_path, &request.reach, user)?)?;
    let sources = Sources::new(service.home(), scope);
    let source = request.source.unwrap_or_else(|| sources.default_source());
    let dir = sources
        .dir(source)
        .map_err(|e| Error::at_stage(Stage::Resolve, &e))?
        .to_owned();

    // parse
    let completion = request.completion.as_str();
    let yaml = extract_yaml(completion).ok_or_else(|| {
        Error::stage(
            Stage::Parse,
            "no_workflow_yaml",
            "the completion holds no ```yaml block and is not a workflow itself; run the prompt again (it must end \
             with one fenced yaml block), or repair the output and call finalize_skill_conversion again"
                .into(),
        )
        .with_output(completion)
    })?;

    // validate
    let text = with_name(&yaml, id).ok_or_else(|| {
        Error::stage(
            Stage::Validate,
            "invalid_config",
            "the YAML is not a mapping of workflow keys (name, initial, nodes, …); repair it and retry".into(),
        )
        .with_output(completion)
    })?;
    if text.len() > MAX_FILE_BYTES {
        return fail(
            Error::stage(
                Stage::Validate,
                "invalid_config",
                "the workflow is larger than 1 MiB; split it into subworkflows".into(),
            )
            .with_output(completion),
        );
    }
    let subject = Subject::Body(Body::Yaml(text.clone()));
    let validated = service
        .validate_workflow(scope, &subject)
        .map_err(|e| Error::at_stage(Stage::Validate, &e).with_output(completion))?;
    if !validated.valid {
        let code = validated.code.unwrap_or("invalid_config");
        let failure = Error::stage(
            Stage::Validate,
            code,
            format!(
                "the converted workflow is not valid ({code}); fix every entry of `details` in the YAML and call \
                 finalize_skill_conversion again, or re-run the prompt — do not invent a workflow the skill does not \
                 describe"
            ),
        )
        .with_output(completion)
        .with_details(validated.errors);
        return fail(failure);
    }
    if let Some(workflow) = definition::validate(&text, &definition::Options::default()).workflow {
        allow_scripts(&workflow, id, actor)
            .map_err(|e| Error::at_stage(Stage::Validate, &e).with_output(completion))?;
    }
    let warnings = service
        .lint_workflow(scope, &subject)
        .map(|linted| linted.warnings)
        .unwrap_or_default();

    // write
    let existing = sources
        .find(source, id)
        .map_err(|e| Error::at_stage(Stage::Write, &e))?;
    if let Some(existing) = &existing
        && !request.overwrite
    {
        let conflict = Error::Conflict {
            id: id.to_owned(),
            in_source: source,
            path: existing.path.clone(),
        };
        let message = format!("{conflict}; or pass `overwrite: true` to replace it");
        return fail(Error::stage(Stage::Write, conflict.as_code(), message));
    }
    let path = existing.map_or_else(|| dir.join(format!("{id}.yaml")), |l| l.path);
    write(&dir, &path, id, &text, &bundle)?;
    let skipped_note = (!bundle.skipped.is_empty()).then(|| {
        let list: Vec<String> = bundle.skipped.iter().map(|d| format!("{d}/")).collect();
        format!(
            "{} not copied: only scripts/ is bundled with a workflow. Move what the workflow needs into its prompts, \
             or copy files into {} by hand.",
            list.join(", "),
            dir.join(id).display()
        )
    });
    Ok(Converted {
        id: id.to_owned(),
        source,
        path,
        asset_count: bundle.scripts.len(),
        skipped_bundle_dirs: bundle.skipped,
        skipped_note,
        warnings,
    })
}

/// The workflow YAML in a completion: the last fenced `yaml`/`yml` block; else the last other fenced block, or the
/// whole text, that reads as a mapping with `nodes`.
fn extract_yaml(completion: &str) -> Option<String> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    for event in Parser::new(completion) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let lang = info.split_whitespace().next().unwrap_or("").to_lowercase();
                current = Some((lang, String::new()));
            }
            Event::Text(text) => {
                if let Some((_, body)) = &mut current {
                    body.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    let is_workflow = |text: &str| {
        cairn_yaml::parse(text)
            .ok()
            .is_some_and(|doc| doc.value.get("nodes").is_some())
    };
    if let Some((_, body)) = blocks
        .iter()
        .rev()
        .find(|(lang, _)| lang == "yaml" || lang == "yml")
    {
        return Some(body.clone());
    }
    if let Some((_, body)) = blocks.iter().rev().find(|(_, body)| is_workflow(body)) {
        return Some(body.clone());
    }
    is_workflow(completion).then(|| completion.to_owned())
}

/// `yaml` with `name: <id>`: an existing name is rewritten in place (formatting kept), a missing one added on top;
/// when neither edit reads back right, the document is written out again. `None` when it is not a mapping.
fn with_name(yaml: &str, id: &str) -> Option<String> {
    let Value::Object(map) = cairn_yaml::parse(yaml).ok()?.value else {
        return None;
    };
    let mut expected = map.clone();
    expected.insert("name".into(), Value::String(id.to_owned()));
    let edited = match map.get("name") {
        Some(Value::String(name)) if name == id => return Some(yaml.to_owned()),
        Some(Value::String(name)) => replace_scalar(yaml, "/name", name, id),
        Some(_) => None,
        None => Some(format!("name: {id}\n{yaml}")),
    };
    let reads_back = |text: &String| {
        cairn_yaml::parse(text)
            .ok()
            .is_some_and(|doc| doc.value == Value::Object(expected.clone()))
    };
    if let Some(text) = edited.filter(reads_back) {
        return Some(text);
    }
    let mut named = Map::new();
    named.insert("name".into(), Value::String(id.to_owned()));
    named.extend(map.into_iter().filter(|(k, _)| k != "name"));
    serde_saphyr::to_string(&Value::Object(named)).ok()
}

/// Writes the workflow and its scripts: scripts are copied to a temp folder first, an old `<id>/scripts/` is moved
/// aside, and the YAML is written last; a failure puts everything back.
fn write(
    dir: &Path,
    path: &Path,
    id: &str,
    text: &str,
    bundle: &Bundle,
) -> Result<(), Box<Error>> {
    let io = |action: &'static str, at: &Path, e: std::io::Error| {
        Box::new(Error::at_stage(
            Stage::Write,
            &Error::io(action, at, &e),
        ))
    };
    fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let assets = dir.join(id);
    let target = assets.join("scripts");
    let staged = match (&bundle.dir, bundle.scripts.is_empty()) {
        (Some(skill_dir), false) => {
            let temp = tempfile::Builder::new()
                .prefix(&format!(".{id}.scripts."))
                .tempdir_in(dir)
                .map_err(|e| io("create", dir, e))?;
            for rel in &bundle.scripts {
                let to = temp.path().join(rel);
                if let Some(parent) = to.parent() {
                    fs::create_dir_all(parent).map_err(|e| io("create", parent, e))?;
                }
                let from = skill_dir.join("scripts").join(rel);
                fs::copy(&from, &to).map_err(|e| io("copy", &from, e))?;
            }
            Some(temp)
        }
        _ => None,
    };
    let assets_existed = assets.exists();
    let backup = if target.exists() {
        let backup = dir.join(format!(".{id}.scripts.old.{}", std::process::id()));
        fs::rename(&target, &backup).map_err(|e| io("move", &target, e))?;
        Some(backup)
    } else {
        None
    };
    let placed = match &staged {
        Some(temp) => fs::create_dir_all(&assets)
            .and_then(|()| fs::rename(temp.path(), &target))
            .map_err(|e| io("move", &target, e)),
        None => Ok(()),
    };
    let written = placed.and_then(|()| write_atomic(path, text).map_err(|e| io("write", path, e)));
    match written {
        Ok(()) => {
            if let Some(backup) = backup {
                let _ = fs::remove_dir_all(backup);
            }
            Ok(())
        }
        Err(failure) => {
            let _ = fs::remove_dir_all(&target);
            if let Some(backup) = backup {
                let _ = fs::rename(backup, &target);
            }
            if !assets_existed {
                let _ = fs::remove_dir(&assets);
            }
            Err(failure)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_is_found_fenced_or_bare() {
        let fenced =
            "Plan: two steps.\n\n```yaml\nname: a\n```\n\nand\n\n```yml\nname: b\nnodes: {}\n```\n";
        assert_eq!(extract_yaml(fenced).unwrap(), "name: b\nnodes: {}\n");
        let unlabeled = "```\nnot: it\n```\n```\ninitial: x\nnodes: { x: {} }\n```\n";
        assert_eq!(
            extract_yaml(unlabeled).unwrap(),
            "initial: x\nnodes: { x: {} }\n"
        );
        let bare = "initial: x\nnodes:\n  x: { type: script }\n";
        assert_eq!(extract_yaml(bare).unwrap(), bare);
        assert!(extract_yaml("I could not convert this skill.").is_none());
        assert!(extract_yaml("```json\n{\"nodes\": 1}\n```\nsorry").is_some());
    }

    #[test]
    fn name_is_forced_to_the_id() {
        assert_eq!(
            with_name("name: x  # keep\ninitial: a\n", "y").unwrap(),
            "name: y  # keep\ninitial: a\n"
        );
        assert_eq!(
            with_name("initial: a\n", "y").unwrap(),
            "name: y\ninitial: a\n"
        );
        assert_eq!(with_name("name: y\n", "y").unwrap(), "name: y\n");
        let flow = with_name("{initial: a, nodes: {}}", "y").unwrap();
        let doc = cairn_yaml::parse(&flow).unwrap();
        assert_eq!(doc.value["name"], "y");
        assert_eq!(doc.value["initial"], "a");
        assert!(with_name("- a\n- b\n", "y").is_none());
    }
}
