-- 0008: a reindex builds its vectors here, beside the live ones, and swaps them in one
-- transaction when every memory has one; a killed reindex leaves search untouched and resumes
-- from the rows already built (the target embedder is in meta: rebuild_model, rebuild_dim).
CREATE TABLE vector_rebuild (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
    tenant     TEXT NOT NULL,
    vec        BLOB NOT NULL
);
