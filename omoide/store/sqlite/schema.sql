-- The complete current shape of a fresh database. Keep equal to applying every migration
-- in order (tests/store/test_migrations.py checks it). Existing databases change only through
-- migrations/NNNN_*.sql, never through this file.
-- 0001: tenants' sessions, episodes, memories with FTS5 and vectors, history.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE projects (
    id          INTEGER PRIMARY KEY,
    user_id     TEXT NOT NULL,
    scope_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT,
    isolated    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    UNIQUE (user_id, scope_id, name)
);

CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    user_id     TEXT NOT NULL,
    scope_id    TEXT NOT NULL,
    external_id TEXT NOT NULL,
    name        TEXT,
    project_id  INTEGER REFERENCES projects(id) ON DELETE SET NULL,
    metadata    TEXT NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (user_id, scope_id, external_id)
);
CREATE INDEX sessions_project ON sessions(project_id);

CREATE TABLE episodes (
    id               TEXT PRIMARY KEY,
    session_id       INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    user_id          TEXT NOT NULL,
    scope_id         TEXT NOT NULL,
    messages         TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at INTEGER
);
CREATE INDEX episodes_session ON episodes(session_id, created_at);

CREATE TABLE memories (
    seq              INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    user_id          TEXT NOT NULL,
    scope_id         TEXT NOT NULL,
    session_id       INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
    type             TEXT NOT NULL,
    text             TEXT NOT NULL,
    context          TEXT NOT NULL DEFAULT '',
    tenant_token     TEXT NOT NULL,
    metadata         TEXT NOT NULL DEFAULT '{}',
    valid_from       INTEGER NOT NULL,
    invalid_at       INTEGER,
    supersedes       TEXT,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX memories_tenant ON memories(user_id, scope_id, created_at);
CREATE INDEX memories_session ON memories(session_id, seq);

CREATE TABLE memory_sources (
    memory_seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    PRIMARY KEY (memory_seq, episode_id)
) WITHOUT ROWID;
CREATE INDEX memory_sources_episode ON memory_sources(episode_id);

-- External-content FTS5 index over memories, kept in sync by triggers (nexusAI seed).
-- `context` holds the neighbouring turns of a raw message, weighted lower than `text`.
-- `tenant_token` (one opaque token per tenant, weight 0) lets a MATCH ... AND tenant_token:x
-- touch only one tenant's postings instead of ranking every tenant's matches.
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, context, tenant_token,
    content='memories', content_rowid='seq',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text, context, tenant_token)
    VALUES (new.seq, new.text, new.context, new.tenant_token);
END;
-- Document frequencies, to drop query terms so common that they only cost time.
CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, 'row');
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, context, tenant_token)
    VALUES ('delete', old.seq, old.text, old.context, old.tenant_token);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, context ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, context, tenant_token)
    VALUES ('delete', old.seq, old.text, old.context, old.tenant_token);
    INSERT INTO memories_fts(rowid, text, context, tenant_token)
    VALUES (new.seq, new.text, new.context, new.tenant_token);
END;

CREATE TABLE history (
    id         INTEGER PRIMARY KEY,
    memory_id  TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    scope_id   TEXT NOT NULL,
    event      TEXT NOT NULL,
    old_text   TEXT,
    new_text   TEXT,
    actor      TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX history_memory ON history(memory_id, id);
CREATE INDEX history_tenant ON history(user_id, scope_id);

-- Vectors are float32 BLOBs; SQLite is their only source of truth. Searches run on an
-- in-process numpy copy that follows vec_log, which the triggers below append to.
CREATE TABLE memory_vectors (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
    tenant     TEXT NOT NULL,
    vec        BLOB NOT NULL
);
CREATE INDEX memory_vectors_tenant ON memory_vectors(tenant);

CREATE TABLE vec_log (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT NOT NULL,
    memory_seq INTEGER NOT NULL,
    op         INTEGER NOT NULL  -- 1 = put, 0 = delete
);
CREATE TRIGGER memory_vectors_log_insert AFTER INSERT ON memory_vectors BEGIN
    INSERT INTO vec_log(tenant, memory_seq, op) VALUES (new.tenant, new.memory_seq, 1);
END;
CREATE TRIGGER memory_vectors_log_update AFTER UPDATE ON memory_vectors BEGIN
    INSERT INTO vec_log(tenant, memory_seq, op) VALUES (new.tenant, new.memory_seq, 1);
END;
CREATE TRIGGER memory_vectors_log_delete AFTER DELETE ON memory_vectors BEGIN
    INSERT INTO vec_log(tenant, memory_seq, op) VALUES (old.tenant, old.memory_seq, 0);
END;
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
-- 0004: the knowledge lifecycle. WilmerAI's chunk ledger (an append-only record of which
-- message each chunk memory ends at, so no message is chunked twice) and nexusAI's
-- consolidation (old episodes merged into a summary memory, reversibly).
ALTER TABLE episodes ADD COLUMN consolidated_at INTEGER;
ALTER TABLE episodes ADD COLUMN consolidation_id TEXT;

-- The newest memories of one type (profile entries, a session's summary) without scanning
-- the tenant's other memories.
CREATE INDEX memories_type ON memories(user_id, scope_id, type, created_at);

-- A session has chunk state once it has been chunked (WilmerAI's memory file on disk):
-- standard mode. Without it (a new session, or after a reset) only the token threshold applies.
CREATE TABLE chunk_state (
    session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL
);

-- One row per chunk memory: the hash of the last message it covers and where that message is
-- (episode created_at, episode rowid, index), the cursor the next chunk starts after.
CREATE TABLE chunk_ledger (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    memory_id   TEXT NOT NULL,
    last_hash   TEXT NOT NULL,
    last_at     INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    last_index  INTEGER NOT NULL,
    messages    INTEGER NOT NULL,
    tokens      INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (session_id, last_hash)
);

-- One row per consolidation pass that changed something: what it changed, and a snapshot of
-- the swept graph rows, so that it can be reverted.
CREATE TABLE consolidations (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    scope_id    TEXT NOT NULL,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    summary_id  TEXT,
    report      TEXT NOT NULL,
    snapshot    TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    reverted_at INTEGER
);
CREATE INDEX consolidations_session ON consolidations(session_id, created_at);

-- 0005: nexusAI projects. The fields its updateProject allowlist names (colour, icon, notes,
-- system_prompt) and the time of the last update; a project's sessions are detached, never
-- deleted, when it is deleted.
ALTER TABLE projects ADD COLUMN colour TEXT;
ALTER TABLE projects ADD COLUMN icon TEXT;
ALTER TABLE projects ADD COLUMN notes TEXT;
ALTER TABLE projects ADD COLUMN system_prompt TEXT;
ALTER TABLE projects ADD COLUMN updated_at INTEGER;
UPDATE projects SET updated_at = created_at;

-- 0006: per-tenant keyword index (see migrations/0006_keyword_index.sql).
-- No foreign key and no index by memory: a memory's postings go with its kw_docs row (trigger
-- below), found by the terms listed there, which keeps inserts to one B-tree.
CREATE TABLE kw_postings (
    tenant     TEXT NOT NULL,
    term       TEXT NOT NULL,
    memory_seq INTEGER NOT NULL,
    tf         REAL NOT NULL,
    dl         INTEGER NOT NULL,
    PRIMARY KEY (tenant, term, memory_seq)
) WITHOUT ROWID;

-- Per-tenant document frequency of each term: raised by the store for each batch it indexes
-- (keyword.py), lowered by the kw_docs trigger below whatever deletes the memory.
CREATE TABLE kw_terms (
    tenant TEXT NOT NULL,
    term   TEXT NOT NULL,
    df     INTEGER NOT NULL,
    PRIMARY KEY (tenant, term)
) WITHOUT ROWID;

-- One row per indexed memory (its length and its terms as a JSON array), deleted with the
-- memory; and per tenant the count and total length.
CREATE TABLE kw_docs (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
    tenant     TEXT NOT NULL,
    dl         INTEGER NOT NULL,
    terms      TEXT NOT NULL
);
CREATE TABLE kw_tenants (
    tenant TEXT PRIMARY KEY,
    docs   INTEGER NOT NULL,
    tokens INTEGER NOT NULL
) WITHOUT ROWID;

-- 0011: kw_log, followed by the in-process posting-list cache (store/sqlite/postings.py) as
-- vectors follow vec_log: op 1 a memory indexed, 0 unindexed (no words: none stay behind).
CREATE TABLE kw_log (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT NOT NULL,
    memory_seq INTEGER NOT NULL,
    op         INTEGER NOT NULL
);
CREATE TRIGGER kw_docs_insert AFTER INSERT ON kw_docs BEGIN
    INSERT INTO kw_tenants(tenant, docs, tokens) VALUES (new.tenant, 1, new.dl)
    ON CONFLICT (tenant) DO UPDATE SET docs = docs + 1, tokens = tokens + new.dl;
    INSERT INTO kw_log(tenant, memory_seq, op) VALUES (new.tenant, new.memory_seq, 1);
END;
-- (0010: terms whose last memory goes leave kw_terms)
CREATE TRIGGER kw_docs_delete AFTER DELETE ON kw_docs BEGIN
    UPDATE kw_tenants SET docs = docs - 1, tokens = tokens - old.dl WHERE tenant = old.tenant;
    DELETE FROM kw_postings WHERE tenant = old.tenant AND memory_seq = old.memory_seq
        AND term IN (SELECT value FROM json_each(old.terms));
    UPDATE kw_terms SET df = df - 1 WHERE tenant = old.tenant
        AND term IN (SELECT value FROM json_each(old.terms));
    DELETE FROM kw_terms WHERE tenant = old.tenant AND df <= 0
        AND term IN (SELECT value FROM json_each(old.terms));
    INSERT INTO kw_log(tenant, memory_seq, op) VALUES (old.tenant, old.memory_seq, 0);
END;

-- 0007: one entity per name within a tenant, equal ignoring case (the column is NOCASE).
CREATE UNIQUE INDEX entities_name ON entities(user_id, scope_id, name);

-- 0008: a reindex builds its vectors here, beside the live ones, and swaps them in one
-- transaction when every memory has one; a killed reindex leaves search untouched and resumes
-- from the rows already built (the target embedder is in meta: rebuild_model, rebuild_dim).
CREATE TABLE vector_rebuild (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
    tenant     TEXT NOT NULL,
    vec        BLOB NOT NULL
);
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
