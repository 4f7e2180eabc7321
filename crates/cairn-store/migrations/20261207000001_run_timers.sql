-- Durable timers of runs: when a paused run's step falls due without anyone looking (a human step's `timeoutMs`).
-- A run waits at one step at a time, so it has at most one timer; the step that set it is `node_run_id`. Every
-- server of the database reads the timers due (`due_at`, epoch ms) and fires each through the run's own
-- compare-and-swap, so a timer takes effect once however many servers see it.
CREATE TABLE run_timers (
    run_id TEXT PRIMARY KEY NOT NULL,
    node_run_id TEXT NOT NULL,
    due_at BIGINT NOT NULL
);
CREATE INDEX run_timers_by_due ON run_timers (due_at);
