-- Workflow schedules (roscoe `triggers:` entries `schedule` and `every`): one row per project (`''` = global),
-- workflow and trigger (`trigger_key`: the trigger's kind and expression, so an edited trigger is a new schedule).
-- `last_slot` is the last slot (epoch ms) that started a run, or when the schedule was first seen or resumed: every
-- server of the database claims a due slot with a compare-and-set on it before it starts the slot's run, so a
-- slot starts at most one run however many servers see it. `last_skipped` counts the slots the last catch-up passed
-- over (all servers were down); `paused` is 1 while `roscoe schedules pause` holds it.
CREATE TABLE workflow_schedules (
    project_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    trigger_key TEXT NOT NULL,
    last_slot BIGINT NOT NULL,
    paused BIGINT NOT NULL DEFAULT 0,
    last_run_id TEXT,
    last_skipped BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (project_id, workflow_id, trigger_key)
);
