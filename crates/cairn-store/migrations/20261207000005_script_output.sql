-- What a running script node has printed so far, for live views in any process (the run page of every `cairn serve`,
-- `roscoe runs watch --verbose` in another terminal). One row per node run and stream (`stdout` / `stderr`): the last
-- whole lines printed (`tail`, at most 64 KiB, cut at a line start) and how many bytes of whole lines the stream has
-- printed in all (`total_bytes`), so a reader that saw N bytes knows which part of the tail is new. The process that
-- runs the script rewrites its rows at most about once a second, never touches `workflow_runs` (a run's
-- compare-and-swap never meets these writes), and the rows go when the node run ends: its whole output is then in
-- `node_runs.output`.
CREATE TABLE script_output (
    node_run_id TEXT NOT NULL,
    stream TEXT NOT NULL,
    run_id TEXT NOT NULL,
    node_id TEXT NOT NULL,
    tail TEXT NOT NULL,
    total_bytes BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (node_run_id, stream)
);
CREATE INDEX script_output_by_run ON script_output (run_id);
