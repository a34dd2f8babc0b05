-- 0010: kw_log, which the in-process posting lists (store/sql/postings.py, followed by
-- store/postgres/postings.py) read as SQLite's caches read its kw_log (migration 0011 there):
-- every statement that adds or removes a memory's postings appends one row per memory, in the
-- writer's transaction, so every process and server sees the change before its next keyword
-- search. A row names the memory only (its words do not stay behind in the log); op 1: indexed,
-- 0: unindexed, 2: every posting went (TRUNCATE), the caches forget all they hold.
--
-- ids are given in insert order, not commit order: a reader takes the rows above the highest id
-- it has seen, plus those of the transactions its last snapshot did not see yet (xid, an index
-- of its own), so a transaction that commits after a later one is never skipped.
--
-- One log for every tenant, read in id order by the caches of every process. Its key holds
-- user_id (Citus: distributed by user_id beside memory_terms, each row written on its
-- tenant's shard); the caches' read is a multi-shard statement (the routing test's
-- exceptions). Writers trim it now and then to its newest ids (kw_log_terms); a cache that fell
-- behind the trimmed part forgets its lists.
CREATE TABLE kw_log (
    id       BIGINT GENERATED ALWAYS AS IDENTITY,
    user_id  TEXT NOT NULL,
    scope_id TEXT NOT NULL,
    seq      BIGINT NOT NULL,
    op       SMALLINT NOT NULL,
    xid      XID8 NOT NULL DEFAULT pg_current_xact_id(),
    PRIMARY KEY (user_id, id)
);
CREATE INDEX kw_log_id ON kw_log (id);
CREATE INDEX kw_log_xid ON kw_log (xid);

CREATE FUNCTION kw_log_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO kw_log (user_id, scope_id, seq, op)
        SELECT DISTINCT user_id, scope_id, seq, 1 FROM new_terms;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO kw_log (user_id, scope_id, seq, op)
        SELECT DISTINCT user_id, scope_id, seq, 0 FROM old_terms;
    ELSE  -- no omoide path updates postings; an operator's update is seen as a removal
        INSERT INTO kw_log (user_id, scope_id, seq, op)
        SELECT user_id, scope_id, seq, 0 FROM old_terms
        UNION SELECT user_id, scope_id, seq, 0 FROM new_terms;
    END IF;
    -- now and then (a random statement in a hundred) the oldest ids go
    IF random() < 0.01 THEN
        DELETE FROM kw_log WHERE id <= (SELECT max(id) FROM kw_log) - 100000;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION kw_log_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO kw_log (user_id, scope_id, seq, op) VALUES ('', '', 0, 2);
    RETURN NULL;
END
$$;

CREATE TRIGGER kw_log_insert AFTER INSERT ON memory_terms
    REFERENCING NEW TABLE AS new_terms FOR EACH STATEMENT EXECUTE FUNCTION kw_log_terms();
CREATE TRIGGER kw_log_update AFTER UPDATE ON memory_terms
    REFERENCING OLD TABLE AS old_terms NEW TABLE AS new_terms
    FOR EACH STATEMENT EXECUTE FUNCTION kw_log_terms();
CREATE TRIGGER kw_log_delete AFTER DELETE ON memory_terms
    REFERENCING OLD TABLE AS old_terms FOR EACH STATEMENT EXECUTE FUNCTION kw_log_terms();
CREATE TRIGGER kw_log_truncate AFTER TRUNCATE ON memory_terms
    FOR EACH STATEMENT EXECUTE FUNCTION kw_log_truncated();
