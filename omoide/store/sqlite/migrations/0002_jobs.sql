-- 0002: durable background jobs, committed in the same transaction as the data they serve.
CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    scope_id     TEXT NOT NULL,
    payload      TEXT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'pending',
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 5,
    last_error   TEXT,
    run_after    INTEGER NOT NULL,
    lease_until  INTEGER,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX jobs_ready ON jobs(state, run_after);
CREATE INDEX jobs_tenant ON jobs(user_id, scope_id, state);
