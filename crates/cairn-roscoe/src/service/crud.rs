//! The everyday authoring calls of the facade: `list_workflows`, `get_workflow`, `create_workflow`,
//! `update_workflow`, `delete_workflow` and `list_workflow_references`, with their result structs.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Body, FileRefs, LintWarning, Service, detail};
use crate::actor::Actor;
use crate::clock::{now_ms, rfc3339};
use crate::definition::{self, Options, Trigger};
use crate::error::{Error, Referrer};
use crate::files::write_atomic;
use crate::references::subworkflow_refs;
use crate::scope::Scope;
use crate::source::Source;
use crate::sources::check_id;

/// One entry of `list_workflows`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowSummary {
    /// The id (file stem).
    pub id: String,
    /// The `name` field, else the id.
    pub name: String,
    /// The description, `null` when there is none or the file cannot be read.
    pub description: Option<String>,
    /// Where it lives.
    pub source: Source,
    /// A global workflow hidden by a repo workflow of the same id.
    pub shadowed: bool,
    /// Why the file cannot be read, so it can be found and fixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its triggers (a valid workflow's), with when each timed one fires next.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<TriggerState>,
}

/// A workflow's trigger as `list_workflows` and `get_workflow` show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TriggerState {
    /// `schedule`, `every` or `webhook`.
    pub kind: &'static str,
    /// The cron expression, the interval, or the webhook secret's variable.
    pub expression: String,
    /// A schedule's time zone (`UTC` when it names none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// When a schedule or interval fires next (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_fire_at: Option<String>,
    /// Whether its schedules are paused (`roscoe schedules pause`); always false for a webhook.
    pub paused: bool,
}

impl TriggerState {
    /// `trigger` as of now, not paused (the run facade, which reads the schedules' state, marks paused ones).
    pub(crate) fn of(trigger: &Trigger) -> TriggerState {
        TriggerState {
            kind: trigger.kind(),
            expression: trigger.expression().to_owned(),
            timezone: match trigger {
                Trigger::Schedule { timezone, .. } => Some(timezone.clone().unwrap_or_else(|| "UTC".into())),
                _ => None,
            },
            next_fire_at: trigger.next_after(now_ms()).map(rfc3339),
            paused: false,
        }
    }
}

/// `get_workflow`: the workflow as written, plus where it lives.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkflowDetail {
    /// The workflow config (the YAML document as JSON; `name` filled in when the file omits it).
    #[serde(flatten)]
    pub config: Map<String, Value>,
    /// Where it lives.
    pub source: Source,
    /// Its file.
    pub path: PathBuf,
    /// Its triggers, with when each timed one fires next (`triggers` above is the file's text).
    #[serde(rename = "triggerStates", skip_serializing_if = "Vec::is_empty")]
    pub trigger_states: Vec<TriggerState>,
}

/// `create_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Created {
    /// The id.
    pub id: String,
    /// Where it was written.
    pub source: Source,
    /// The new file.
    pub path: PathBuf,
    /// Lint warnings (not errors).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<LintWarning>,
}

/// `update_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Updated {
    /// Always `true`.
    pub ok: bool,
    /// Where it lives.
    pub source: Source,
    /// The file written.
    pub path: PathBuf,
    /// Lint warnings (not errors).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<LintWarning>,
}

/// `delete_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deleted {
    /// Always `true`.
    pub ok: bool,
    /// The file deleted.
    pub path: PathBuf,
    /// Where it lived.
    pub source: Source,
}

/// `list_workflow_references`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct References {
    /// One entry per subworkflow node naming the id.
    pub referrers: Vec<Referrer>,
    /// Files that could not be read and were skipped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Service {
    /// `list_workflows`: every workflow in scope (or in `source`), by id, repo before global.
    pub fn list_workflows(
        &self,
        scope: &Scope,
        source: Option<Source>,
    ) -> Result<Vec<WorkflowSummary>, Error> {
        let sources = self.sources(scope);
        if let Some(source) = source {
            sources.dir(source)?;
        }
        let all = sources.list()?;
        let repo_ids: BTreeSet<&str> = all
            .iter()
            .filter(|l| l.source == Source::Repo)
            .map(|l| l.id.as_str())
            .collect();
        Ok(all
            .iter()
            .filter(|l| source.is_none_or(|s| s == l.source))
            .map(|l| {
                let mut summary = WorkflowSummary {
                    id: l.id.clone(),
                    name: l.id.clone(),
                    description: None,
                    source: l.source,
                    shadowed: l.source == Source::Global && repo_ids.contains(l.id.as_str()),
                    error: None,
                    triggers: Vec::new(),
                };
                let heading = self.summaries.heading(l);
                if let Some(name) = heading.name {
                    summary.name = name;
                }
                summary.description = heading.description;
                summary.error = heading.error;
                summary.triggers = heading.triggers.iter().map(TriggerState::of).collect();
                summary
            })
            .collect())
    }

    /// `get_workflow`: the config as written, repo first unless `source` is given.
    pub fn get_workflow(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
    ) -> Result<WorkflowDetail, Error> {
        let located = self.sources(scope).resolve(id, source)?;
        let text = located.read()?;
        let validation = definition::validate(
            &text,
            &Options {
                id: Some(id.to_owned()),
                ..Options::default()
            },
        );
        let Some(workflow) = validation.workflow else {
            return Err(Error::InvalidConfig {
                message: format!(
                    "{} is not a valid workflow; fix every entry of `details`",
                    located.path.display()
                ),
                details: validation.diagnostics.iter().map(detail).collect(),
            });
        };
        let doc = definition::read_yaml(&text).map_err(|message| Error::InvalidConfig {
            message,
            details: Vec::new(),
        })?;
        let Value::Object(config) = doc.value else {
            unreachable!("schema-valid workflows are mappings")
        };
        let mut named = Map::new();
        if !config.contains_key("name") {
            named.insert("name".into(), Value::String(id.to_owned()));
        }
        named.extend(config);
        Ok(WorkflowDetail {
            config: named,
            source: located.source,
            path: located.path,
            trigger_states: workflow.triggers.iter().map(TriggerState::of).collect(),
        })
    }

    /// `create_workflow`: validates, then writes a new file (default source: repo when it exists, else global).
    pub fn create_workflow(
        &self,
        scope: &Scope,
        id: &str,
        body: &Body,
        source: Option<Source>,
        actor: &Actor,
    ) -> Result<Created, Error> {
        check_id(id)?;
        let sources = self.sources(scope);
        let source = source.unwrap_or_else(|| sources.default_source());
        let dir = sources.dir(source)?.to_owned();
        if let Some(existing) = sources.find(source, id)? {
            return Err(Error::Conflict {
                id: id.to_owned(),
                in_source: source,
                path: existing.path,
            });
        }
        let text = body.text(id)?;
        let warnings = self.check(&sources, &text, id, actor)?;
        fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, &e))?;
        let path = sources.new_path(source, id)?;
        write_atomic(&path, &text).map_err(|e| Error::io("write", &path, &e))?;
        Ok(Created {
            id: id.to_owned(),
            source,
            path,
            warnings,
        })
    }

    /// `update_workflow`: validates, then replaces the file that resolves (or the one in `source`).
    pub fn update_workflow(
        &self,
        scope: &Scope,
        id: &str,
        body: &Body,
        source: Option<Source>,
        actor: &Actor,
    ) -> Result<Updated, Error> {
        self.update_workflow_from(scope, id, body, source, None, actor)
    }

    /// `update_workflow` from an editor that read the file as `expected` (its text): refused with `stale_edit`,
    /// writing nothing, when the file has changed since.
    pub fn update_workflow_from(
        &self,
        scope: &Scope,
        id: &str,
        body: &Body,
        source: Option<Source>,
        expected: Option<&str>,
        actor: &Actor,
    ) -> Result<Updated, Error> {
        let sources = self.sources(scope);
        let located = sources.resolve(id, source)?;
        if let Some(expected) = expected
            && located.read()? != expected
        {
            return Err(Error::Refused {
                code: "stale_edit",
                message: format!(
                    "{} changed since it was opened for editing; reload it, apply your change again and save",
                    located.path.display()
                ),
                extra: serde_json::Map::new(),
            });
        }
        let text = body.text(id)?;
        let warnings = self.check(&sources, &text, id, actor)?;
        write_atomic(&located.path, &text).map_err(|e| Error::io("write", &located.path, &e))?;
        Ok(Updated {
            ok: true,
            source: located.source,
            path: located.path,
            warnings,
        })
    }

    /// `delete_workflow`: needs `confirm`; refuses while referenced unless `force`. Removes the file and its assets.
    pub fn delete_workflow(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
        confirm: bool,
        force: bool,
    ) -> Result<Deleted, Error> {
        let sources = self.sources(scope);
        let located = sources.resolve(id, source)?;
        if !confirm {
            return Err(Error::ConfirmRequired { path: located.path });
        }
        if !force {
            let (referrers, _) = self.referrers_of(&sources, &located)?;
            if !referrers.is_empty() {
                return Err(Error::Referenced {
                    id: id.to_owned(),
                    referenced_by: flatten(referrers),
                });
            }
        }
        fs::remove_file(&located.path).map_err(|e| Error::io("delete", &located.path, &e))?;
        let assets = located.assets();
        if assets.is_dir() {
            fs::remove_dir_all(&assets).map_err(|e| Error::io("delete", &assets, &e))?;
        }
        Ok(Deleted {
            ok: true,
            path: located.path,
            source: located.source,
        })
    }

    /// `list_workflow_references`: every subworkflow node in scope naming `id`, whatever its source.
    pub fn list_workflow_references(&self, scope: &Scope, id: &str) -> Result<References, Error> {
        check_id(id)?;
        let sources = self.sources(scope);
        let mut referrers = Vec::new();
        let mut warnings = Vec::new();
        for file in sources.list()? {
            match file
                .read()
                .map_err(|e| e.to_string())
                .and_then(|text| subworkflow_refs(&text, id))
            {
                Ok(refs) => referrers.extend(refs.into_iter().map(|r| Referrer {
                    workflow_id: file.id.clone(),
                    node_id: r.node_id,
                    source: file.source,
                })),
                Err(e) => warnings.push(format!("skipped {}: {e}", file.path.display())),
            }
        }
        Ok(References {
            referrers,
            warnings,
        })
    }
}

fn flatten(referrers: Vec<FileRefs>) -> Vec<Referrer> {
    referrers
        .into_iter()
        .flat_map(|(file, refs)| {
            refs.into_iter().map(move |r| Referrer {
                workflow_id: file.id.clone(),
                node_id: r.node_id,
                source: file.source,
            })
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;

    use serde_json::json;
    use tempfile::TempDir;

    use super::*;
    use crate::scope::tests::git_init;

    pub(crate) const CHILD: &str = "name: child\ninitial: step\nnodes:\n  step:\n    type: script\n    config: { command: \"echo hi\" }\n    transitions: { success: $end, failure: $fail }\n";

    pub(crate) fn parent(name: &str, child: &str) -> String {
        format!(
            "# {name}: calls {child}\nname: {name}   # keep me\ndescription: \"Calls the child\"\ninitial: call\nnodes:\n  call:\n    type: subworkflow\n    config:\n      workflow: \"{child}\"   # the child\n      inputs: {{}}\n    transitions: {{ success: $end, failure: $fail }}\n"
        )
    }

    pub(crate) struct Env {
        pub(crate) home: TempDir,
        proj: TempDir,
        pub(crate) service: Service,
        pub(crate) scope: Scope,
    }

    impl Env {
        pub(crate) fn new() -> Env {
            let home = tempfile::tempdir().unwrap();
            let proj = tempfile::tempdir().unwrap();
            git_init(proj.path());
            let sub = proj.path().join("src");
            fs::create_dir_all(&sub).unwrap();
            let scope = Scope::project(sub.to_str().unwrap()).unwrap();
            Env {
                service: Service::new(home.path()),
                home,
                proj,
                scope,
            }
        }

        pub(crate) fn repo_dir(&self) -> PathBuf {
            self.proj
                .path()
                .canonicalize()
                .unwrap()
                .join(".roscoe/workflows")
        }

        pub(crate) fn global_dir(&self) -> PathBuf {
            self.home.path().join("workflows")
        }

        pub(crate) fn create(&self, id: &str, text: &str, source: Option<Source>) -> Created {
            self.service
                .create_workflow(&self.scope, id, &Body::Yaml(text.into()), source, &Actor::local("mcp"))
                .unwrap()
        }
    }

    pub(crate) fn code<T: std::fmt::Debug>(r: Result<T, Error>) -> &'static str {
        r.unwrap_err().as_code()
    }

    #[test]
    fn fixtures_are_valid() {
        assert!(definition::parse(CHILD, Some("child")).is_ok());
        let p = parent("parent", "child");
        assert!(
            definition::parse(&p, Some("parent")).is_ok(),
            "{:?}",
            definition::parse(&p, Some("parent"))
        );
    }

    #[test]
    fn create_defaults_to_global_without_a_repo_source_and_to_repo_with_one() {
        let env = Env::new();
        let created = env.create("child", CHILD, None);
        assert_eq!(created.source, Source::Global);
        assert_eq!(created.path, env.global_dir().join("child.yaml"));
        assert_eq!(fs::read_to_string(&created.path).unwrap(), CHILD);

        fs::create_dir_all(env.repo_dir()).unwrap();
        let created = env.create("other", &CHILD.replace("name: child", "name: other"), None);
        assert_eq!(created.source, Source::Repo);
        assert_eq!(created.path, env.repo_dir().join("other.yaml"));
    }

    #[test]
    fn create_with_explicit_repo_creates_the_directory() {
        let env = Env::new();
        let created = env.create("child", CHILD, Some(Source::Repo));
        assert_eq!(created.path, env.repo_dir().join("child.yaml"));
    }

    #[test]
    fn create_errors() {
        let env = Env::new();
        let s = &env.service;
        let body = Body::Yaml(CHILD.into());
        assert_eq!(
            code(s.create_workflow(&env.scope, "../evil", &body, None, &Actor::local("mcp"))),
            "invalid_id"
        );
        assert_eq!(
            code(s.create_workflow(&Scope::Global, "child", &body, Some(Source::Repo), &Actor::local("mcp"))),
            "no_repo_source"
        );
        assert_eq!(
            code(s.create_workflow(&env.scope, "child", &Body::Yaml("name: [".into()), None, &Actor::local("mcp"))),
            "invalid_config"
        );
        let broken = CHILD.replace("success: $end", "success: nowhere");
        let err = s
            .create_workflow(&env.scope, "child", &Body::Yaml(broken), None, &Actor::local("mcp"))
            .unwrap_err();
        assert_eq!(err.as_code(), "integrity_error");
        assert!(
            err.body()["details"][0]
                .as_str()
                .unwrap()
                .contains("unknown_target")
        );
        assert!(!env.global_dir().join("child.yaml").exists());

        env.create("child", CHILD, None);
        let err = s
            .create_workflow(&env.scope, "child", &body, None, &Actor::local("mcp"))
            .unwrap_err();
        assert_eq!(err.as_code(), "conflict");
        assert_eq!(
            code(Body::from_inputs(Some(json!({})), Some(String::new()))),
            "invalid_input"
        );
    }

    #[test]
    fn create_from_a_config_object_defaults_the_name() {
        let env = Env::new();
        let config = json!({
            "initial": "step",
            "nodes": { "step": { "type": "script", "config": { "command": "true" },
                                "transitions": { "success": "$end", "failure": "$fail" } } }
        });
        let created = env
            .service
            .create_workflow(&env.scope, "fromjson", &Body::Config(config), None, &Actor::local("mcp"))
            .unwrap();
        let got = env
            .service
            .get_workflow(&env.scope, "fromjson", None)
            .unwrap();
        assert_eq!(got.config["name"], "fromjson");
        assert_eq!(got.path, created.path);
    }

    #[test]
    fn get_is_repo_first_and_reports_errors() {
        let env = Env::new();
        env.create("child", CHILD, Some(Source::Global));
        let repo_child = CHILD.replace("echo hi", "echo repo");
        env.create("child", &repo_child, Some(Source::Repo));
        let got = env.service.get_workflow(&env.scope, "child", None).unwrap();
        assert_eq!(got.source, Source::Repo);
        assert_eq!(
            got.config["nodes"]["step"]["config"]["command"],
            "echo repo"
        );
        let json = serde_json::to_value(&got).unwrap();
        assert_eq!(json["source"], "repo");
        assert_eq!(json["initial"], "step");
        let global = env
            .service
            .get_workflow(&env.scope, "child", Some(Source::Global))
            .unwrap();
        assert_eq!(global.source, Source::Global);

        assert_eq!(
            code(env.service.get_workflow(&env.scope, "nope", None)),
            "not_found"
        );
        assert_eq!(
            code(
                env.service
                    .get_workflow(&Scope::Global, "child", Some(Source::Repo))
            ),
            "no_repo_source"
        );
        fs::write(env.global_dir().join("bad.yaml"), "nodes: [").unwrap();
        let err = env
            .service
            .get_workflow(&env.scope, "bad", None)
            .unwrap_err();
        assert_eq!(err.as_code(), "invalid_config");
        assert!(!err.body()["details"].as_array().unwrap().is_empty());
    }

    #[test]
    fn list_marks_shadowed_globals_and_unreadable_files() {
        let env = Env::new();
        env.create("child", CHILD, Some(Source::Global));
        env.create("child", CHILD, Some(Source::Repo));
        env.create("parent", &parent("parent", "child"), Some(Source::Global));
        fs::write(env.global_dir().join("broken.yaml"), "nodes: [").unwrap();
        let list = env.service.list_workflows(&env.scope, None).unwrap();
        let rows: Vec<(&str, Source, bool)> = list
            .iter()
            .map(|w| (w.id.as_str(), w.source, w.shadowed))
            .collect();
        assert_eq!(
            rows,
            [
                ("broken", Source::Global, false),
                ("child", Source::Repo, false),
                ("child", Source::Global, true),
                ("parent", Source::Global, false),
            ]
        );
        assert!(list[0].error.is_some());
        assert_eq!(list[0].description, None);
        assert_eq!(list[3].description.as_deref(), Some("Calls the child"));
        let json = serde_json::to_value(&list[1]).unwrap();
        assert_eq!(
            json,
            json!({"id": "child", "name": "child", "description": null, "source": "repo", "shadowed": false})
        );

        let repo_only = env
            .service
            .list_workflows(&env.scope, Some(Source::Repo))
            .unwrap();
        assert_eq!(repo_only.len(), 1);
        let global = env.service.list_workflows(&Scope::Global, None).unwrap();
        assert!(
            global
                .iter()
                .all(|w| w.source == Source::Global && !w.shadowed)
        );
        assert_eq!(
            code(
                env.service
                    .list_workflows(&Scope::Global, Some(Source::Repo))
            ),
            "no_repo_source"
        );
    }

    #[test]
    fn two_projects_never_see_each_others_repo_workflows() {
        let a = Env::new();
        let b = Service::new(a.home.path());
        let other = tempfile::tempdir().unwrap();
        git_init(other.path());
        let other_scope = Scope::project(other.path().to_str().unwrap()).unwrap();
        a.create("child", CHILD, Some(Source::Repo));
        assert_ne!(a.scope.project_id(), other_scope.project_id());
        assert!(b.list_workflows(&other_scope, None).unwrap().is_empty());
        assert_eq!(
            code(b.get_workflow(&other_scope, "child", None)),
            "not_found"
        );
        assert_eq!(a.service.list_workflows(&a.scope, None).unwrap().len(), 1);
    }

    #[test]
    fn update_validates_and_replaces() {
        let env = Env::new();
        env.create("child", CHILD, None);
        let new = CHILD.replace("echo hi", "echo bye");
        let updated = env
            .service
            .update_workflow(&env.scope, "child", &Body::Yaml(new.clone()), None, &Actor::local("mcp"))
            .unwrap();
        assert!(updated.ok);
        assert_eq!(fs::read_to_string(&updated.path).unwrap(), new);
        let broken = Body::Yaml(CHILD.replace("initial: step", "initial: nope"));
        assert_eq!(
            code(
                env.service
                    .update_workflow(&env.scope, "child", &broken, None, &Actor::local("mcp"))
            ),
            "integrity_error"
        );
        assert_eq!(fs::read_to_string(&updated.path).unwrap(), new);
        assert_eq!(
            code(
                env.service
                    .update_workflow(&env.scope, "ghost", &Body::Yaml(CHILD.into()), None, &Actor::local("mcp"))
            ),
            "not_found"
        );
        assert_eq!(
            code(env.service.update_workflow(
                &env.scope,
                "child",
                &Body::Yaml("name: other\ninitial: step\nnodes: {}\n".into()),
                None,
                &Actor::local("mcp"),
            )),
            "invalid_config"
        );
    }

    #[test]
    fn delete_needs_confirm_and_refuses_when_referenced() {
        let env = Env::new();
        let child = env.create("child", CHILD, None);
        fs::create_dir_all(env.global_dir().join("child/scripts")).unwrap();
        env.create("parent", &parent("parent", "child"), None);
        let s = &env.service;
        let err = s
            .delete_workflow(&env.scope, "child", None, false, false)
            .unwrap_err();
        assert_eq!(err.as_code(), "confirm_required");
        assert_eq!(err.body()["path"], json!(child.path));
        let err = s
            .delete_workflow(&env.scope, "child", None, true, false)
            .unwrap_err();
        assert_eq!(err.as_code(), "referenced");
        assert_eq!(
            err.body()["referencedBy"],
            json!([{"workflowId": "parent", "nodeId": "call", "source": "global"}])
        );
        assert!(child.path.exists());
        let deleted = s
            .delete_workflow(&env.scope, "child", None, true, true)
            .unwrap();
        assert!(deleted.ok);
        assert!(!child.path.exists());
        assert!(!env.global_dir().join("child").exists());
        assert_eq!(
            code(s.delete_workflow(&env.scope, "child", None, true, false)),
            "not_found"
        );
        // An unreferenced workflow goes without force.
        s.delete_workflow(&env.scope, "parent", None, true, false)
            .unwrap();
    }

    #[test]
    fn references_scan_every_source() {
        let env = Env::new();
        env.create("child", CHILD, Some(Source::Global));
        env.create("p1", &parent("p1", "child"), Some(Source::Repo));
        env.create("p2", &parent("p2", "child"), Some(Source::Global));
        env.create("p3", &parent("p3", "p1"), Some(Source::Global));
        fs::write(env.global_dir().join("junk.yaml"), "nodes: [").unwrap();
        let refs = env
            .service
            .list_workflow_references(&env.scope, "child")
            .unwrap();
        let ids: Vec<(&str, &str, Source)> = refs
            .referrers
            .iter()
            .map(|r| (r.workflow_id.as_str(), r.node_id.as_str(), r.source))
            .collect();
        assert_eq!(
            ids,
            [("p1", "call", Source::Repo), ("p2", "call", Source::Global)]
        );
        assert_eq!(refs.warnings.len(), 1);
        let json = serde_json::to_value(&refs).unwrap();
        assert_eq!(json["referrers"][0]["workflowId"], "p1");
        // Global scope sees only the global referrer.
        let global = env
            .service
            .list_workflow_references(&Scope::Global, "child")
            .unwrap();
        assert_eq!(global.referrers.len(), 1);
        assert_eq!(
            code(env.service.list_workflow_references(&env.scope, "A/b")),
            "invalid_id"
        );
    }
}
