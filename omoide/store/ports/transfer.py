"""The backend-neutral records ``omoide export`` writes and ``omoide import`` reads.

``AdminReads.export_records`` yields them and ``AdminWrites.import_records`` writes them back
(``omoide.store.ports.admin``); every backend produces and accepts exactly these fields, so a
file moves between SQLite and PostgreSQL and back without loss. Values are JSON-native: times
are integer milliseconds since the epoch (``None`` when unset), dicts and lists are as the
domain stores them, vectors are base64 of little-endian float32 (``None``: not embedded;
an import also accepts a list of numbers).
Internal row ids (SQLite rowids, serials) never appear: rows refer to each other by their
public ids (memory, episode, entity, relationship, consolidation ids), sessions by their
external id and projects by name, all within the record's tenant (``user_id``, ``scope_id``,
present in every record).

Kinds come in ``RECORD_KINDS`` order (each only refers to kinds before it), and within a kind in
insertion order, so importing a file into an empty store and exporting again gives the same
file. Per kind (besides ``user_id``, ``scope_id``):

* ``project``: name, description, isolated (bool), colour, icon, notes, system_prompt,
  created_at, updated_at.
* ``session``: id (external), name, project (name or None), metadata, created_at, updated_at.
* ``episode``: id, session, messages (list of dicts), created_at, access_count,
  last_accessed_at, consolidated_at, consolidation_id.
* ``memory``: id, session (or None), type, text, context, metadata, valid_from, invalid_at,
  supersedes, access_count, last_accessed_at, created_at, updated_at, sources (episode ids,
  sorted), vector.
* ``history``: memory_id, entries (oldest first: event, old_text, new_text, actor,
  created_at). One record per memory id (deleted memories' history included); records ordered
  by each memory's first entry.
* ``entity``: id, name, type, mention_count, confidence, source, last_seen_at, created_at,
  episodes (provenance episode ids, sorted), vector.
* ``relationship``: id, from_id, to_id, label, mention_count, notes, last_seen_at, created_at.
* ``chunk_state``: session, created_at (the session is chunked in standard mode).
* ``chunk``: session, memory_id, last_hash, last_at, last_episode (the id of the episode
  holding the chunk's last message), last_index, messages, tokens, created_at.
* ``consolidation``: id, session, summary_id, report (dict), snapshot (dict), created_at,
  reverted_at.
* ``variable``: name, value (JSON scalar), type, updated_at; ordered by tenant, then name.
* ``usage``: prompt_tokens, completion_tokens, requests, updated_at; ordered by tenant.
* ``job``: job_kind (the job's kind; ``kind`` names the record's), payload, attempts,
  max_attempts, last_error, run_after, created_at, updated_at, result, steps
  (``{step: {status, detail, calls, prompt_tokens, completion_tokens, created_at}}``). Only
  jobs still to run (``pending``, and ``running`` ones, exported as ``pending``: their worker
  is not coming along); job ids are not kept.
* ``schedule`` (format version 2): a dreaming schedule (``ports.schedules``):
  enabled (bool), interval_ms, next_run_at, settings (dict), last_run_at, sweeps, created_at,
  updated_at; ordered by tenant. The last sweep's job id is not kept (job ids are not): an
  import leaves it unset.
* ``scope_config`` (format version 2): the tenant's scope config: config (dict), updated_at;
  ordered by tenant.

Import rule (idempotent): a record whose key the store already holds for that tenant is
skipped, never merged or overwritten; keys are the public id (episode, memory, entity,
relationship, consolidation), the name (project, variable), the external id (session), the
tenant (usage, schedule, scope_config: one row each; a tenant's schedule or config the store
holds is kept as it is), the session (chunk_state), ``(session, last_hash)`` (chunk), the memory
id (history: all of a memory's entries, or none if it has any) and ``(job_kind, payload)`` among
the tenant's jobs in any state (job: the same work, queued, run or failed, is not queued
again; payloads compare as JSON values, key order ignored). A public id held by another
tenant, or an entity ``(name, type)`` held under another id, is a ``Conflict``; a reference to
a row the store lacks (a session, an episode, an entity) is ``NotFound``.
"""

from __future__ import annotations

RECORD_KINDS = (
    "project",
    "session",
    "episode",
    "memory",
    "history",
    "entity",
    "relationship",
    "chunk_state",
    "chunk",
    "consolidation",
    "variable",
    "usage",
    "job",
    "schedule",
    "scope_config",
)

# The export format version that introduced a kind (others: 1). A file of an older version
# holds none of the later kinds; a reader refuses a file newer than it reads before writing.
ADDED_IN: dict[str, int] = {"schedule": 2, "scope_config": 2}

_TENANT = ("user_id", "scope_id")

# The exact keys of each kind's record (tests check every backend against them).
RECORD_FIELDS: dict[str, tuple[str, ...]] = {
    "project": (
        *_TENANT,
        *("name", "description", "isolated", "colour", "icon", "notes", "system_prompt"),
        *("created_at", "updated_at"),
    ),
    "session": (*_TENANT, "id", "name", "project", "metadata", "created_at", "updated_at"),
    "episode": (
        *_TENANT,
        *("id", "session", "messages", "created_at", "access_count", "last_accessed_at"),
        *("consolidated_at", "consolidation_id"),
    ),
    "memory": (
        *_TENANT,
        *("id", "session", "type", "text", "context", "metadata", "valid_from", "invalid_at"),
        *("supersedes", "access_count", "last_accessed_at", "created_at", "updated_at"),
        *("sources", "vector"),
    ),
    "history": (*_TENANT, "memory_id", "entries"),
    "entity": (
        *_TENANT,
        *("id", "name", "type", "mention_count", "confidence", "source", "last_seen_at"),
        *("created_at", "episodes", "vector"),
    ),
    "relationship": (
        *_TENANT,
        *("id", "from_id", "to_id", "label", "mention_count", "notes", "last_seen_at"),
        "created_at",
    ),
    "chunk_state": (*_TENANT, "session", "created_at"),
    "chunk": (
        *_TENANT,
        *("session", "memory_id", "last_hash", "last_at", "last_episode", "last_index"),
        *("messages", "tokens", "created_at"),
    ),
    "consolidation": (
        *_TENANT,
        *("id", "session", "summary_id", "report", "snapshot", "created_at", "reverted_at"),
    ),
    "variable": (*_TENANT, "name", "value", "type", "updated_at"),
    "usage": (*_TENANT, "prompt_tokens", "completion_tokens", "requests", "updated_at"),
    "job": (
        *_TENANT,
        *("job_kind", "payload", "attempts", "max_attempts", "last_error", "run_after"),
        *("created_at", "updated_at", "result", "steps"),
    ),
    "schedule": (
        *_TENANT,
        *("enabled", "interval_ms", "next_run_at", "settings", "last_run_at", "sweeps"),
        *("created_at", "updated_at"),
    ),
    "scope_config": (*_TENANT, "config", "updated_at"),
}
HISTORY_ENTRY_FIELDS = ("event", "old_text", "new_text", "actor", "created_at")
