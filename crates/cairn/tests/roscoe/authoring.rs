//! The authoring lifecycle over MCP: create → list → get → update → validate / lint → diagram → duplicate → rename
//! (with its reference cascade and its rollback) → move between sources (shadowing) → delete (confirm, referenced,
//! force). Each scenario runs over stdio (`cairn roscoe mcp`) and over HTTP (`/roscoe/mcp` of `cairn serve`).

use std::fs;
use std::path::PathBuf;

use regex::Regex;
use serde_json::{Value, json};

use crate::support::*;

struct Project {
    env: Env,
    root: PathBuf,
    cwd: String,
    client: Client,
}

impl Project {
    /// A git repository with a `src/` directory used as `cwd`, and a server connected over `transport`.
    async fn new(transport: Transport) -> Project {
        let env = Env::new();
        let root = env.repo("proj");
        fs::create_dir_all(root.join("src")).unwrap();
        let cwd = s(&root.join("src"));
        let client = env.connect_over(transport).await;
        Project { env, root, cwd, client }
    }

    fn repo_dir(&self) -> PathBuf {
        self.root.join(".roscoe/workflows")
    }

    /// `args` plus this project's `cwd`.
    fn at(&self, mut args: Value) -> Value {
        args["cwd"] = json!(self.cwd);
        args
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        self.client.ok(tool, self.at(args)).await
    }

    async fn fail(&self, tool: &str, args: Value) -> Value {
        self.client.fail(tool, self.at(args)).await
    }

    async fn ids(&self) -> Vec<(String, String, bool)> {
        let list = self.ok("list_workflows", json!({})).await;
        list.as_array()
            .unwrap()
            .iter()
            .map(|w| (w["id"].as_str().unwrap().to_owned(), w["source"].as_str().unwrap().to_owned(), w["shadowed"] == true))
            .collect()
    }
}

fn entry(id: &str, source: &str, shadowed: bool) -> (String, String, bool) {
    (id.to_owned(), source.to_owned(), shadowed)
}

#[tokio::test]
async fn the_authoring_lifecycle() {
    for transport in TRANSPORTS {
        authoring_lifecycle(transport).await;
    }
}

async fn authoring_lifecycle(transport: Transport) {
    let p = Project::new(transport).await;

    // create: without a repo source the default is global; an explicit repo source creates its directory.
    let created = p.ok("create_workflow", json!({"id": "child", "yaml": simple("child")})).await;
    assert_eq!(created, json!({"id": "child", "source": "global", "path": s(&p.env.global_dir().join("child.yaml"))}));
    let created = p.ok("create_workflow", json!({"id": "parent", "yaml": parent("parent", "child"), "source": "repo"})).await;
    assert_eq!(created["source"], "repo");
    assert_eq!(created["path"], s(&p.repo_dir().join("parent.yaml")));
    #[cfg(unix)]
    for made in [p.env.global_dir().join("child.yaml"), p.repo_dir().join("parent.yaml")] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&made).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "a new workflow file is 0644 like every file a person writes: {}", made.display());
    }
    // With a repo source, the default is repo; the same id in the global source is a conflict.
    let err = p.fail("create_workflow", json!({"id": "child", "yaml": simple("child"), "source": "global"})).await;
    assert_eq!(err["code"], "conflict");
    assert_eq!(err["path"], s(&p.env.global_dir().join("child.yaml")));
    assert_eq!(p.fail("create_workflow", json!({"id": "../x", "yaml": simple("x")})).await["code"], "invalid_id");
    let err = p.fail("create_workflow", json!({"id": "bad", "yaml": simple("bad").replace("$end", "nowhere")})).await;
    assert_eq!(err["code"], "integrity_error");
    assert!(err["details"][0].as_str().unwrap().contains("unknown_target"), "{err}");
    assert_eq!(p.fail("create_workflow", json!({"id": "bad", "yaml": "nodes: ["})).await["code"], "invalid_config");
    assert_eq!(p.fail("create_workflow", json!({"id": "bad"})).await["code"], "invalid_input");

    // list: by id, with the seed's fields.
    let list = p.ok("list_workflows", json!({})).await;
    assert_eq!(
        list,
        json!([
            {"id": "child", "name": "child", "description": "Says hi", "source": "global", "shadowed": false},
            {"id": "parent", "name": "parent", "description": null, "source": "repo", "shadowed": false},
        ])
    );
    let repo_only = p.ok("list_workflows", json!({"source": "repo"})).await;
    assert_eq!(repo_only.as_array().unwrap().len(), 1);

    // get: the config plus source and path.
    let got = p.ok("get_workflow", json!({"id": "parent"})).await;
    assert_eq!(got["name"], "parent");
    assert_eq!(got["source"], "repo");
    assert_eq!(got["nodes"]["call"]["config"]["workflow"], "child");
    assert_eq!(p.fail("get_workflow", json!({"id": "ghost"})).await["code"], "not_found");

    // update from a config object.
    let config = json!({
        "name": "child",
        "description": "Says hello",
        "initial": "step",
        "nodes": {"step": {"type": "script", "config": {"command": "echo hello"}, "transitions": {"success": "$end", "failure": "$fail"}}}
    });
    let updated = p.ok("update_workflow", json!({"id": "child", "config": config})).await;
    assert_eq!(updated["ok"], true);
    assert_eq!(updated["source"], "global");
    assert_eq!(p.ok("get_workflow", json!({"id": "child"})).await["description"], "Says hello");
    let err = p.fail("update_workflow", json!({"id": "child", "yaml": simple("child").replace("$end", "nowhere")})).await;
    assert_eq!(err["code"], "integrity_error");
    assert_eq!(p.fail("update_workflow", json!({"id": "ghost", "yaml": simple("ghost")})).await["code"], "not_found");

    // validate: an invalid workflow is a result naming code, line, node and fix; valid ones are `{valid, errors: []}`.
    let broken = simple("w").replace("success: $end", "success: nowhere");
    let v = p.ok("validate_workflow", json!({"yaml": broken})).await;
    assert_eq!(v["valid"], false);
    assert_eq!(v["code"], "integrity_error");
    let error = v["errors"][0].as_str().unwrap();
    assert!(Regex::new(r"^\d+:\d+: unknown_target: ").unwrap().is_match(error), "{error}");
    assert!(error.contains("step") && error.contains("nowhere"), "{error}");
    assert_eq!(p.ok("validate_workflow", json!({"id": "parent"})).await, json!({"valid": true, "errors": []}));
    let v = p.ok("validate_workflow", json!({"yaml": "initial: ["})).await;
    assert_eq!(v["code"], "invalid_config");
    assert!(Regex::new(r"^\d+:\d+: ").unwrap().is_match(v["errors"][0].as_str().unwrap()), "{v}");
    assert_eq!(p.ok("validate_workflow", json!({"id": "ghost"})).await["code"], "not_found");
    assert_eq!(p.fail("validate_workflow", json!({"id": "parent", "yaml": "x"})).await["code"], "invalid_input");

    // lint: integrity errors first; warnings carry code, message and state.
    let lint = p.ok("lint_workflow", json!({"yaml": broken})).await;
    assert!(!lint["errors"].as_array().unwrap().is_empty());
    assert_eq!(lint["warnings"], json!([]));
    let dead = simple("w").replace(
        "nodes:\n",
        "nodes:\n  orphan:\n    type: script\n    config: { command: \"true\" }\n    transitions: { success: $end, failure: $fail }\n",
    );
    let lint = p.ok("lint_workflow", json!({"yaml": dead})).await;
    assert_eq!(lint["errors"], json!([]));
    let warning = lint["warnings"].as_array().unwrap().iter().find(|w| w["state"] == "orphan").expect("orphan warned");
    assert!(warning["code"].as_str().is_some_and(|c| !c.is_empty()));
    assert!(warning["message"].as_str().unwrap().contains("orphan"));
    // unknown_model follows the project's roscoe.yaml.
    fs::write(p.root.join("roscoe.yaml"), "models:\n  default: m-one\n  available: [m-one]\n").unwrap();
    let agent = "name: w\ninitial: ask\nnodes:\n  ask:\n    type: ai_agent\n    config: { prompt: hi, model: claude-opus-4-1 }\n    transitions: { success: $end, failure: $fail }\n";
    let lint = p.ok("lint_workflow", json!({"yaml": agent})).await;
    assert!(lint["warnings"].as_array().unwrap().iter().any(|w| w["code"] == "unknown_model" && w["state"] == "ask"), "{lint}");
    let lint = p.ok("lint_workflow", json!({"yaml": agent.replace("claude-opus-4-1", "m-one")})).await;
    assert!(!lint["warnings"].as_array().unwrap().iter().any(|w| w["code"] == "unknown_model"), "{lint}");

    // diagram of a stored workflow and of a draft.
    let d = p.ok("get_workflow_diagram", json!({"id": "parent"})).await;
    assert!(d["mermaid"].as_str().unwrap().starts_with("flowchart TD"));
    assert_eq!(d["nodes"], json!([{"id": "call", "type": "subworkflow", "label": "call"}]));
    assert_eq!(
        d["edges"],
        json!([{"from": "call", "event": "success", "to": "$end"}, {"from": "call", "event": "failure", "to": "$fail"}])
    );
    let d = p.ok("get_workflow_diagram", json!({"yaml": broken})).await;
    assert_eq!(d["edges"][0]["to"], "nowhere");
    assert_eq!(p.fail("get_workflow_diagram", json!({"yaml": "nodes: ["})).await["code"], "invalid_config");
    assert_eq!(p.fail("get_workflow_diagram", json!({"id": "ghost"})).await["code"], "not_found");
    assert_eq!(p.fail("get_workflow_diagram", json!({"id": "parent", "run_id": "r1"})).await["code"], "invalid_input");

    // duplicate into the global source, with the name rewritten.
    let dup = p.ok("duplicate_workflow", json!({"id": "parent", "to_id": "parent-copy", "to_source": "global"})).await;
    assert_eq!(dup, json!({"id": "parent-copy", "source": "global", "path": s(&p.env.global_dir().join("parent-copy.yaml"))}));
    assert_eq!(p.ok("get_workflow", json!({"id": "parent-copy"})).await["name"], "parent-copy");
    let err = p.fail("duplicate_workflow", json!({"id": "parent", "to_id": "child", "to_source": "global"})).await;
    assert_eq!(err["code"], "conflict");

    // references, then a rename that rewrites both referrers and keeps their formatting.
    let refs = p.ok("list_workflow_references", json!({"id": "child"})).await;
    assert_eq!(
        refs["referrers"],
        json!([
            {"workflowId": "parent", "nodeId": "call", "source": "repo"},
            {"workflowId": "parent-copy", "nodeId": "call", "source": "global"},
        ])
    );
    fs::create_dir_all(p.env.global_dir().join("child/scripts")).unwrap();
    let renamed = p.ok("rename_workflow", json!({"id": "child", "new_id": "kid"})).await;
    assert_eq!(renamed["id"], "kid");
    assert_eq!(renamed["source"], "global");
    assert_eq!(renamed["rewritten"], json!(["parent", "parent-copy"]));
    assert_eq!(renamed["failed"], json!([]));
    assert_eq!(renamed["rolledBack"], false);
    assert_eq!(
        fs::read_to_string(p.repo_dir().join("parent.yaml")).unwrap(),
        parent("parent", "kid").replace("# parent: calls kid", "# parent: calls child")
    );
    assert!(p.env.global_dir().join("kid/scripts").is_dir(), "assets follow the rename");
    assert_eq!(p.ok("get_workflow", json!({"id": "kid"})).await["name"], "kid");
    assert_eq!(p.ok("list_workflow_references", json!({"id": "child"})).await["referrers"], json!([]));
    assert_eq!(p.fail("rename_workflow", json!({"id": "kid", "new_id": "parent-copy"})).await["code"], "conflict");

    // move global → repo, then a global copy of the same id is shadowed.
    let moved = p.ok("move_workflow", json!({"id": "kid", "to": "repo"})).await;
    assert_eq!(
        moved,
        json!({"ok": true, "id": "kid", "from": "global", "to": "repo", "path": s(&p.repo_dir().join("kid.yaml"))})
    );
    assert!(p.repo_dir().join("kid/scripts").is_dir(), "assets follow the move");
    p.ok("duplicate_workflow", json!({"id": "kid", "to_id": "kid", "to_source": "global"})).await;
    assert_eq!(
        p.ids().await,
        [
            entry("kid", "repo", false),
            entry("kid", "global", true),
            entry("parent", "repo", false),
            entry("parent-copy", "global", false),
        ]
    );
    assert_eq!(p.ok("get_workflow", json!({"id": "kid"})).await["source"], "repo");
    assert_eq!(p.ok("get_workflow", json!({"id": "kid", "source": "global"})).await["source"], "global");
    assert_eq!(p.fail("move_workflow", json!({"id": "kid", "to": "global"})).await["code"], "conflict");
    assert_eq!(p.fail("move_workflow", json!({"id": "kid", "to": "repo"})).await["code"], "invalid_input");
    // Global scope sees only the global store, and has no repo source.
    let global = p.client.ok("list_workflows", json!({"global": true})).await;
    let ids: Vec<(&str, bool)> =
        global.as_array().unwrap().iter().map(|w| (w["id"].as_str().unwrap(), w["shadowed"] == true)).collect();
    assert_eq!(ids, [("kid", false), ("parent-copy", false)]);
    let err = p.client.fail("move_workflow", json!({"global": true, "id": "kid", "to": "repo"})).await;
    assert_eq!(err["code"], "no_repo_source");
    let err = p.client.fail("create_workflow", json!({"global": true, "id": "x", "yaml": simple("x"), "source": "repo"})).await;
    assert_eq!(err["code"], "no_repo_source");

    // move repo → global once the global copy is gone.
    let err = p.fail("delete_workflow", json!({"id": "kid", "source": "global"})).await;
    assert_eq!(err["code"], "confirm_required");
    assert_eq!(err["path"], s(&p.env.global_dir().join("kid.yaml")));
    p.ok("delete_workflow", json!({"id": "kid", "source": "global", "confirm": true, "force": true})).await;
    let moved = p.ok("move_workflow", json!({"id": "kid", "to": "global"})).await;
    assert_eq!((&moved["from"], &moved["to"]), (&json!("repo"), &json!("global")));
    assert!(p.env.global_dir().join("kid/scripts").is_dir());

    // delete: confirm required, refused while referenced, forced.
    let err = p.fail("delete_workflow", json!({"id": "kid", "confirm": true})).await;
    assert_eq!(err["code"], "referenced");
    assert_eq!(
        err["referencedBy"],
        json!([
            {"workflowId": "parent", "nodeId": "call", "source": "repo"},
            {"workflowId": "parent-copy", "nodeId": "call", "source": "global"},
        ])
    );
    assert!(p.env.global_dir().join("kid.yaml").is_file());
    let err = p.fail("delete_workflow", json!({"id": "kid", "confirm": false, "force": true})).await;
    assert_eq!(err["code"], "confirm_required");
    let deleted = p.ok("delete_workflow", json!({"id": "kid", "confirm": true, "force": true})).await;
    assert_eq!(deleted, json!({"ok": true, "path": s(&p.env.global_dir().join("kid.yaml")), "source": "global"}));
    assert!(!p.env.global_dir().join("kid").exists(), "assets deleted too");
    assert_eq!(p.fail("delete_workflow", json!({"id": "kid", "confirm": true})).await["code"], "not_found");
    // An unreferenced workflow needs no force.
    p.ok("delete_workflow", json!({"id": "parent", "confirm": true})).await;
    assert_eq!(p.ids().await, [entry("parent-copy", "global", false)]);
    p.client.close().await;
}

#[tokio::test]
async fn a_rename_whose_referrer_cannot_be_written_rolls_back_every_file() {
    for transport in TRANSPORTS {
        rename_rollback(transport).await;
    }
}

async fn rename_rollback(transport: Transport) {
    let p = Project::new(transport).await;
    p.ok("create_workflow", json!({"id": "child", "yaml": simple("child")})).await;
    p.ok("create_workflow", json!({"id": "a-parent", "yaml": parent("a-parent", "child")})).await;
    p.ok("create_workflow", json!({"id": "b-parent", "yaml": parent("b-parent", "child")})).await;
    let locked = p.env.global_dir().join("b-parent.yaml");
    let mut perms = fs::metadata(&locked).unwrap().permissions();
    perms.set_readonly(true);
    fs::set_permissions(&locked, perms).unwrap();

    let result = p.client.call("rename_workflow", p.at(json!({"id": "child", "new_id": "kid"}))).await;
    assert_eq!(result.is_error, Some(true), "a rolled-back rename is an error result");
    let body: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(result.structured_content.as_ref(), Some(&body));
    assert_eq!(body["rolledBack"], true);
    assert_eq!(body["code"], "io_error");
    assert_eq!(body["failed"], json!(["b-parent"]));
    assert_eq!(body["rewritten"], json!([]));
    assert!(body["error"].as_str().is_some_and(|e| !e.is_empty()));
    assert_eq!(fs::read_to_string(p.env.global_dir().join("child.yaml")).unwrap(), simple("child"));
    assert!(!p.env.global_dir().join("kid.yaml").exists());
    assert_eq!(fs::read_to_string(p.env.global_dir().join("a-parent.yaml")).unwrap(), parent("a-parent", "child"));

    // Without the cascade the rename goes through and leaves the references dangling.
    let renamed = p.ok("rename_workflow", json!({"id": "child", "new_id": "kid", "rewrite_references": false})).await;
    assert_eq!(renamed["rewritten"], json!([]));
    let lint = p.ok("lint_workflow", json!({"id": "a-parent"})).await;
    assert!(lint["warnings"].as_array().unwrap().iter().any(|w| w["code"] == "unknown_subworkflow"), "{lint}");
    p.client.close().await;
}

#[tokio::test]
async fn lint_reports_a_subworkflow_cycle_across_files() {
    let p = Project::new(Transport::Stdio).await;
    p.ok("create_workflow", json!({"id": "ping", "yaml": parent("ping", "pong")})).await;
    let created = p.ok("create_workflow", json!({"id": "pong", "yaml": parent("pong", "ping")})).await;
    let codes: Vec<&str> = created["warnings"].as_array().unwrap().iter().map(|w| w["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"subworkflow_cycle"), "create warns: {created}");

    let linted = p.ok("lint_workflow", json!({"id": "ping"})).await;
    let cycle: Vec<&Value> =
        linted["warnings"].as_array().unwrap().iter().filter(|w| w["code"] == "subworkflow_cycle").collect();
    assert_eq!(cycle.len(), 1, "{linted}");
    assert_eq!(cycle[0]["state"], "call");
    assert!(cycle[0]["message"].as_str().unwrap().contains("(ping -> pong -> ping)"), "{linted}");
    p.client.close().await;
}
