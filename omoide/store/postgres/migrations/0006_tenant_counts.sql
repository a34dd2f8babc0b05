-- 0006: per-tenant counters, kept by the database itself. Every search needed the tenant's
-- number of memories and their total document length (bm25's N and average length), and its
-- number of vectors (exact or HNSW; memories without a vector), each a count over the whole
-- tenant: ~50 ms at 100k memories. Statement-level triggers now append one delta row per
-- (user_id, scope_id) per statement; a reader sums the tenant's rows. Rows are only inserted,
-- never updated, so concurrent writers of one tenant never wait for each other or fail to
-- serialise; `omoide/store/postgres/counts.py` folds a tenant's deltas into one row now and
-- then (DELETE ... RETURNING + INSERT of the sum in one transaction: a snapshot sees either
-- all the old rows or the sum). A write path cannot forget them: every INSERT, UPDATE, DELETE
-- (cascades included) of `memories` and `memory_vectors` fires them.
-- The primary key holds user_id (Citus: distribute by user_id; triggers there need
-- `citus.enable_unsafe_triggers`, README).
--
-- Keyword postings. Ranking unnested the tsvector of every row holding a query lexeme (~12k
-- rows, 250-500 ms at 100k memories); `memory_terms` holds one row per (memory, lexeme) with
-- what bm25 needs (weighted term frequency, document length, seq), its key led by the
-- tenant, so a search reads its terms' postings by one index-only range scan per term, as
-- SQLite's per-tenant FTS5 postings do. The same triggers keep it; the GIN index on tsv,
-- which only the keyword search used, is dropped (writers maintain the postings instead).
CREATE TABLE tenant_counts (
    user_id  TEXT NOT NULL,
    scope_id TEXT NOT NULL,
    id       BIGINT GENERATED ALWAYS AS IDENTITY,
    memories BIGINT NOT NULL DEFAULT 0,
    doc_len  BIGINT NOT NULL DEFAULT 0,
    vectors  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, scope_id, id)
);

-- w: the lexeme's positions weighted as fts.py's TEXT_WEIGHT (A, the text: 1.0) and
-- CONTEXT_WEIGHT (B, the neighbour context: 0.4). The tenant token lexeme has no posting.
CREATE TABLE memory_terms (
    user_id   TEXT NOT NULL,
    scope_id  TEXT NOT NULL,
    lexeme    TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    seq       BIGINT NOT NULL,
    doc_len   INTEGER NOT NULL,
    w         FLOAT8 NOT NULL,
    PRIMARY KEY (user_id, scope_id, lexeme, memory_id) INCLUDE (seq, doc_len, w)
);

CREATE FUNCTION memory_postings(user_id TEXT, scope_id TEXT, id TEXT, seq BIGINT, doc_len INTEGER,
    tsv TSVECTOR) RETURNS SETOF memory_terms LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT user_id, scope_id, u.lexeme, id, seq, doc_len,
        (SELECT coalesce(sum(CASE wt WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.4 ELSE 0 END), 0)
         FROM unnest(u.weights) wt)::float8
    FROM unnest(tsv) u WHERE u.lexeme <> 't' || md5(user_id || chr(31) || scope_id)
$$;

-- Transition tables allow one event per trigger: the function serves the three.
CREATE FUNCTION tenant_counts_memories() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO tenant_counts (user_id, scope_id, memories, doc_len)
        SELECT user_id, scope_id, count(*), sum(doc_len) FROM new_rows GROUP BY user_id, scope_id;
        INSERT INTO memory_terms SELECT p.* FROM new_rows n,
            memory_postings(n.user_id, n.scope_id, n.id, n.seq, n.doc_len, n.tsv) p;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO tenant_counts (user_id, scope_id, memories, doc_len)
        SELECT user_id, scope_id, -count(*), -sum(doc_len) FROM old_rows
        GROUP BY user_id, scope_id;
        DELETE FROM memory_terms t USING old_rows o, unnest(o.tsv) u
        WHERE (t.user_id, t.scope_id, t.lexeme, t.memory_id)
            = (o.user_id, o.scope_id, u.lexeme, o.id);
    ELSE  -- most updates (access counts, validity) change neither: no row then
        INSERT INTO tenant_counts (user_id, scope_id, memories, doc_len)
        SELECT user_id, scope_id, sum(n), sum(d) FROM (
            SELECT user_id, scope_id, 1 AS n, doc_len AS d FROM new_rows
            UNION ALL SELECT user_id, scope_id, -1, -doc_len FROM old_rows
        ) c GROUP BY user_id, scope_id HAVING sum(n) <> 0 OR sum(d) <> 0;
        -- postings of the rows whose indexed part changed (text, context): old out, new in
        DELETE FROM memory_terms t USING old_rows o, unnest(o.tsv) u
        WHERE (t.user_id, t.scope_id, t.lexeme, t.memory_id)
            = (o.user_id, o.scope_id, u.lexeme, o.id)
            AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE (n.user_id, n.id, n.scope_id, n.seq,
                n.doc_len, n.tsv) = (o.user_id, o.id, o.scope_id, o.seq, o.doc_len, o.tsv));
        INSERT INTO memory_terms SELECT p.* FROM new_rows n,
            memory_postings(n.user_id, n.scope_id, n.id, n.seq, n.doc_len, n.tsv) p
        WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE (n.user_id, n.id, n.scope_id, n.seq,
            n.doc_len, n.tsv) = (o.user_id, o.id, o.scope_id, o.seq, o.doc_len, o.tsv));
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION tenant_counts_vectors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO tenant_counts (user_id, scope_id, vectors)
        SELECT user_id, scope_id, count(*) FROM new_rows GROUP BY user_id, scope_id;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO tenant_counts (user_id, scope_id, vectors)
        SELECT user_id, scope_id, -count(*) FROM old_rows GROUP BY user_id, scope_id;
    ELSE  -- an upsert's update keeps the count unless a row changed tenant
        INSERT INTO tenant_counts (user_id, scope_id, vectors)
        SELECT user_id, scope_id, sum(n) FROM (
            SELECT user_id, scope_id, 1 AS n FROM new_rows
            UNION ALL SELECT user_id, scope_id, -1 FROM old_rows
        ) c GROUP BY user_id, scope_id HAVING sum(n) <> 0;
    END IF;
    RETURN NULL;
END
$$;

-- TRUNCATE (no omoide path uses it; an operator might) has no transition table: it takes
-- back what the counters hold for that table.
CREATE FUNCTION tenant_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'memories' THEN
        DELETE FROM memory_terms;
        INSERT INTO tenant_counts (user_id, scope_id, memories, doc_len)
        SELECT user_id, scope_id, -sum(memories), -sum(doc_len) FROM tenant_counts
        GROUP BY user_id, scope_id HAVING sum(memories) <> 0 OR sum(doc_len) <> 0;
    ELSE
        INSERT INTO tenant_counts (user_id, scope_id, vectors)
        SELECT user_id, scope_id, -sum(vectors) FROM tenant_counts
        GROUP BY user_id, scope_id HAVING sum(vectors) <> 0;
    END IF;
    RETURN NULL;
END
$$;

-- Triggers first: CREATE TRIGGER waits for writers in progress and blocks new ones until this
-- migration commits, so the backfill below counts exactly the rows no trigger saw.
CREATE TRIGGER tenant_counts_insert AFTER INSERT ON memories REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_memories();
CREATE TRIGGER tenant_counts_update AFTER UPDATE ON memories
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_memories();
CREATE TRIGGER tenant_counts_delete AFTER DELETE ON memories REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_memories();
CREATE TRIGGER tenant_counts_truncate AFTER TRUNCATE ON memories
    FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_truncated();
CREATE TRIGGER tenant_counts_insert AFTER INSERT ON memory_vectors
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_vectors();
CREATE TRIGGER tenant_counts_update AFTER UPDATE ON memory_vectors
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_vectors();
CREATE TRIGGER tenant_counts_delete AFTER DELETE ON memory_vectors
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_vectors();
CREATE TRIGGER tenant_counts_truncate AFTER TRUNCATE ON memory_vectors
    FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_truncated();

INSERT INTO tenant_counts (user_id, scope_id, memories, doc_len)
SELECT user_id, scope_id, count(*), sum(doc_len) FROM memories GROUP BY user_id, scope_id;
INSERT INTO tenant_counts (user_id, scope_id, vectors)
SELECT user_id, scope_id, count(*) FROM memory_vectors GROUP BY user_id, scope_id;
INSERT INTO memory_terms SELECT p.* FROM memories m,
    memory_postings(m.user_id, m.scope_id, m.id, m.seq, m.doc_len, m.tsv) p;
DROP INDEX memories_tsv;
