-- 0008: postings keyed by the memory's seq, not its id. Writing a memory's postings was about
-- two thirds of an ingest's time in the database (~50 postings a memory once the neighbour
-- context is indexed, each a btree insert): a key of (tenant, lexeme, seq) instead of (tenant,
-- lexeme, 32-character id) makes the index ~20% smaller and those inserts ~0.65x as costly
-- (bench/README_pg.md, "Postings keyed by seq"). seq is unique (an identity column; restores
-- keep the source's values in an empty database), now enforced per user by memories_seq,
-- through which a search maps its best postings back to their memories. memory_id stays in
-- the postings' rows for readers and operators; the index no longer carries it.
-- Both keys hold user_id (Citus: distribute by user_id).
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey;
ALTER TABLE memory_terms ADD PRIMARY KEY (user_id, scope_id, lexeme, seq) INCLUDE (doc_len, w);
CREATE UNIQUE INDEX memories_seq ON memories (user_id, seq);

-- as 0006's, with the postings of old rows found by seq (the key above)
CREATE OR REPLACE FUNCTION tenant_counts_memories() RETURNS trigger LANGUAGE plpgsql AS $$
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
        WHERE (t.user_id, t.scope_id, t.lexeme, t.seq) = (o.user_id, o.scope_id, u.lexeme, o.seq);
    ELSE  -- most updates (access counts, validity) change neither: no row then
        INSERT INTO tenant_counts (user_id, scope_id, memories, doc_len)
        SELECT user_id, scope_id, sum(n), sum(d) FROM (
            SELECT user_id, scope_id, 1 AS n, doc_len AS d FROM new_rows
            UNION ALL SELECT user_id, scope_id, -1, -doc_len FROM old_rows
        ) c GROUP BY user_id, scope_id HAVING sum(n) <> 0 OR sum(d) <> 0;
        -- postings of the rows whose indexed part changed (text, context): old out, new in
        DELETE FROM memory_terms t USING old_rows o, unnest(o.tsv) u
        WHERE (t.user_id, t.scope_id, t.lexeme, t.seq) = (o.user_id, o.scope_id, u.lexeme, o.seq)
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
