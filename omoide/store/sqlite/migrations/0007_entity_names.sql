-- 0007: one entity per name within a tenant (issue 16, point 8). Free-form types had split
-- one person into several entities ("Caroline" as person, friend, woman ...). Entities of one
-- tenant whose names are equal ignoring case are merged into one: the earliest with a type of
-- the vocabulary (omoide.llm.prompts.graph.ENTITY_TYPES) survives, or the earliest; it takes
-- the others' mentions, episodes and relationships. Then every type is mapped to the
-- vocabulary as omoide.llm.prompts.graph.entity_type() maps it (tests/store/test_entity_names.py
-- checks that the CASE below agrees with it), and a unique index keeps names unique (NOCASE,
-- the column's collation). Stored entity vectors keep their old "name (type)" text until
-- ``omoide reindex``.
CREATE TEMP TABLE entity_kind AS
SELECT id, user_id, scope_id, name, created_at,
    CASE
        WHEN lower(trim(type)) IN ('person', 'organization', 'location', 'event', 'object', 'animal', 'project', 'concept', 'other') THEN lower(trim(type))
        WHEN lower(trim(type)) IN ('address', 'addresss', 'area', 'areas', 'city', 'citys', 'country', 'countrys', 'place', 'places', 'region', 'regions', 'town', 'towns', 'venue', 'venues') THEN 'location'
        WHEN lower(trim(type)) IN ('business', 'businesss', 'club', 'clubs', 'company', 'companys', 'employer', 'employers', 'group', 'groups', 'institution', 'institutions', 'org', 'organisation', 'organisations', 'orgs', 'school', 'schools', 'team', 'teams', 'university', 'universitys') THEN 'organization'
        WHEN lower(trim(type)) IN ('family', 'familys', 'friend', 'friends', 'human', 'humans', 'individual', 'individuals', 'people', 'peoples', 'relative', 'relatives', 'user', 'users') THEN 'person'
        WHEN lower(trim(type)) IN ('book', 'books', 'device', 'devices', 'drink', 'drinks', 'food', 'foods', 'item', 'items', 'product', 'products', 'thing', 'things', 'tool', 'tools', 'vehicle', 'vehicles') THEN 'object'
        WHEN lower(trim(type)) IN ('cat', 'cats', 'dog', 'dogs', 'pet', 'pets') THEN 'animal'
        WHEN lower(trim(type)) IN ('activity', 'activitys', 'date', 'dates', 'holiday', 'holidays', 'meeting', 'meetings', 'occasion', 'occasions', 'trip', 'trips') THEN 'event'
        WHEN lower(trim(type)) IN ('goal', 'goals', 'plan', 'plans') THEN 'project'
        WHEN lower(trim(type)) IN ('field', 'fields', 'hobby', 'hobbys', 'idea', 'ideas', 'language', 'languages', 'skill', 'skills', 'subject', 'subjects', 'topic', 'topics') THEN 'concept'
        ELSE 'other'
    END AS kind
FROM entities;

CREATE TEMP TABLE entity_merge AS
SELECT e.id AS loser, (
    SELECT s.id FROM entity_kind s
    WHERE s.user_id = e.user_id AND s.scope_id = e.scope_id AND s.name = e.name COLLATE NOCASE
    ORDER BY s.kind = 'other', s.created_at, s.id LIMIT 1
) AS survivor
FROM entity_kind e;
DELETE FROM entity_merge WHERE loser = survivor;

UPDATE entities SET
    mention_count = mention_count + (
        SELECT sum(l.mention_count) FROM entities l JOIN entity_merge m ON m.loser = l.id
        WHERE m.survivor = entities.id
    ),
    last_seen_at = max(last_seen_at, (
        SELECT max(l.last_seen_at) FROM entities l JOIN entity_merge m ON m.loser = l.id
        WHERE m.survivor = entities.id
    ))
WHERE id IN (SELECT survivor FROM entity_merge);

INSERT OR IGNORE INTO entity_episodes (entity_id, episode_id)
SELECT m.survivor, ee.episode_id FROM entity_episodes ee JOIN entity_merge m ON m.loser = ee.entity_id;

UPDATE OR IGNORE relationships
SET from_id = (SELECT survivor FROM entity_merge WHERE loser = relationships.from_id)
WHERE from_id IN (SELECT loser FROM entity_merge);
UPDATE OR IGNORE relationships
SET to_id = (SELECT survivor FROM entity_merge WHERE loser = relationships.to_id)
WHERE to_id IN (SELECT loser FROM entity_merge);

-- what could not move (the survivor has that relationship already) goes with the losers
DELETE FROM relationships
WHERE from_id IN (SELECT loser FROM entity_merge) OR to_id IN (SELECT loser FROM entity_merge);
DELETE FROM entity_episodes WHERE entity_id IN (SELECT loser FROM entity_merge);
DELETE FROM entity_vectors WHERE entity_id IN (SELECT loser FROM entity_merge);
DELETE FROM entities WHERE id IN (SELECT loser FROM entity_merge);

UPDATE entities SET type = (SELECT kind FROM entity_kind k WHERE k.id = entities.id);

DROP TABLE entity_merge;
DROP TABLE entity_kind;

CREATE UNIQUE INDEX entities_name ON entities(user_id, scope_id, name);
