-- 0001: the whole schema of the first PostgreSQL release (the SQLite schema at its version 5).
-- Every tenant table carries user_id, and every primary key, unique key and foreign key of a
-- tenant table includes it, so the tables can be distributed by user_id (Citus) unchanged.
-- Times are integer milliseconds since the epoch, as in the SQLite backend.
CREATE EXTENSION IF NOT EXISTS vector;

-- Stemming like SQLite's porter tokenizer: English snowball stems and no stop words (FTS5
-- indexes every word). Diacritics are folded by the application before text reaches it.
CREATE TEXT SEARCH DICTIONARY omoide_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION omoide_fts (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION omoide_fts
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH omoide_stem;

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE projects (
    id            BIGINT GENERATED ALWAYS AS IDENTITY,
    user_id       TEXT NOT NULL,
    scope_id      TEXT NOT NULL,
    name          TEXT NOT NULL,
    description   TEXT,
    isolated      BOOLEAN NOT NULL DEFAULT false,
    colour        TEXT,
    icon          TEXT,
    notes         TEXT,
    system_prompt TEXT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT,
    PRIMARY KEY (user_id, id),
    UNIQUE (user_id, scope_id, name)
);

CREATE TABLE sessions (
    id          BIGINT GENERATED ALWAYS AS IDENTITY,
    user_id     TEXT NOT NULL,
    scope_id    TEXT NOT NULL,
    external_id TEXT NOT NULL,
    name        TEXT,
    project_id  BIGINT,
    metadata    JSONB NOT NULL DEFAULT '{}',
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (user_id, id),
    UNIQUE (user_id, scope_id, external_id),
    FOREIGN KEY (user_id, project_id) REFERENCES projects (user_id, id)
        ON DELETE SET NULL (project_id)
);
CREATE INDEX sessions_project ON sessions (user_id, project_id);

CREATE TABLE episodes (
    id               TEXT NOT NULL,
    seq              BIGINT GENERATED ALWAYS AS IDENTITY,  -- insertion order (SQLite's rowid)
    user_id          TEXT NOT NULL,
    scope_id         TEXT NOT NULL,
    session_id       BIGINT NOT NULL,
    messages         JSONB NOT NULL,
    created_at       BIGINT NOT NULL,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at BIGINT,
    consolidated_at  BIGINT,
    consolidation_id TEXT,
    PRIMARY KEY (user_id, id),
    FOREIGN KEY (user_id, session_id) REFERENCES sessions (user_id, id) ON DELETE CASCADE
);
CREATE INDEX episodes_session ON episodes (user_id, session_id, created_at, seq);

-- tsv holds the memory's text (weight A), its neighbour context (weight B) and one opaque
-- token per tenant (no position), so a search touches only its tenant's postings.
-- doc_len counts the tokens of all three, as FTS5's bm25 counts every column.
CREATE TABLE memories (
    id               TEXT NOT NULL,
    seq              BIGINT GENERATED ALWAYS AS IDENTITY,
    user_id          TEXT NOT NULL,
    scope_id         TEXT NOT NULL,
    session_id       BIGINT,
    type             TEXT NOT NULL,
    text             TEXT NOT NULL,
    context          TEXT NOT NULL DEFAULT '',
    metadata         JSONB NOT NULL DEFAULT '{}',
    valid_from       BIGINT NOT NULL,
    invalid_at       BIGINT,
    supersedes       TEXT,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    tsv              TSVECTOR NOT NULL,
    doc_len          INTEGER NOT NULL,
    PRIMARY KEY (user_id, id),
    FOREIGN KEY (user_id, session_id) REFERENCES sessions (user_id, id) ON DELETE CASCADE
);
CREATE INDEX memories_tenant ON memories (user_id, scope_id, created_at, seq) INCLUDE (doc_len);
CREATE INDEX memories_type ON memories (user_id, scope_id, type, created_at);
CREATE INDEX memories_session ON memories (user_id, session_id, seq);
CREATE INDEX memories_supersedes ON memories (user_id, supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX memories_tsv ON memories USING gin (tsv);

-- Diacritics folded before stemming (SQLite: remove_diacritics 2). The table is every Latin-1
-- and Latin Extended-A/B letter whose decomposition is one ASCII letter plus marks.
CREATE FUNCTION omoide_fold(t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(t,
        'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžſƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳ',
        'AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzsOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYy')
$$;

-- The full-text vector follows the row, in the writer's transaction, whatever the write path.
CREATE FUNCTION memories_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.tsv := setweight(to_tsvector('omoide_fts', omoide_fold(NEW.text)), 'A')
        || setweight(to_tsvector('omoide_fts', omoide_fold(NEW.context)), 'B')
        || array_to_tsvector(ARRAY['t' || md5(NEW.user_id || chr(31) || NEW.scope_id)]);
    NEW.doc_len := 1 + (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(NEW.tsv) u);
    RETURN NEW;
END
$$;
CREATE TRIGGER memories_tsv BEFORE INSERT OR UPDATE OF text, context ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_tsv();

CREATE TABLE memory_sources (
    user_id    TEXT NOT NULL,
    memory_id  TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    PRIMARY KEY (user_id, memory_id, episode_id),
    FOREIGN KEY (user_id, memory_id) REFERENCES memories (user_id, id) ON DELETE CASCADE,
    FOREIGN KEY (user_id, episode_id) REFERENCES episodes (user_id, id) ON DELETE CASCADE
);
CREATE INDEX memory_sources_episode ON memory_sources (user_id, episode_id);

CREATE TABLE history (
    id         BIGINT GENERATED ALWAYS AS IDENTITY,
    memory_id  TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    scope_id   TEXT NOT NULL,
    event      TEXT NOT NULL,
    old_text   TEXT,
    new_text   TEXT,
    actor      TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, id)
);
CREATE INDEX history_memory ON history (user_id, memory_id, id);

-- Vectors of any dimension (the model decides); a search compares only equal dimensions.
CREATE TABLE memory_vectors (
    user_id   TEXT NOT NULL,
    scope_id  TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    embedding VECTOR NOT NULL,
    PRIMARY KEY (user_id, memory_id),
    FOREIGN KEY (user_id, memory_id) REFERENCES memories (user_id, id) ON DELETE CASCADE
);
CREATE INDEX memory_vectors_tenant ON memory_vectors (user_id, scope_id);

CREATE TABLE jobs (
    id           BIGINT GENERATED ALWAYS AS IDENTITY,
    kind         TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    scope_id     TEXT NOT NULL,
    payload      JSONB NOT NULL,
    state        TEXT NOT NULL DEFAULT 'pending',
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 5,
    last_error   TEXT,
    run_after    BIGINT NOT NULL,
    lease_until  BIGINT,
    result       JSONB,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (user_id, id)
);
CREATE INDEX jobs_id ON jobs (id);  -- workers address jobs by id alone (identity: unique)
CREATE INDEX jobs_ready ON jobs (state, run_after, id);
CREATE INDEX jobs_tenant ON jobs (user_id, scope_id, state);

CREATE TABLE job_steps (
    user_id           TEXT NOT NULL,
    job_id            BIGINT NOT NULL,
    step              TEXT NOT NULL,
    status            TEXT NOT NULL,
    detail            TEXT NOT NULL DEFAULT '',
    calls             INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (user_id, job_id, step),
    FOREIGN KEY (user_id, job_id) REFERENCES jobs (user_id, id) ON DELETE CASCADE
);

CREATE TABLE entities (
    id            TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    scope_id      TEXT NOT NULL,
    name          TEXT NOT NULL,
    type          TEXT NOT NULL,
    mention_count INTEGER NOT NULL DEFAULT 1,
    confidence    DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    source        TEXT NOT NULL DEFAULT 'extraction',
    last_seen_at  BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    seq           BIGINT GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (user_id, id)
);
-- Names compare ignoring case, like SQLite's COLLATE NOCASE.
-- One entity per name within a tenant, equal ignoring case (as SQLite's NOCASE name column).
CREATE UNIQUE INDEX entities_name ON entities (user_id, scope_id, lower(name));
CREATE INDEX entities_seen ON entities (user_id, scope_id, last_seen_at);

CREATE TABLE relationships (
    id            TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    scope_id      TEXT NOT NULL,
    from_id       TEXT NOT NULL,
    to_id         TEXT NOT NULL,
    label         TEXT NOT NULL,
    mention_count INTEGER NOT NULL DEFAULT 1,
    notes         TEXT,
    last_seen_at  BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    seq           BIGINT GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (user_id, id),
    UNIQUE (user_id, from_id, to_id, label),
    FOREIGN KEY (user_id, from_id) REFERENCES entities (user_id, id) ON DELETE CASCADE,
    FOREIGN KEY (user_id, to_id) REFERENCES entities (user_id, id) ON DELETE CASCADE
);
CREATE INDEX relationships_to ON relationships (user_id, to_id);
CREATE INDEX relationships_tenant ON relationships (user_id, scope_id);

CREATE TABLE entity_episodes (
    user_id    TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    PRIMARY KEY (user_id, entity_id, episode_id),
    FOREIGN KEY (user_id, entity_id) REFERENCES entities (user_id, id) ON DELETE CASCADE,
    FOREIGN KEY (user_id, episode_id) REFERENCES episodes (user_id, id) ON DELETE CASCADE
);
CREATE INDEX entity_episodes_episode ON entity_episodes (user_id, episode_id);

CREATE TABLE entity_vectors (
    user_id   TEXT NOT NULL,
    scope_id  TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    embedding VECTOR NOT NULL,
    PRIMARY KEY (user_id, entity_id),
    FOREIGN KEY (user_id, entity_id) REFERENCES entities (user_id, id) ON DELETE CASCADE
);
CREATE INDEX entity_vectors_tenant ON entity_vectors (user_id, scope_id);

CREATE TABLE variables (
    user_id    TEXT NOT NULL,
    scope_id   TEXT NOT NULL,
    name       TEXT NOT NULL,
    value      JSONB NOT NULL,
    type       TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, scope_id, name)
);

CREATE TABLE token_usage (
    user_id           TEXT NOT NULL,
    scope_id          TEXT NOT NULL,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    requests          BIGINT NOT NULL DEFAULT 0,
    updated_at        BIGINT NOT NULL,
    PRIMARY KEY (user_id, scope_id)
);

CREATE TABLE chunk_state (
    user_id    TEXT NOT NULL,
    session_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, session_id),
    FOREIGN KEY (user_id, session_id) REFERENCES sessions (user_id, id) ON DELETE CASCADE
);

CREATE TABLE chunk_ledger (
    id         BIGINT GENERATED ALWAYS AS IDENTITY,
    user_id    TEXT NOT NULL,
    session_id BIGINT NOT NULL,
    memory_id  TEXT NOT NULL,
    last_hash  TEXT NOT NULL,
    last_at    BIGINT NOT NULL,
    last_seq   BIGINT NOT NULL,
    last_index INTEGER NOT NULL,
    messages   INTEGER NOT NULL,
    tokens     INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, id),
    UNIQUE (user_id, session_id, last_hash),
    FOREIGN KEY (user_id, session_id) REFERENCES sessions (user_id, id) ON DELETE CASCADE
);
CREATE INDEX chunk_ledger_session ON chunk_ledger (user_id, session_id, id);

CREATE TABLE consolidations (
    id          TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    scope_id    TEXT NOT NULL,
    session_id  BIGINT NOT NULL,
    summary_id  TEXT,
    report      JSONB NOT NULL,
    snapshot    JSONB NOT NULL,
    created_at  BIGINT NOT NULL,
    reverted_at BIGINT,
    PRIMARY KEY (user_id, id),
    FOREIGN KEY (user_id, session_id) REFERENCES sessions (user_id, id) ON DELETE CASCADE
);
