-- 0003: a reindex builds its vectors here, beside the live ones, and swaps them in one
-- transaction when every memory has one (as SQLite's vector_rebuild): a killed reindex leaves
-- search untouched and resumes from the rows already built.
CREATE TABLE vector_rebuild (
    user_id   TEXT NOT NULL,
    scope_id  TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    embedding VECTOR NOT NULL,
    PRIMARY KEY (user_id, memory_id),
    FOREIGN KEY (user_id, memory_id) REFERENCES memories (user_id, id) ON DELETE CASCADE
);
