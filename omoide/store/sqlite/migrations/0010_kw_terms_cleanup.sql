-- 0010: a term leaves a tenant's document frequencies when its last memory goes. The delete
-- trigger of 0006 only lowered kw_terms.df, so the words of deleted memories (and of deleted
-- tenants) stayed in the file at df 0 for good. PostgreSQL's lexeme_counts drop them too.
DROP TRIGGER kw_docs_delete;
CREATE TRIGGER kw_docs_delete AFTER DELETE ON kw_docs BEGIN
    UPDATE kw_tenants SET docs = docs - 1, tokens = tokens - old.dl WHERE tenant = old.tenant;
    DELETE FROM kw_postings WHERE tenant = old.tenant AND memory_seq = old.memory_seq
        AND term IN (SELECT value FROM json_each(old.terms));
    UPDATE kw_terms SET df = df - 1 WHERE tenant = old.tenant
        AND term IN (SELECT value FROM json_each(old.terms));
    DELETE FROM kw_terms WHERE tenant = old.tenant AND df <= 0
        AND term IN (SELECT value FROM json_each(old.terms));
END;
DELETE FROM kw_terms WHERE df <= 0;
