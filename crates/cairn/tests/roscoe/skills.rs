//! Skill import over MCP: `list_skills` in every root kind (a private HOME, `$CODEX_HOME`, project roots from `cwd`
//! up to the git root, the repo tree), `content_scan: false`, and the two-step conversion of a skill with `scripts/`
//! (whose script node then runs through `test_workflow`) through every failure stage of `finalize_skill_conversion`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// A private HOME and CODEX_HOME beside a git project, and a server started with them.
struct Setup {
    env: Env,
    home: PathBuf,
    codex: PathBuf,
    root: PathBuf,
    client: Client,
}

impl Setup {
    async fn new(prepare: impl FnOnce(&Path, &Path, &Path)) -> Setup {
        let env = Env::new();
        let home = env.tmp.path().join("user-home");
        let codex = env.tmp.path().join("codex-home");
        let root = env.repo("proj");
        prepare(&home, &codex, &root);
        let mut command = env.command(env!("CARGO_BIN_EXE_cairn"), &["roscoe"]);
        command.env("HOME", &home).env("CODEX_HOME", &codex);
        let client = Client::stdio(command).await;
        Setup { env, home, codex, root, client }
    }

    fn cwd(&self) -> String {
        s(&self.root.join("app"))
    }
}

fn skill(path: &Path, name: &str, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, format!("---\nname: {name}\ndescription: Helps with {name}\n---\n{body}")).unwrap();
}

fn names(listing: &Value) -> Vec<String> {
    listing["skills"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn skills_are_found_in_every_root_kind() {
    let setup = Setup::new(|home, codex, root| {
        skill(&home.join(".claude/skills/a/SKILL.md"), "user-claude", "");
        skill(&home.join(".agents/skills/a/SKILL.md"), "user-agents", "");
        skill(&codex.join("skills/a/SKILL.md"), "user-codex", "");
        skill(&home.join(".codex/skills/a/SKILL.md"), "hidden-by-codex-home", "");
        skill(&home.join(".config/opencode/skills/a/SKILL.md"), "user-opencode", "");
        skill(&home.join(".gemini/skills/a/SKILL.md"), "user-gemini", "");
        skill(&root.join("app/.agents/skills/b/SKILL.md"), "cwd-agents", "");
        skill(&root.join(".claude/skills/c/SKILL.md"), "root-claude", "");
        skill(&root.join(".opencode/skills/d/SKILL.md"), "root-opencode", "");
        skill(&root.join("tools/release/SKILL.md"), "tree-skill", "");
        skill(&root.join("node_modules/pkg/SKILL.md"), "in-node-modules", "");
        skill(&root.join("a/b/c/d/e/f/SKILL.md"), "too-deep", "");
        fs::create_dir_all(root.join("blog/_posts")).unwrap();
        fs::write(root.join("blog/_posts/hello.md"), "---\nname: hello\ndescription: a post\n---\n").unwrap();
        fs::write(root.join("blog/post.md"), "---\nname: p\ndescription: a post\nlayout: post\n---\n").unwrap();
        fs::write(root.join("README.md"), "# not a skill\n").unwrap();
    })
    .await;
    let user = ["user-claude", "user-agents", "user-codex", "user-opencode", "user-gemini"];

    let listing = setup.client.ok("list_skills", json!({"cwd": setup.cwd()})).await;
    let mut expected: Vec<&str> = user.to_vec();
    expected.extend(["cwd-agents", "root-claude", "root-opencode", "tree-skill"]);
    assert_eq!(names(&listing), expected);
    assert_eq!(listing["count"], 9);
    let first = &listing["skills"][0];
    assert_eq!(first["path"], s(&setup.home.join(".claude/skills/a/SKILL.md").canonicalize().unwrap()));
    assert_eq!(first["description"], "Helps with user-claude");
    assert!(listing["skills"][2]["path"].as_str().unwrap().starts_with(&s(&setup.codex.canonicalize().unwrap())));

    let roots_only = setup.client.ok("list_skills", json!({"cwd": setup.cwd(), "content_scan": false})).await;
    let mut expected: Vec<&str> = user.to_vec();
    expected.extend(["cwd-agents", "root-claude", "root-opencode"]);
    assert_eq!(names(&roots_only), expected);

    let global = setup.client.ok("list_skills", json!({"global": true})).await;
    assert_eq!(names(&global), user);

    let filtered = setup.client.ok("list_skills", json!({"cwd": setup.cwd(), "query": "RELEASE"})).await;
    assert_eq!(names(&filtered), ["tree-skill"]);

    assert_eq!(setup.client.fail("list_skills", json!({})).await["code"], "CWD_REQUIRED");
    let err = setup.client.fail("list_skills", json!({"global": true, "content_scan": "no"})).await;
    assert_eq!(err["code"], "invalid_input");
    setup.client.close().await;
}

const SKILL_BODY: &str = "# Release check\n\n1. Run `scripts/check.sh` to verify the build.\n2. If it fails, fix the \
problem and run it again.\n3. Summarise the result for the user.\n\nSee references/policy.md for the rules.\n";

/// A completion as a host would produce it: a short plan, then one yaml block.
fn completion(name: &str) -> String {
    format!(
        "Plan: run the bundled check, summarise.\n\n```yaml\nname: {name}\ndescription: Verify the build, then \
         summarise\ninitial: check\nnodes:\n  check:\n    type: script\n    config:\n      script: scripts/check.sh\n      \
         interpreter: sh\n    transitions: {{ success: summarise, failure: $fail }}\n  summarise:\n    type: ai_agent\n    \
         config:\n      prompt: \"Summarise this check output for the user: {{{{ check.stdout }}}}\"\n    transitions: \
         {{ success: $end }}\n```\n"
    )
}

#[tokio::test]
async fn a_skill_with_scripts_converts_into_a_valid_workflow() {
    let setup = Setup::new(|_, _, root| {
        let dir = root.join(".claude/skills/release-check");
        skill(&dir.join("SKILL.md"), "Release Check", SKILL_BODY);
        fs::create_dir_all(dir.join("scripts/lib")).unwrap();
        fs::write(dir.join("scripts/check.sh"), "#!/bin/sh\necho build ok\n").unwrap();
        fs::write(dir.join("scripts/lib/common.sh"), "greet() { echo hi; }\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(dir.join("scripts/check.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::create_dir_all(dir.join("references")).unwrap();
        fs::write(dir.join("references/policy.md"), "rules\n").unwrap();
        fs::create_dir_all(root.join(".roscoe/workflows")).unwrap();
        fs::create_dir_all(root.join("app")).unwrap();
    })
    .await;
    let cwd = setup.cwd();
    let skill_file = setup.root.join(".claude/skills/release-check/SKILL.md").canonicalize().unwrap();

    // Step 1, by name: the handback names the model, the prompt carries the rules, the schema, the skill and its
    // scripts.
    let handback = setup.client.ok("convert_skill", json!({"cwd": cwd, "name": "release check"})).await;
    assert_eq!(handback["action"], "run_completion");
    assert_eq!(handback["model"], "claude-sonnet-4-5");
    assert_eq!(handback["finalize_args"], json!({"skill_path": s(&skill_file), "id": "release-check", "source": "repo"}));
    let prompt = handback["prompt"].as_str().unwrap();
    for needle in [
        "name: release-check",
        "maxIterations",
        "{{ nodeId.field }}",
        "consensus",
        "ai_judge",
        "\"$schema\"",
        "Run `scripts/check.sh` to verify the build.",
        "### scripts/check.sh",
        "echo build ok",
        "scripts/lib/common.sh",
        "$ROSCOE_WORKFLOW_DIR/scripts/",
        "references/",
    ] {
        assert!(prompt.contains(needle), "the prompt lacks {needle:?}");
    }
    // By path (relative to cwd), with an explicit id and source.
    let by_path = setup
        .client
        .ok(
            "convert_skill",
            json!({"cwd": cwd, "skill_path": "../.claude/skills/release-check/SKILL.md", "id": "rc", "source": "global"}),
        )
        .await;
    assert_eq!(by_path["finalize_args"], json!({"skill_path": s(&skill_file), "id": "rc", "source": "global"}));

    // Step 2: the host echoes finalize_args back with its completion.
    let mut args = handback["finalize_args"].clone();
    args["cwd"] = json!(cwd);
    args["completion"] = json!(completion("whatever-the-model-wrote"));
    let done = setup.client.ok("finalize_skill_conversion", args.clone()).await;
    let workflow = setup.root.join(".roscoe/workflows/release-check.yaml");
    assert_eq!(
        done,
        json!({
            "id": "release-check",
            "source": "repo",
            "path": s(&workflow),
            "assetCount": 2,
            "skippedBundleDirs": ["references"],
            "skippedNote": format!(
                "references/ not copied: only scripts/ is bundled with a workflow. Move what the workflow needs into \
                 its prompts, or copy files into {} by hand.",
                s(&setup.root.join(".roscoe/workflows/release-check"))
            ),
        })
    );
    let text = fs::read_to_string(&workflow).unwrap();
    assert!(text.starts_with("name: release-check\n"), "{text}");
    let assets = setup.root.join(".roscoe/workflows/release-check/scripts");
    assert_eq!(fs::read_to_string(assets.join("check.sh")).unwrap(), "#!/bin/sh\necho build ok\n");
    assert!(assets.join("lib/common.sh").is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(assets.join("check.sh")).unwrap().permissions().mode() & 0o777, 0o755);
    }
    let validated = setup.client.ok("validate_workflow", json!({"cwd": cwd, "id": "release-check"})).await;
    assert_eq!(validated, json!({"valid": true, "errors": []}));
    let listed = setup.client.ok("list_workflows", json!({"cwd": cwd})).await;
    assert_eq!(listed[0]["id"], "release-check");
    // The converted workflow runs: its script node finds the copied script through $ROSCOE_WORKFLOW_DIR.
    let tested = setup
        .client
        .ok("test_workflow", json!({"cwd": cwd, "id": "release-check", "mocks": {"summarise": "The build is fine."}}))
        .await;
    assert_eq!((tested["ok"].clone(), tested["finalStatus"].clone()), (json!(true), json!("completed")), "{tested}");
    let check = tested["nodeTrace"].as_array().unwrap().iter().find(|n| n["nodeId"] == "check").unwrap();
    assert_eq!(check["status"], "completed", "{check}");
    assert_eq!(check["output"]["stdout"], "build ok\n", "{check}");

    // write: a second conversion to the same id conflicts unless overwrite is given; overwrite replaces the scripts.
    let err = setup.client.fail("finalize_skill_conversion", args.clone()).await;
    assert_eq!((err["ok"].clone(), err["stage"].clone(), err["code"].clone()), (json!(false), json!("write"), json!("conflict")));
    assert!(err["message"].as_str().unwrap().contains("overwrite: true"), "{err}");
    assert!(err.get("rawModelOutput").is_none());
    fs::remove_file(setup.root.join(".claude/skills/release-check/scripts/lib/common.sh")).unwrap();
    args["overwrite"] = json!(true);
    let again = setup.client.ok("finalize_skill_conversion", args).await;
    assert_eq!(again["assetCount"], 1);
    assert!(!assets.join("lib/common.sh").exists());
    assert!(assets.join("check.sh").is_file());
    setup.client.close().await;
}

#[tokio::test]
async fn every_failure_names_its_stage() {
    let setup = Setup::new(|home, _, root| {
        skill(&home.join(".claude/skills/dup/SKILL.md"), "twin", "one");
        skill(&root.join(".claude/skills/dup/SKILL.md"), "twin", "two");
        skill(&root.join("docs/solo.md"), "solo", "Do one thing.\n");
        fs::create_dir_all(root.join("app")).unwrap();
        fs::write(root.join("README.md"), "# not a skill\n").unwrap();
    })
    .await;
    let cwd = setup.cwd();
    let solo = s(&setup.root.join("docs/solo.md"));
    let staged = |value: &Value, stage: &str, code: &str| {
        assert_eq!(value["ok"], false, "{value}");
        assert_eq!(value["stage"], stage, "{value}");
        assert_eq!(value["code"], code, "{value}");
        assert_eq!(value["message"], value["error"], "{value}");
    };

    // convert_skill: resolve failures, and bad input.
    let err = setup.client.fail("convert_skill", json!({"cwd": cwd, "name": "nobody"})).await;
    staged(&err, "resolve", "skill_not_found");
    let err = setup.client.fail("convert_skill", json!({"cwd": cwd, "name": "TWIN"})).await;
    staged(&err, "resolve", "ambiguous_skill");
    let err = setup.client.fail("convert_skill", json!({"cwd": cwd, "skill_path": s(&setup.root.join("README.md"))})).await;
    staged(&err, "resolve", "not_a_skill");
    let err = setup.client.fail("convert_skill", json!({"cwd": cwd, "skill_path": solo, "id": "Bad Id"})).await;
    staged(&err, "resolve", "invalid_id");
    let err = setup.client.fail("convert_skill", json!({"global": true, "skill_path": solo, "source": "repo"})).await;
    staged(&err, "resolve", "no_repo_source");
    let err = setup.client.fail("convert_skill", json!({"cwd": cwd, "skill_path": solo, "name": "solo"})).await;
    assert_eq!(err["code"], "invalid_input");
    assert!(err.get("stage").is_none());
    let handback = setup.client.ok("convert_skill", json!({"global": true, "skill_path": solo})).await;
    assert_eq!(handback["finalize_args"]["source"], "global");
    assert!(!handback["prompt"].as_str().unwrap().contains("### scripts/"), "a loose .md file bundles nothing");

    let finalize = |completion: &str, skill_path: &str, id: &str| {
        json!({"cwd": cwd, "completion": completion, "skill_path": skill_path, "id": id})
    };
    // resolve: the skill is re-read from disk, the id is checked.
    let err = setup.client.fail("finalize_skill_conversion", finalize(&completion("x"), "/no/such/SKILL.md", "solo")).await;
    staged(&err, "resolve", "skill_not_found");
    let err = setup.client.fail("finalize_skill_conversion", finalize(&completion("x"), &solo, "../escape")).await;
    staged(&err, "resolve", "invalid_id");
    // parse: no YAML anywhere; the raw output comes back.
    let refusal = "I cannot turn this skill into a workflow.";
    let err = setup.client.fail("finalize_skill_conversion", finalize(refusal, &solo, "solo")).await;
    staged(&err, "parse", "no_workflow_yaml");
    assert_eq!(err["rawModelOutput"], refusal);
    // validate: an integrity error (a dangling target), with details and the raw output.
    let broken = completion("solo").replace("$fail", "nowhere");
    let err = setup.client.fail("finalize_skill_conversion", finalize(&broken, &solo, "solo")).await;
    staged(&err, "validate", "integrity_error");
    assert!(err["details"][0].as_str().unwrap().contains("unknown_target"), "{err}");
    assert_eq!(err["rawModelOutput"], broken);
    let not_a_mapping = "```yaml\n- just\n- a list\n```";
    let err = setup.client.fail("finalize_skill_conversion", finalize(not_a_mapping, &solo, "solo")).await;
    staged(&err, "validate", "invalid_config");
    // Nothing was written by any failure.
    assert!(!setup.env.global_dir().exists() || fs::read_dir(setup.env.global_dir()).unwrap().next().is_none());

    // A bare (unfenced) workflow is accepted; a loose skill copies no scripts.
    let bare = completion("solo").split("```yaml\n").nth(1).unwrap().replace("```\n", "").replace("scripts/check.sh", "run.sh");
    let done = setup.client.ok("finalize_skill_conversion", finalize(&bare, &solo, "solo")).await;
    assert_eq!(done["assetCount"], 0);
    assert_eq!(done["skippedBundleDirs"], json!([]));
    assert!(done.get("skippedNote").is_none());
    assert_eq!(done["path"], s(&setup.env.global_dir().join("solo.yaml")));
    // write: the same id again.
    let err = setup.client.fail("finalize_skill_conversion", finalize(&bare, &solo, "solo")).await;
    staged(&err, "write", "conflict");
    setup.client.close().await;
}
