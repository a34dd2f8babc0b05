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
