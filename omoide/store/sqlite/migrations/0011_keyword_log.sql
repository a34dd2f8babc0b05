-- 0011: kw_log, which the in-process posting-list cache (store/sqlite/postings.py) follows as
-- vectors follow vec_log: every memory indexed (op 1) or unindexed (op 0) appends a row in the
-- writer's transaction, so every process sees the change before its next keyword search. It
-- names the memory only: the words of a deleted memory do not stay behind in the log.
CREATE TABLE kw_log (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT NOT NULL,
    memory_seq INTEGER NOT NULL,
    op         INTEGER NOT NULL
);
DROP TRIGGER kw_docs_insert;
CREATE TRIGGER kw_docs_insert AFTER INSERT ON kw_docs BEGIN
    INSERT INTO kw_tenants(tenant, docs, tokens) VALUES (new.tenant, 1, new.dl)
    ON CONFLICT (tenant) DO UPDATE SET docs = docs + 1, tokens = tokens + new.dl;
    INSERT INTO kw_log(tenant, memory_seq, op) VALUES (new.tenant, new.memory_seq, 1);
END;
DROP TRIGGER kw_docs_delete;
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
