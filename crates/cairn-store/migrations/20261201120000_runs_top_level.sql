-- Every web page's workspace switcher counts each workspace's top-level user runs (observe.rs): with this index the
-- count reads the index alone instead of every run row of the project.
CREATE INDEX runs_top_level ON workflow_runs (project_id, kind, parent_run_id);
