-- 0004: JiuwenMemory's dreaming schedules (a tenant's sessions consolidated every interval) and
-- its per-scope config store. A schedule is claimed by moving next_run_at forward in the
-- transaction that enqueues its sweep job, so several worker processes enqueue it once.
CREATE TABLE dreaming_schedules (
    user_id      TEXT NOT NULL,
    scope_id     TEXT NOT NULL,
    enabled      BOOLEAN NOT NULL,
    interval_ms  BIGINT NOT NULL,
    settings     JSONB NOT NULL DEFAULT '{}',
    next_run_at  BIGINT NOT NULL,
    last_run_at  BIGINT,
    last_job_id  BIGINT,
    sweeps       INTEGER NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (user_id, scope_id)
);
CREATE INDEX dreaming_schedules_due ON dreaming_schedules(next_run_at) WHERE enabled;

CREATE TABLE scope_configs (
    user_id    TEXT NOT NULL,
    scope_id   TEXT NOT NULL,
    config     JSONB NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, scope_id)
);
