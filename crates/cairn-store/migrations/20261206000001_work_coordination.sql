-- Work items agents coordinate on: a priority (0 most urgent … 4), labels (a JSON array of short lower-case
-- strings), a parent item, and the items an item waits for (its blockers, also kept on the row as a JSON array for
-- display; `work_blockers` is what the ready queue and the cycle check read), and the holder's lease: when it runs
-- out (NULL: never) and how long each renewal lasts (0: no lease).
ALTER TABLE work_items ADD COLUMN priority BIGINT NOT NULL DEFAULT 2;
ALTER TABLE work_items ADD COLUMN labels TEXT NOT NULL DEFAULT '[]';
ALTER TABLE work_items ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE work_items ADD COLUMN blocked_by TEXT NOT NULL DEFAULT '[]';
ALTER TABLE work_items ADD COLUMN lease_expires_at BIGINT;
ALTER TABLE work_items ADD COLUMN lease_ms BIGINT NOT NULL DEFAULT 0;

CREATE TABLE work_blockers (
    item_id TEXT NOT NULL REFERENCES work_items (id),
    blocker_id TEXT NOT NULL REFERENCES work_items (id),
    PRIMARY KEY (item_id, blocker_id)
);
CREATE INDEX work_blockers_by_blocker ON work_blockers (blocker_id);
CREATE INDEX work_items_ready ON work_items (space_id, state, priority, created_at, id);
CREATE INDEX work_items_by_parent ON work_items (parent_id);
CREATE INDEX work_items_by_lease ON work_items (lease_expires_at);
