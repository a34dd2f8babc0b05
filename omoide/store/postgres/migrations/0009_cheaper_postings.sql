-- 0009: memory_postings computes the same rows for less. A posting's weight was a subquery
-- summing a CASE over each position's weight (numeric), and every posting row computed the
-- tenant marker's md5 to skip it; per 1,000 memories (~48,000 postings) that was about 0.2 s
-- of an ingest's database time, now ~0.06 s (bench/README_pg.md, "Cheaper postings"). The
-- weight is the same value to the bit: 10 x (A positions) + 4 x (B positions) is exact in
-- integers, and one correctly rounded division by 10 gives the double nearest the decimal
-- 1.0 x A + 0.4 x B, as the numeric sum's cast did. The marker ('t' || md5, 33 characters) is
-- only compared with lexemes of its length. Postings already stored are unchanged.
CREATE OR REPLACE FUNCTION memory_postings(user_id TEXT, scope_id TEXT, id TEXT, seq BIGINT,
    doc_len INTEGER, tsv TSVECTOR) RETURNS SETOF memory_terms LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT user_id, scope_id, u.lexeme, id, seq, doc_len,
        (10 * cardinality(array_positions(u.weights, 'A'))
            + 4 * cardinality(array_positions(u.weights, 'B')))::float8 / 10
    FROM unnest(tsv) u
    WHERE length(u.lexeme) <> 33 OR u.lexeme <> 't' || md5(user_id || chr(31) || scope_id)
$$;
