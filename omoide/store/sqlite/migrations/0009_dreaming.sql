-- 0009: JiuwenMemory's dreaming schedules (a tenant's sessions consolidated every interval) and
-- its per-scope config store. A schedule is claimed by moving next_run_at forward in the
-- transaction that enqueues its sweep job, so several worker processes enqueue it once.
CREATE TABLE dreaming_schedules (
    user_id      TEXT NOT NULL,
    scope_id     TEXT NOT NULL,
    enabled      INTEGER NOT NULL,
    interval_ms  INTEGER NOT NULL,
    settings     TEXT NOT NULL DEFAULT '{}',
    next_run_at  INTEGER NOT NULL,
    last_run_at  INTEGER,
    last_job_id  INTEGER,
    sweeps       INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (user_id, scope_id)
) WITHOUT ROWID;
CREATE INDEX dreaming_schedules_due ON dreaming_schedules(next_run_at) WHERE enabled = 1;

CREATE TABLE scope_configs (
    user_id    TEXT NOT NULL,
    scope_id   TEXT NOT NULL,
    config     TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, scope_id)
) WITHOUT ROWID;
