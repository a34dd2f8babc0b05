-- 0003: LLM extraction. Per-job step records (extraction jobs are idempotent), the nexusAI
-- knowledge graph (entities, relationships, provenance, entity vectors), Jiuwen typed
-- variables, and per-tenant LLM token counters.
ALTER TABLE jobs ADD COLUMN result TEXT;

-- One row per finished step of a job, written in the transaction that applies the step, so a
-- job that runs again (a crash, an expired lease) skips what already happened.
CREATE TABLE job_steps (
    job_id            INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    step              TEXT NOT NULL,
    status            TEXT NOT NULL,  -- done | skipped
    detail            TEXT NOT NULL DEFAULT '',
    calls             INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL,
    PRIMARY KEY (job_id, step)
) WITHOUT ROWID;

-- Walks a fact's versions forwards (history of a superseded memory).
CREATE INDEX memories_supersedes ON memories(supersedes) WHERE supersedes IS NOT NULL;

CREATE TABLE entities (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL,
    scope_id      TEXT NOT NULL,
    name          TEXT NOT NULL COLLATE NOCASE,
    type          TEXT NOT NULL,
    mention_count INTEGER NOT NULL DEFAULT 1,
    confidence    REAL NOT NULL DEFAULT 1.0,
    source        TEXT NOT NULL DEFAULT 'extraction',
    last_seen_at  INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (user_id, scope_id, name, type)
);
CREATE INDEX entities_seen ON entities(user_id, scope_id, last_seen_at);

CREATE TABLE relationships (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL,
    scope_id      TEXT NOT NULL,
    from_id       TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    to_id         TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    label         TEXT NOT NULL,
    mention_count INTEGER NOT NULL DEFAULT 1,
    notes         TEXT,
    last_seen_at  INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (from_id, to_id, label)
);
CREATE INDEX relationships_to ON relationships(to_id);
CREATE INDEX relationships_tenant ON relationships(user_id, scope_id);

CREATE TABLE entity_episodes (
    entity_id  TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    PRIMARY KEY (entity_id, episode_id)
) WITHOUT ROWID;
CREATE INDEX entity_episodes_episode ON entity_episodes(episode_id);

-- float32 BLOBs of each entity's "name (type)", scanned exactly per tenant.
CREATE TABLE entity_vectors (
    entity_id TEXT PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    tenant    TEXT NOT NULL,
    vec       BLOB NOT NULL
);
CREATE INDEX entity_vectors_tenant ON entity_vectors(tenant);

CREATE TABLE variables (
    user_id    TEXT NOT NULL,
    scope_id   TEXT NOT NULL,
    name       TEXT NOT NULL,
    value      TEXT NOT NULL,  -- a JSON scalar of the declared type
    type       TEXT NOT NULL,  -- string | boolean | integer | number
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, scope_id, name)
) WITHOUT ROWID;

CREATE TABLE token_usage (
    user_id           TEXT NOT NULL,
    scope_id          TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    requests          INTEGER NOT NULL DEFAULT 0,
    updated_at        INTEGER NOT NULL,
    PRIMARY KEY (user_id, scope_id)
) WITHOUT ROWID;
