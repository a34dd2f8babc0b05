-- 0007: each tenant's document frequencies, kept instead of counted. A keyword search needs,
-- for each query lexeme, how many of the tenant's rows hold it (fts.py); counting them over
-- memory_terms was a third of a search at 100k memories of one tenant (~18,000 postings per
-- lexeme once the neighbour context is indexed, bench/README_pg.md). SQLite keeps the same
-- figure in kw_terms.
--
-- Delta rows, as tenant_counts (0006) and for the same reason: writers append a row per
-- (tenant, lexeme) and statement, never update a shared one, so concurrent writers of a tenant
-- neither wait for each other on a common word nor deadlock; a read sums the lexeme's rows in
-- its own snapshot (exactly the count of its postings there), and counts.compact folds them
-- (rows summing to zero go: a deleted memory's words do not stay behind).
CREATE TABLE lexeme_counts (
    user_id  TEXT NOT NULL,
    scope_id TEXT NOT NULL,
    lexeme   TEXT NOT NULL,
    id       BIGINT GENERATED ALWAYS AS IDENTITY,
    df       BIGINT NOT NULL,
    PRIMARY KEY (user_id, scope_id, lexeme, id) INCLUDE (df)
);

CREATE FUNCTION lexeme_counts_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO lexeme_counts (user_id, scope_id, lexeme, df)
        SELECT user_id, scope_id, lexeme, count(*) FROM new_terms
        GROUP BY user_id, scope_id, lexeme;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO lexeme_counts (user_id, scope_id, lexeme, df)
        SELECT user_id, scope_id, lexeme, -count(*) FROM old_terms
        GROUP BY user_id, scope_id, lexeme;
    ELSE  -- no omoide path updates postings; an operator's update keeps the counts right
        INSERT INTO lexeme_counts (user_id, scope_id, lexeme, df)
        SELECT user_id, scope_id, lexeme, sum(n) FROM (
            SELECT user_id, scope_id, lexeme, 1 AS n FROM new_terms
            UNION ALL SELECT user_id, scope_id, lexeme, -1 FROM old_terms
        ) c GROUP BY user_id, scope_id, lexeme HAVING sum(n) <> 0;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION lexeme_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lexeme_counts;
    RETURN NULL;
END
$$;

-- Triggers first: CREATE TRIGGER blocks writers of memory_terms until this migration commits,
-- so the backfill below counts exactly the postings no trigger saw.
CREATE TRIGGER lexeme_counts_insert AFTER INSERT ON memory_terms
    REFERENCING NEW TABLE AS new_terms FOR EACH STATEMENT EXECUTE FUNCTION lexeme_counts_terms();
CREATE TRIGGER lexeme_counts_update AFTER UPDATE ON memory_terms
    REFERENCING OLD TABLE AS old_terms NEW TABLE AS new_terms
    FOR EACH STATEMENT EXECUTE FUNCTION lexeme_counts_terms();
CREATE TRIGGER lexeme_counts_delete AFTER DELETE ON memory_terms
    REFERENCING OLD TABLE AS old_terms FOR EACH STATEMENT EXECUTE FUNCTION lexeme_counts_terms();
CREATE TRIGGER lexeme_counts_truncate AFTER TRUNCATE ON memory_terms
    FOR EACH STATEMENT EXECUTE FUNCTION lexeme_counts_truncated();

INSERT INTO lexeme_counts (user_id, scope_id, lexeme, df)
SELECT user_id, scope_id, lexeme, count(*) FROM memory_terms GROUP BY user_id, scope_id, lexeme;
