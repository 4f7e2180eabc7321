//! A run tree as one call knows it: read once ([`Runs::load_tree`]), then kept up to date by the call's own writes —
//! each row a step writes replaces the one read (a child run's first row joins the tree) — so the call's result needs
//! no second read. A step that finds its run at another version than the tree holds (another writer got there first,
//! or a script's start was recorded outside the drive), an event that was dropped, or a tree that was never read
//! (`test_workflow`'s) makes the tree stale: its result is then read afresh.

use cairn_store::runs::{self as rows, RunRow};

use super::{AdvanceResult, Runs, view};
use crate::error::Error;
use crate::scope::Scope;

/// The runs of one tree (parents before children, as the store orders them) and whether they may be out of date.
#[derive(Debug)]
pub(super) struct Tree {
    root_id: String,
    rows: Vec<RunRow>,
    stale: bool,
}

impl Tree {
    /// The tree rooted at `root_id` as `rows` holds it.
    pub(super) fn new(root_id: &str, rows: Vec<RunRow>) -> Tree {
        Tree { root_id: root_id.to_owned(), rows, stale: false }
    }

    /// The tree rooted at `root_id`, not read: every result is read afresh.
    pub(super) fn unread(root_id: &str) -> Tree {
        Tree { root_id: root_id.to_owned(), rows: Vec::new(), stale: true }
    }

    /// The root run's id.
    pub(super) fn root_id(&self) -> &str {
        &self.root_id
    }

    /// The runs as known.
    pub(super) fn rows(&self) -> &[RunRow] {
        &self.rows
    }

    /// The run that owns the pending step: the root, or down its `awaiting_child` chain.
    pub(super) fn pending_owner(&self) -> String {
        view::deepest(&self.rows, &self.root_id).id.clone()
    }

    /// `rows`, read under the lock of a write transaction: the tree as it is.
    pub(super) fn locked(&mut self, rows: Vec<RunRow>) {
        self.rows = rows;
        self.stale = false;
    }

    /// A step wrote `written` (one version after the row it found).
    pub(super) fn wrote(&mut self, written: RunRow) {
        let key = |r: &RunRow| (r.depth, r.started_at, r.id.clone());
        match self.rows.iter_mut().find(|r| r.id == written.id) {
            Some(known) => {
                self.stale |= known.version + 1 != written.version;
                *known = written;
            }
            None => {
                let at = self.rows.iter().position(|r| key(r) > key(&written)).unwrap_or(self.rows.len());
                self.rows.insert(at, written);
            }
        }
    }

    /// Something changed the tree that the rows do not show.
    pub(super) fn mark_stale(&mut self) {
        self.stale = true;
    }
}

impl Runs {
    /// The tree of run `run_id`, if the run belongs to the caller's project (else `Run not found.`, also for runs of
    /// another project: §3, never leak that they exist). One read: the tree of `run_id` as a root, and only when it is
    /// not one, the run and then its root's tree.
    pub(super) async fn load_tree(&self, scope: &Scope, run_id: &str) -> Result<Tree, Error> {
        if run_id.is_empty() || !run_id.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(Error::run_not_found());
        }
        let mut conn = self.inner.store.read().await?;
        let mut tree = rows::runs_in_tree(&mut conn, run_id).await?;
        let mut root_id = run_id.to_owned();
        if !tree.iter().any(|r| r.id == run_id) {
            let row = rows::get_run(&mut conn, run_id).await?.ok_or_else(Error::run_not_found)?;
            tree = rows::runs_in_tree(&mut conn, &row.root_run_id).await?;
            root_id = row.root_run_id;
        }
        match tree.iter().find(|r| r.id == run_id) {
            Some(row) if row.project_id == scope.project_id() => Ok(Tree::new(&root_id, tree)),
            _ => Err(Error::run_not_found()),
        }
    }

    /// The AdvanceResult of `tree` — read afresh when the tree is stale.
    pub(super) async fn result(&self, tree: &Tree, scope: &Scope) -> Result<AdvanceResult, Error> {
        let (url, note) = self.link(&tree.root_id, scope);
        let read;
        let rows = if tree.stale {
            let mut conn = self.inner.store.read().await?;
            read = rows::runs_in_tree(&mut conn, &tree.root_id).await?;
            if read.is_empty() {
                return Err(Error::run_not_found());
            }
            &read
        } else {
            &tree.rows
        };
        let mut result = view::advance_result(rows, &tree.root_id, &url);
        result.url_note = note;
        if result.status == "paused" && result.pending_step.is_none() {
            let waiting = view::deepest(rows, &tree.root_id);
            if waiting.awaiting_child_run_id.is_none() {
                result.resumes_at = self.timer_due_at(&waiting.id).await?.map(crate::clock::rfc3339);
            }
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use cairn_store::Store;

    use super::*;
    use crate::actor::Actor;
    use crate::engine::{Answer, Event};
    use crate::service::Service;

    const PARENT: &str = "name: parent\ninitial: a\nnodes:\n  a:\n    type: ai_agent\n    config: { prompt: \"first\" }\n    transitions: { success: call }\n  call:\n    type: subworkflow\n    config: { workflow: child }\n    transitions: { success: c }\n  c:\n    type: ai_agent\n    config: { prompt: \"after {{ a.text }}\" }\n    transitions: { success: $end }\n";
    const CHILD: &str = "name: child\ninitial: x\nnodes:\n  x:\n    type: ai_agent\n    config: { prompt: \"inside\" }\n    transitions: { success: $end }\n";

    async fn setup() -> (tempfile::TempDir, Runs, Scope) {
        let tmp = tempfile::tempdir().unwrap();
        let (home, project) = (tmp.path().join("home"), tmp.path().join("project"));
        std::fs::create_dir_all(project.join(".roscoe/workflows")).unwrap();
        std::fs::write(project.join(".roscoe/workflows/parent.yaml"), PARENT).unwrap();
        std::fs::write(project.join(".roscoe/workflows/child.yaml"), CHILD).unwrap();
        let store = Store::open(&Store::default_url(&home)).await.unwrap();
        let runs = Runs::new(store, Service::new(&home));
        let scope = Scope::resolve(Some(project.to_str().unwrap()), None).unwrap();
        (tmp, runs, scope)
    }

    fn answer(text: &str) -> Event {
        Event::Answer { node_id: None, answer: Answer::Response { response: text.into(), failed: false } }
    }

    /// The result of `tree` as kept, which must be up to date (not stale) and what a fresh read shows.
    async fn kept_result_is_fresh(runs: &Runs, tree: &Tree, scope: &Scope) -> AdvanceResult {
        assert!(!tree.stale, "the tree was kept up to date");
        let fresh = runs.result(&Tree::unread(tree.root_id()), scope).await.unwrap();
        assert_eq!(runs.result(tree, scope).await.unwrap(), fresh);
        fresh
    }

    #[tokio::test]
    async fn the_tree_a_call_kept_up_to_date_shows_what_a_fresh_read_shows() {
        let (_tmp, runs, scope) = setup().await;
        let started = runs.start_workflow(&scope, "parent", None, None, &Actor::local("cli")).await.unwrap();
        let root = started.result.run_id.clone();
        // (Starting a workflow with fan-out nodes adds a host hint of its own.)
        let kept = AdvanceResult { host_hint: None, ..started.result };
        assert_eq!(kept, runs.result(&Tree::unread(&root), &scope).await.unwrap());

        // Into the subworkflow (a child run created and started), out of it (the parent told), to the end.
        for (text, status, node) in [("one", "paused", Some("x")), ("two", "paused", Some("c")), ("three", "completed", None)] {
            let mut tree = runs.current_tree(&scope, &root).await.unwrap();
            runs.drive(&tree.pending_owner(), answer(text), &mut tree).await.unwrap();
            let result = kept_result_is_fresh(&runs, &tree, &scope).await;
            assert_eq!(result.status, status);
            assert_eq!(result.pending_step.map(|p| p.node_id).as_deref(), node);
        }
        assert_eq!(runs.load_tree(&scope, &root).await.unwrap().rows().len(), 2, "the child run is in the tree");

        // Cancelled half-way through a second run, then retried.
        let root = runs.start_workflow(&scope, "parent", None, None, &Actor::local("cli")).await.unwrap().result.run_id;
        let mut tree = runs.current_tree(&scope, &root).await.unwrap();
        runs.drive(&tree.pending_owner(), answer("one"), &mut tree).await.unwrap();
        let mut tree = runs.current_tree(&scope, &root).await.unwrap();
        runs.cancel_tree(&mut tree, None).await.unwrap();
        assert_eq!(kept_result_is_fresh(&runs, &tree, &scope).await.status, "cancelled");
        let mut tree = runs.current_tree(&scope, &root).await.unwrap();
        runs.drive(&root, Event::Retry, &mut tree).await.unwrap();
        assert_eq!(kept_result_is_fresh(&runs, &tree, &scope).await.status, "paused");
    }

    #[tokio::test]
    async fn a_tree_another_writer_changed_is_read_afresh() {
        let (_tmp, runs, scope) = setup().await;
        let root = runs.start_workflow(&scope, "parent", None, None, &Actor::local("cli")).await.unwrap().result.run_id;
        let mut before = runs.current_tree(&scope, &root).await.unwrap();
        let mut other = runs.current_tree(&scope, &root).await.unwrap();
        runs.drive(&root, answer("one"), &mut other).await.unwrap();
        // `before` still holds the root as it was; answering the child through it finds the root moved on.
        let child = other.pending_owner();
        runs.drive(&child, answer("two"), &mut before).await.unwrap();
        assert!(before.stale, "a step that found another version marks the tree stale");
        let fresh = runs.result(&Tree::unread(&root), &scope).await.unwrap();
        assert_eq!(runs.result(&before, &scope).await.unwrap(), fresh);
        assert_eq!(fresh.pending_step.map(|p| p.node_id).as_deref(), Some("c"));
    }
}
