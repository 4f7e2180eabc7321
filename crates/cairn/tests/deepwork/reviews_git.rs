//! Which files count as changed, seen through the review tools and the gate on real git repositories: a project root
//! in a subdirectory of the repository, linked worktrees, a clone whose `origin/HEAD` names the default branch, a
//! repository without commits, renames, deletions and unusual file names.
//!
//! Review ids end with the first 12 hex digits of a SHA-256 over the reviewed contents; the expected values here were
//! computed independently (Python `hashlib`) from the fixture texts.

use serde_json::json;

use crate::support::*;

const SUB_RULES: &str = r#"docs:
  description: Docs
  match:
    include: ["docs/*.md"]
  review:
    strategy: individual
    instructions: Check it.

everything:
  description: Everything under the root
  match:
    include: ["**/*"]
  review:
    strategy: matches_together
    instructions: All of it.
    additional_context:
      all_changed_filenames: true
"#;

/// The project root is `repo/sub`: git paths are relative to it (files outside it are not seen), prompts are relative
/// to the repository, and the quality gate matches outputs relative to the root.
#[tokio::test(flavor = "multi_thread")]
async fn root_in_a_subdirectory_of_the_repository() {
    let project = Project::empty();
    project.write("sub/.deepreview", SUB_RULES);
    project.write("sub/.deepwork/jobs/research/job.yml", RESEARCH_JOB);
    project.write("README.md", "repo\n");
    let root = project.dir.path().join("sub");
    let client = project.connect_at(&root, &[]).await;
    project.git_init();
    project.write("sub/docs/a.md", "A\n");
    project.write("outside/x.md", "x\n");

    let text = client.text_ok("get_review_instructions", json!({})).await;
    let tasks = listed_tasks(&text);
    assert_eq!(descriptions(&tasks), ["Review docs", "Review everything"]);
    let prompts: Vec<&str> = tasks.iter().map(|t| t.prompt.as_str()).collect();
    assert_eq!(
        prompts,
        [
            "sub/.deepwork/tmp/review_instructions/docs--docs-a.md--06f961b802bc.md",
            "sub/.deepwork/tmp/review_instructions/everything--docs-a.md--06f961b802bc.md",
        ]
    );
    let everything = std::fs::read_to_string(project.dir.path().join(&tasks[1].prompt)).unwrap();
    assert!(everything.contains(&format!("`{}`", root.canonicalize().unwrap().display())), "{everything}");
    assert!(everything.contains("## Files to Review\n\n- @docs/a.md\n"), "{everything}");
    assert!(everything.contains("\n\n- docs/a.md\n\n## After Review"), "{everything}");
    assert!(!everything.contains("outside"), "files outside the root are not part of the change: {everything}");
    assert!(!project.review_dir("").exists(), "nothing is written at the repository root");

    let configured =
        client.list_ok("get_configured_reviews", json!({"only_rules_matching_files": ["docs/a.md"]})).await;
    assert_eq!(configured, [json!({"name": "docs", "description": "Docs", "defining_file": ".deepreview:1"})]);

    // The gate sees the output as changed, relative to the root, and asks for the same reviews.
    client.ok("start_workflow", start("research", "full", "s1")).await;
    let result = client.ok("finished_step", json!({"outputs": {"notes": "docs/a.md"}, "session_id": "s1"})).await;
    assert_eq!(result["status"], "needs_work", "{result}");
    let feedback = listed_tasks(result["feedback"].as_str().unwrap());
    assert_eq!(feedback, tasks);
    client.close().await;
}

/// Linked worktrees: one inside the main checkout (prompts relative to the main checkout) and one elsewhere (prompts
/// relative to the worktree). Committed-on-branch, modified and untracked files of the worktree are all seen.
#[tokio::test(flavor = "multi_thread")]
async fn linked_git_worktrees() {
    let project = Project::empty();
    project.write(".deepreview", &md_rule("**/*.md", "individual", "Check it."));
    project.write(".gitignore", "worktrees/\n");
    project.write("README.md", "readme\n");
    let main_client = project.connect(Transport::Stdio).await;
    project.git_init();

    project.git(&["worktree", "add", "-q", "-b", "feature", "worktrees/feat"]);
    let tree = project.dir.path().join("worktrees/feat");
    std::fs::write(tree.join("committed.md"), "C\n").unwrap();
    project.git_in(&tree, &["add", "committed.md"]);
    project.git_in(&tree, &["commit", "-q", "-m", "on the branch"]);
    std::fs::write(tree.join("README.md"), "A\n").unwrap();
    std::fs::write(tree.join("new.md"), "B\n").unwrap();

    let client = project.connect_at(&tree, &[]).await;
    let text = client.text_ok("get_review_instructions", json!({})).await;
    let prompts: Vec<String> = listed_tasks(&text).into_iter().map(|t| t.prompt).collect();
    assert_eq!(
        prompts,
        [
            "worktrees/feat/.deepwork/tmp/review_instructions/md--README.md--06f961b802bc.md",
            "worktrees/feat/.deepwork/tmp/review_instructions/md--committed.md--12f37a8a8403.md",
            "worktrees/feat/.deepwork/tmp/review_instructions/md--new.md--c0cde77fa8fe.md",
        ]
    );
    for prompt in &prompts {
        assert!(project.dir.path().join(prompt).is_file(), "{prompt}");
    }
    client.close().await;
    let untouched = main_client.text_ok("get_review_instructions", json!({})).await;
    assert_eq!(untouched, "No changed files detected.", "the main checkout has no changes of its own");
    main_client.close().await;

    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("wt");
    project.git(&["worktree", "add", "-q", "-b", "other", outside.to_str().unwrap()]);
    std::fs::write(outside.join("z.md"), "B\n").unwrap();
    let client = project.connect_at(&outside, &[]).await;
    let text = client.text_ok("get_review_instructions", json!({})).await;
    let tasks = listed_tasks(&text);
    assert_eq!(tasks.len(), 1, "{text}");
    assert_eq!(tasks[0].prompt, ".deepwork/tmp/review_instructions/md--z.md--c0cde77fa8fe.md");
    assert!(outside.join(&tasks[0].prompt).is_file());
    client.close().await;
}

/// Changed files come from `git -z`: renamed files count under their new name, deleted ones not at all, and names
/// with spaces, quotes or non-ASCII characters arrive intact.
#[tokio::test(flavor = "multi_thread")]
async fn renames_deletions_and_unusual_names() {
    let project = Project::empty();
    project.write(".deepreview", &md_together());
    project.write("old.md", "moved\n");
    project.write("gone.md", "bye\n");
    let client = project.connect(Transport::Stdio).await;
    project.git_init();
    project.git(&["mv", "old.md", "moved.md"]);
    project.git(&["rm", "-q", "gone.md"]);
    project.write("docs/naïve \"file\".md", "naïve\n");

    let text = client.text_ok("get_review_instructions", json!({})).await;
    let tasks = listed_tasks(&text);
    assert_eq!(tasks.len(), 1, "{text}");
    let together = project.instructions(&tasks[0].id());
    assert!(together.contains("## Files to Review\n\n- @docs/naïve \"file\".md\n- @moved.md\n\n"), "{together}");
    assert!(!together.contains("gone.md") && !together.contains("old.md"), "{together}");
    client.close().await;
}

/// Every markdown file, reviewed together.
fn md_together() -> String {
    md_rule("**/*.md", "matches_together", "Check them.")
}

/// The `## Files to Review` lines of `task`'s instruction file.
fn reviewed_files(project_dir: &std::path::Path, task: &ListedTask) -> String {
    let instructions = std::fs::read_to_string(project_dir.join(&task.prompt)).unwrap();
    let files = instructions.split("## Files to Review\n\n").nth(1).unwrap();
    files[..files.find("\n\n").unwrap()].to_owned()
}

/// In a clone, `origin/HEAD` names the base: commits on the local `main` that `origin/main` lacks count as changes.
#[tokio::test(flavor = "multi_thread")]
async fn a_clone_compares_with_origin_head() {
    let project = Project::empty();
    project.write(".deepreview", &md_together());
    project.write("base.md", "base\n");
    project.git_init();
    let elsewhere = tempfile::tempdir().unwrap();
    let clone = elsewhere.path().join("clone");
    project.git_in(elsewhere.path(), &["clone", "-q", project.dir.path().to_str().unwrap(), "clone"]);
    std::fs::write(clone.join("m.md"), "on local main\n").unwrap();
    project.git_in(&clone, &["add", "m.md"]);
    project.git_in(&clone, &["commit", "-q", "-m", "local main"]);
    project.git_in(&clone, &["checkout", "-q", "-b", "topic"]);
    std::fs::write(clone.join("t.md"), "on topic\n").unwrap();
    project.git_in(&clone, &["add", "t.md"]);
    project.git_in(&clone, &["commit", "-q", "-m", "topic"]);
    std::fs::write(clone.join("base.md"), "edited\n").unwrap();
    std::fs::write(clone.join("u.md"), "untracked\n").unwrap();

    let client = project.connect_at(&clone, &[]).await;
    let text = client.text_ok("get_review_instructions", json!({})).await;
    let tasks = listed_tasks(&text);
    assert_eq!(descriptions(&tasks), ["Review md"]);
    assert_eq!(reviewed_files(&clone, &tasks[0]), "- @base.md\n- @m.md\n- @t.md\n- @u.md");
    client.close().await;
}

/// A repository without commits: staged and untracked files are the change.
#[tokio::test(flavor = "multi_thread")]
async fn a_repository_without_commits() {
    let project = Project::empty();
    project.write(".deepreview", &md_together());
    project.write("staged.md", "s\n");
    project.write("loose.md", "l\n");
    project.git(&["init", "-q", "-b", "main"]);
    project.git(&["add", "staged.md"]);
    let client = project.connect(Transport::Stdio).await;
    let text = client.text_ok("get_review_instructions", json!({})).await;
    let tasks = listed_tasks(&text);
    assert_eq!(descriptions(&tasks), ["Review md", "Review deepreview/deepreview DeepSchema Compliance"]);
    assert_eq!(reviewed_files(project.dir.path(), &tasks[0]), "- @loose.md\n- @staged.md");
    assert_eq!(reviewed_files(project.dir.path(), &tasks[1]), "- @.deepreview");
    client.close().await;
}
