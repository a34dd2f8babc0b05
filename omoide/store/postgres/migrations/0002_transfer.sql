-- 0002: what export and import need.
-- Consolidations get an insertion order (SQLite's rowid), so an export lists them as written.
ALTER TABLE consolidations ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY;
-- Public ids are unique across tenants (uuids); an import checks that a record's id is not
-- another tenant's, which without these would scan the whole table per record. Not unique
-- indexes: every unique key of a tenant table includes user_id (Citus).
CREATE INDEX memories_id ON memories (id);
CREATE INDEX episodes_id ON episodes (id);
CREATE INDEX entities_id ON entities (id);
CREATE INDEX relationships_id ON relationships (id);
CREATE INDEX consolidations_id ON consolidations (id);
