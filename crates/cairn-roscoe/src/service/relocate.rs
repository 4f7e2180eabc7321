//! Moving workflows about: `move_workflow` (to the other source), `duplicate_workflow` (a copy under a new id) and
//! `rename_workflow` (with its formatting-preserving reference cascade), all carrying the asset folder. Each keeps a
//! [`Journal`] of undo steps, so a failure half-way restores every file it touched.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Service;
use crate::error::Error;
use crate::files::{copy_tree, move_tree, write_atomic};
use crate::references::subworkflow_refs;
use crate::scope::Scope;
use crate::source::Source;
use crate::sources::{Located, Sources, check_id};
use crate::yaml_edit::replace_scalar;

/// `move_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Moved {
    /// Always `true`.
    pub ok: bool,
    /// The id.
    pub id: String,
    /// The source it left.
    pub from: Source,
    /// The source it is in now.
    pub to: Source,
    /// The new file.
    pub path: PathBuf,
}

/// `duplicate_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Duplicated {
    /// The new id.
    pub id: String,
    /// The new copy's source.
    pub source: Source,
    /// The new file.
    pub path: PathBuf,
}

/// `rename_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Renamed {
    /// The new id.
    pub id: String,
    /// Its source.
    pub source: Source,
    /// Its file (the old one again when rolled back).
    pub path: PathBuf,
    /// Referring workflows rewritten to the new id (empty when rolled back).
    pub rewritten: Vec<String>,
    /// Referring workflows that could not be rewritten.
    pub failed: Vec<String>,
    /// Whether a failure undid the whole rename.
    pub rolled_back: bool,
    /// With `rolledBack`: what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With `rolledBack`: `io_error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
}

/// Undo steps of a multi-file operation, run newest first.
#[derive(Default)]
struct Journal {
    undo: Vec<Undo>,
}

enum Undo {
    Remove(PathBuf),
    Restore(PathBuf, String),
    MoveBack { from: PathBuf, to: PathBuf },
    RemoveTree(PathBuf),
}

impl Journal {
    /// Undoes everything recorded (best effort: every step is tried).
    fn roll_back(self) {
        for step in self.undo.into_iter().rev() {
            let _ = match step {
                Undo::Remove(path) => fs::remove_file(path),
                Undo::Restore(path, text) => restore(&path, &text),
                Undo::MoveBack { from, to } => move_tree(&from, &to),
                Undo::RemoveTree(path) => fs::remove_dir_all(path),
            };
        }
    }
}

/// Writes `text` back to `path`, even when it has since been made read-only.
fn restore(path: &Path, text: &str) -> std::io::Result<()> {
    match write_atomic(path, text) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => fs::write(path, text),
        other => other,
    }
}

/// `text` with its `name:` changed from `old` to `new` (unchanged when there is no `name`).
fn rename_name(text: &str, old: &str, new: &str) -> Result<String, Error> {
    let named = cairn_yaml::parse(text)
        .ok()
        .is_some_and(|doc| doc.value.get("name").is_some());
    if !named {
        return Ok(text.to_owned());
    }
    replace_scalar(text, "/name", old, new).ok_or_else(|| Error::InvalidConfig {
        message: format!(
            "cannot rewrite `name: {old}` to `name: {new}` in place; set `name: {old}` as a plain scalar and retry"
        ),
        details: Vec::new(),
    })
}

impl Service {
    /// `move_workflow`: moves file and assets to `to`; `from` defaults to where the id resolves.
    pub fn move_workflow(
        &self,
        scope: &Scope,
        id: &str,
        to: Source,
        from: Option<Source>,
    ) -> Result<Moved, Error> {
        let sources = self.sources(scope);
        let to_dir = sources.dir(to)?.to_owned();
        let located = sources.resolve(id, from)?;
        if located.source == to {
            return Err(Error::InvalidInput(format!(
                "workflow '{id}' is already in the {to} source; pass the other source as `to`"
            )));
        }
        let target = Located {
            id: id.to_owned(),
            source: to,
            path: to_dir.join(
                located
                    .path
                    .file_name()
                    .expect("a workflow file has a name"),
            ),
        };
        self.refuse_existing(&sources, &target)?;
        let text = located.read()?;
        let mut journal = Journal::default();
        let result = (|| {
            fs::create_dir_all(&to_dir).map_err(|e| Error::io("create", &to_dir, &e))?;
            write_atomic(&target.path, &text).map_err(|e| Error::io("write", &target.path, &e))?;
            journal.undo.push(Undo::Remove(target.path.clone()));
            self.carry_assets(&located, &target, &mut journal)?;
            fs::remove_file(&located.path).map_err(|e| Error::io("delete", &located.path, &e))?;
            Ok(())
        })();
        if let Err(e) = result {
            journal.roll_back();
            return Err(e);
        }
        Ok(Moved {
            ok: true,
            id: id.to_owned(),
            from: located.source,
            to,
            path: target.path,
        })
    }

    /// `conflict` when `target`'s id already has a file or an asset folder in its source.
    fn refuse_existing(&self, sources: &Sources, target: &Located) -> Result<(), Error> {
        let existing = sources
            .find(target.source, &target.id)?
            .map(|l| l.path)
            .or_else(|| Some(target.assets()).filter(|a| a.exists()));
        match existing {
            Some(path) => Err(Error::Conflict {
                id: target.id.clone(),
                in_source: target.source,
                path,
            }),
            None => Ok(()),
        }
    }

    /// Moves `from`'s asset folder to `to`'s, recording the undo step.
    fn carry_assets(
        &self,
        from: &Located,
        to: &Located,
        journal: &mut Journal,
    ) -> Result<(), Error> {
        let (old, new) = (from.assets(), to.assets());
        if old.is_dir() {
            move_tree(&old, &new).map_err(|e| Error::io("move", &old, &e))?;
            journal.undo.push(Undo::MoveBack { from: new, to: old });
        }
        Ok(())
    }

    /// `duplicate_workflow`: copies file and assets to `to_id` (in `to_source`, default the same source), with
    /// `name` rewritten.
    pub fn duplicate_workflow(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
        to_id: &str,
        to_source: Option<Source>,
    ) -> Result<Duplicated, Error> {
        check_id(to_id)?;
        let sources = self.sources(scope);
        let located = sources.resolve(id, source)?;
        let to = to_source.unwrap_or(located.source);
        let to_dir = sources.dir(to)?.to_owned();
        let target = Located {
            id: to_id.to_owned(),
            source: to,
            path: to_dir.join(format!("{to_id}.yaml")),
        };
        self.refuse_existing(&sources, &target)?;
        let text = rename_name(&located.read()?, id, to_id)?;
        let mut journal = Journal::default();
        let result = (|| {
            fs::create_dir_all(&to_dir).map_err(|e| Error::io("create", &to_dir, &e))?;
            write_atomic(&target.path, &text).map_err(|e| Error::io("write", &target.path, &e))?;
            journal.undo.push(Undo::Remove(target.path.clone()));
            let (old, new) = (located.assets(), target.assets());
            if old.is_dir() {
                journal.undo.push(Undo::RemoveTree(new.clone()));
                copy_tree(&old, &new).map_err(|e| Error::io("copy", &old, &e))?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            journal.roll_back();
            return Err(e);
        }
        Ok(Duplicated {
            id: to_id.to_owned(),
            source: to,
            path: target.path,
        })
    }

    /// `rename_workflow`: renames file, `name` and assets; with `rewrite_references`, rewrites every referrer's
    /// `workflow:` scalar in place. All or nothing: on any failure every file is restored and `rolled_back` is set.
    pub fn rename_workflow(
        &self,
        scope: &Scope,
        id: &str,
        new_id: &str,
        source: Option<Source>,
        rewrite_references: bool,
    ) -> Result<Renamed, Error> {
        check_id(new_id)?;
        let sources = self.sources(scope);
        let located = sources.resolve(id, source)?;
        if new_id == id {
            return Err(Error::InvalidInput(format!(
                "the workflow is already called '{id}'; pass a different `new_id`"
            )));
        }
        let target = Located {
            id: new_id.to_owned(),
            source: located.source,
            path: located.path.with_file_name(format!(
                "{new_id}.{}",
                located
                    .path
                    .extension()
                    .and_then(|e| e.to_str())
                    .unwrap_or("yaml")
            )),
        };
        self.refuse_existing(&sources, &target)?;
        let original = located.read()?;
        let mut renamed = rename_name(&original, id, new_id)?;

        // Plan every referrer edit before touching anything.
        let mut edits: Vec<(Located, String, String)> = Vec::new();
        let mut failed = Vec::new();
        if rewrite_references {
            let self_refs = subworkflow_refs(&original, id).unwrap_or_default();
            for r in self_refs.iter().filter(|r| r.can_reach(located.source)) {
                match replace_scalar(&renamed, &r.pointer(), id, new_id) {
                    Some(text) => renamed = text,
                    None => failed.push(id.to_owned()),
                }
            }
            let (referrers, _) = self.referrers_of(&sources, &located)?;
            for (file, refs) in referrers {
                let before = file.read()?;
                let after = refs.iter().try_fold(before.clone(), |text, r| {
                    replace_scalar(&text, &r.pointer(), id, new_id)
                });
                match after {
                    Some(after) => edits.push((file, before, after)),
                    None => failed.push(file.id.clone()),
                }
            }
        }
        let rolled_back = |failed: Vec<String>, error: String| Renamed {
            id: id.to_owned(),
            source: located.source,
            path: located.path.clone(),
            rewritten: Vec::new(),
            failed,
            rolled_back: true,
            error: Some(error),
            code: Some("io_error"),
        };
        if !failed.is_empty() {
            let error = format!(
                "could not rewrite the reference to '{id}' in place in: {}; nothing was changed — edit those references by hand or pass rewrite_references: false",
                failed.join(", ")
            );
            return Ok(rolled_back(failed, error));
        }

        let mut journal = Journal::default();
        let mut rewritten = Vec::new();
        let step = (|| {
            write_atomic(&target.path, &renamed)
                .map_err(|e| Error::io("write", &target.path, &e))?;
            journal.undo.push(Undo::Remove(target.path.clone()));
            self.carry_assets(&located, &target, &mut journal)?;
            fs::remove_file(&located.path).map_err(|e| Error::io("delete", &located.path, &e))?;
            journal
                .undo
                .push(Undo::Restore(located.path.clone(), original.clone()));
            for (file, before, after) in &edits {
                if let Err(e) = write_atomic(&file.path, after) {
                    failed.push(file.id.clone());
                    return Err(Error::io("write", &file.path, &e));
                }
                journal
                    .undo
                    .push(Undo::Restore(file.path.clone(), before.clone()));
                rewritten.push(file.id.clone());
            }
            Ok(())
        })();
        if let Err(e) = step {
            journal.roll_back();
            return Ok(rolled_back(
                failed,
                format!("{e}; the rename was undone and every file restored"),
            ));
        }
        Ok(Renamed {
            id: new_id.to_owned(),
            source: located.source,
            path: target.path,
            rewritten,
            failed,
            rolled_back: false,
            error: None,
            code: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::service::Subject;
    use crate::service::crud::tests::{CHILD, Env, code, parent};

    #[test]
    fn move_carries_assets_both_ways() {
        let env = Env::new();
        let created = env.create("child", CHILD, Some(Source::Global));
        fs::create_dir_all(env.global_dir().join("child/scripts")).unwrap();
        fs::write(env.global_dir().join("child/scripts/run.sh"), "echo").unwrap();
        let moved = env
            .service
            .move_workflow(&env.scope, "child", Source::Repo, None)
            .unwrap();
        assert_eq!((moved.from, moved.to), (Source::Global, Source::Repo));
        assert_eq!(moved.path, env.repo_dir().join("child.yaml"));
        assert!(!created.path.exists());
        assert!(!env.global_dir().join("child").exists());
        assert_eq!(
            fs::read_to_string(env.repo_dir().join("child/scripts/run.sh")).unwrap(),
            "echo"
        );
        assert_eq!(fs::read_to_string(&moved.path).unwrap(), CHILD);
        let json = serde_json::to_value(&moved).unwrap();
        assert_eq!(json["ok"], true);
        assert_eq!(json["to"], "repo");

        let back = env
            .service
            .move_workflow(&env.scope, "child", Source::Global, None)
            .unwrap();
        assert_eq!(back.path, created.path);
        assert!(env.global_dir().join("child/scripts/run.sh").is_file());
    }

    #[test]
    fn move_errors() {
        let env = Env::new();
        env.create("child", CHILD, Some(Source::Global));
        let s = &env.service;
        assert_eq!(
            code(s.move_workflow(&env.scope, "child", Source::Global, None)),
            "invalid_input"
        );
        assert_eq!(
            code(s.move_workflow(&Scope::Global, "child", Source::Repo, None)),
            "no_repo_source"
        );
        assert_eq!(
            code(s.move_workflow(&env.scope, "ghost", Source::Repo, None)),
            "not_found"
        );
        env.create("child", CHILD, Some(Source::Repo));
        assert_eq!(
            code(s.move_workflow(&env.scope, "child", Source::Repo, Some(Source::Global))),
            "conflict"
        );
        assert!(env.global_dir().join("child.yaml").exists());
    }

    #[test]
    fn duplicate_copies_assets_and_rewrites_name_only() {
        let env = Env::new();
        let text = parent("parent", "child");
        env.create("child", CHILD, Some(Source::Global));
        env.create("parent", &text, Some(Source::Global));
        fs::create_dir_all(env.global_dir().join("parent/scripts")).unwrap();
        fs::write(env.global_dir().join("parent/scripts/a.sh"), "a").unwrap();
        let dup = env
            .service
            .duplicate_workflow(
                &env.scope,
                "parent",
                None,
                "parent-copy",
                Some(Source::Repo),
            )
            .unwrap();
        assert_eq!(dup.source, Source::Repo);
        assert_eq!(
            fs::read_to_string(&dup.path).unwrap(),
            text.replace("name: parent ", "name: parent-copy ")
        );
        assert!(env.repo_dir().join("parent-copy/scripts/a.sh").is_file());
        assert!(env.global_dir().join("parent/scripts/a.sh").is_file());
        assert!(
            env.service
                .get_workflow(&env.scope, "parent-copy", None)
                .is_ok()
        );

        let s = &env.service;
        assert_eq!(
            code(s.duplicate_workflow(&env.scope, "parent", None, "Bad Id", None)),
            "invalid_id"
        );
        assert_eq!(
            code(s.duplicate_workflow(&env.scope, "parent", None, "child", None)),
            "conflict"
        );
        assert_eq!(
            code(s.duplicate_workflow(&env.scope, "ghost", None, "x", None)),
            "not_found"
        );
        assert_eq!(
            code(s.duplicate_workflow(&Scope::Global, "parent", None, "x", Some(Source::Repo))),
            "no_repo_source"
        );
    }

    #[test]
    fn rename_cascades_keeping_formatting() {
        let env = Env::new();
        env.create(
            "child",
            &CHILD.replace("name: child", "name: 'child'  # quoted"),
            Some(Source::Global),
        );
        fs::create_dir_all(env.global_dir().join("child/scripts")).unwrap();
        let p1 = parent("p1", "child");
        let p2 = parent("p2", "child");
        env.create("p1", &p1, Some(Source::Repo));
        env.create("p2", &p2, Some(Source::Global));
        let explicit =
            parent("p3", "child").replace("inputs: {}", "source: repo\n      inputs: {}");
        env.create("p3", &explicit, Some(Source::Global));

        let renamed = env
            .service
            .rename_workflow(&env.scope, "child", "kid", None, true)
            .unwrap();
        assert!(!renamed.rolled_back, "{renamed:?}");
        assert_eq!(renamed.id, "kid");
        assert_eq!(renamed.rewritten, ["p1", "p2"]);
        assert!(renamed.failed.is_empty());
        assert_eq!(renamed.path, env.global_dir().join("kid.yaml"));
        assert_eq!(
            fs::read_to_string(&renamed.path).unwrap(),
            CHILD.replace("name: child", "name: 'kid'  # quoted")
        );
        assert!(!env.global_dir().join("child.yaml").exists());
        assert!(env.global_dir().join("kid/scripts").is_dir());
        assert!(!env.global_dir().join("child").exists());
        let edit = |t: &str| t.replace("workflow: \"child\"", "workflow: \"kid\"");
        assert_eq!(
            fs::read_to_string(env.repo_dir().join("p1.yaml")).unwrap(),
            edit(&p1)
        );
        assert_eq!(
            fs::read_to_string(env.global_dir().join("p2.yaml")).unwrap(),
            edit(&p2)
        );
        // A node pinned to the repo source does not point at the global child.
        assert_eq!(
            fs::read_to_string(env.global_dir().join("p3.yaml")).unwrap(),
            explicit
        );
        let json = serde_json::to_value(&renamed).unwrap();
        assert_eq!(json["rolledBack"], false);
        assert!(json.get("code").is_none());
    }

    #[test]
    fn rename_without_cascade_leaves_references() {
        let env = Env::new();
        env.create("child", CHILD, None);
        let p = parent("p", "child");
        env.create("p", &p, None);
        let renamed = env
            .service
            .rename_workflow(&env.scope, "child", "kid", None, false)
            .unwrap();
        assert!(renamed.rewritten.is_empty());
        assert_eq!(
            fs::read_to_string(env.global_dir().join("p.yaml")).unwrap(),
            p
        );
        let lint = env
            .service
            .lint_workflow(
                &env.scope,
                &Subject::Stored {
                    id: "p".into(),
                    source: None,
                },
            )
            .unwrap();
        assert!(
            lint.warnings
                .iter()
                .any(|w| w.code == "unknown_subworkflow"),
            "{lint:?}"
        );
    }

    #[test]
    fn rename_rolls_back_every_file_when_a_referrer_write_fails() {
        let env = Env::new();
        let child = CHILD.to_owned();
        env.create("child", &child, Some(Source::Global));
        fs::create_dir_all(env.global_dir().join("child/scripts")).unwrap();
        let a = parent("a-parent", "child");
        let b = parent("b-parent", "child");
        env.create("a-parent", &a, Some(Source::Global));
        env.create("b-parent", &b, Some(Source::Global));
        let locked = env.global_dir().join("b-parent.yaml");
        let mut perms = fs::metadata(&locked).unwrap().permissions();
        perms.set_readonly(true);
        fs::set_permissions(&locked, perms).unwrap();

        let renamed = env
            .service
            .rename_workflow(&env.scope, "child", "kid", None, true)
            .unwrap();
        assert!(renamed.rolled_back);
        assert_eq!(renamed.failed, ["b-parent"]);
        assert!(renamed.rewritten.is_empty());
        assert_eq!(renamed.code, Some("io_error"));
        assert_eq!(renamed.path, env.global_dir().join("child.yaml"));
        assert_eq!(
            fs::read_to_string(env.global_dir().join("child.yaml")).unwrap(),
            child
        );
        assert!(!env.global_dir().join("kid.yaml").exists());
        assert!(env.global_dir().join("child/scripts").is_dir());
        assert!(!env.global_dir().join("kid").exists());
        assert_eq!(
            fs::read_to_string(env.global_dir().join("a-parent.yaml")).unwrap(),
            a
        );
        assert_eq!(fs::read_to_string(&locked).unwrap(), b);
        let names: Vec<String> = fs::read_dir(env.global_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn rename_errors() {
        let env = Env::new();
        env.create("child", CHILD, None);
        env.create("other", &CHILD.replace("name: child", "name: other"), None);
        let s = &env.service;
        assert_eq!(
            code(s.rename_workflow(&env.scope, "child", "other", None, true)),
            "conflict"
        );
        assert_eq!(
            code(s.rename_workflow(&env.scope, "child", "../x", None, true)),
            "invalid_id"
        );
        assert_eq!(
            code(s.rename_workflow(&env.scope, "ghost", "x", None, true)),
            "not_found"
        );
        assert_eq!(
            code(s.rename_workflow(&env.scope, "child", "child", None, true)),
            "invalid_input"
        );
    }
}
