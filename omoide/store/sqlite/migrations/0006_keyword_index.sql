-- 0006: a per-tenant keyword index, so that bm25 and the pruning of common terms use only the
-- tenant's own statistics (FTS5's bm25 used whole-file ones: a tenant's ranking depended on,
-- and revealed, the words other tenants store). Tokens are FTS5's own (porter unicode61
-- remove_diacritics 2), written by the store in the memory's transaction (keyword.py).
-- `tf` is tf(text) + 0.4 * tf(context); `dl` the memory's length in tokens (text + context + 1,
-- the length FTS5 gave bm25), copied into each posting so scoring reads one table.
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

CREATE TRIGGER kw_docs_insert AFTER INSERT ON kw_docs BEGIN
    INSERT INTO kw_tenants(tenant, docs, tokens) VALUES (new.tenant, 1, new.dl)
    ON CONFLICT (tenant) DO UPDATE SET docs = docs + 1, tokens = tokens + new.dl;
END;
CREATE TRIGGER kw_docs_delete AFTER DELETE ON kw_docs BEGIN
    UPDATE kw_tenants SET docs = docs - 1, tokens = tokens - old.dl WHERE tenant = old.tenant;
    DELETE FROM kw_postings WHERE tenant = old.tenant AND memory_seq = old.memory_seq
        AND term IN (SELECT value FROM json_each(old.terms));
    UPDATE kw_terms SET df = df - 1 WHERE tenant = old.tenant
        AND term IN (SELECT value FROM json_each(old.terms));
END;

-- Memories written before this migration are indexed by the store when it next opens.
INSERT INTO meta(key, value) SELECT 'keyword_index_pending', '1' WHERE EXISTS (SELECT 1 FROM memories);
