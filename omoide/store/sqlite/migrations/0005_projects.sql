-- 0005: nexusAI projects. The fields its updateProject allowlist names (colour, icon, notes,
-- system_prompt) and the time of the last update; a project's sessions are detached, never
-- deleted, when it is deleted.
ALTER TABLE projects ADD COLUMN colour TEXT;
ALTER TABLE projects ADD COLUMN icon TEXT;
ALTER TABLE projects ADD COLUMN notes TEXT;
ALTER TABLE projects ADD COLUMN system_prompt TEXT;
ALTER TABLE projects ADD COLUMN updated_at INTEGER;
UPDATE projects SET updated_at = created_at;
