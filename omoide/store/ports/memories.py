"""Memories: the retrievable items, their full-text rows, vectors and history.

``MemoryReads`` is read outside a transaction (``store.memories``);
``MemoryWrites`` is used inside one (``with store.transaction() as tx: tx.memories...``)
and sees the transaction's own writes.

Tenant rule: every method except ``iter_memory_texts``, ``clear_vectors``,
``clear_staged_vectors`` and ``swap_staged_vectors`` (whole-store maintenance; also
``unembedded_count`` without a scope) takes a ``Scope`` and reads or writes only that tenant's
rows; an id of another tenant behaves exactly like an id that does not exist. Ids are opaque
strings made by the store.

Model. A memory is never edited into a different fact: ``supersede_memory`` closes the old
version (``invalid_at``) and inserts the next one linked by ``supersedes``; ``as_of`` filters
see either. The full-text row (``text`` and ``context``) and the vector belong to the memory and
change in the same transaction as it. Every write appends to the memory's history (``ADD``,
``UPDATE`` or ``DELETE`` with old and new text and the actor); history is never rewritten.

What a second backend must reproduce (PostgreSQL is next):

* ``keyword_search`` scores are bm25 over **the tenant's own statistics only** (no other
  tenant's data may change a tenant's ids, order or scores, nor be inferred from them), larger
  is better: k1 = 1.2, b = 0.75, per term ``idf = ln((N - n + 0.5) / (n + 0.5))`` (never below
  1e-6), term frequency ``tf(text) + 0.4 * tf(context)`` (the neighbour-context column weighs
  0.4 of the text column), document length = tokens of text + context + 1, where N, n and the
  average length are the tenant's (all its memories, valid or not; never filtered). Query
  terms are the distinct stems of the given words, summed. Text is tokenised as FTS5
  ``porter unicode61 remove_diacritics 2`` does: Unicode word characters, case and diacritics
  folded, Porter-stemmed English. With one tenant in a store this is exactly SQLite FTS5's
  ``bm25(memories_fts, 1.0, 0.4, 0.0)``, negated. Scores are compared within one query, but
  as ratios, not just ranks (a compat interface multiplies them by a recency factor, and
  search fusion maps them through a saturating transform), so a backend must keep bm25's
  shape, not only its order.
* ``vector_search`` scores are the dot product of the stored float32 vector and the query: the
  cosine similarity, since embedders return unit vectors (the store does not normalise).
  Search is exact (no approximate index loses a match); vectors of another dimension than the
  tenant's first stored one are ignored until a reindex.
* Listing order is newest first by ``created_at`` and then by insertion order; search ties
  (equal scores) come in an unspecified order, the caller breaks them by id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from omoide.types import (
    HistoryEntry,
    MemoryItem,
    MemoryType,
    Scope,
    SearchFilters,
)
from omoide.types import NewMemory as NewMemory  # the write record, defined with the models


class Said(NamedTuple):
    """What a search reads of a candidate. ``turn``: the memory is a turn of a session (a raw
    message with a session id), not a standalone memory: a fact, profile or summary derived
    from a session is standalone though it keeps the session's id, and so is a message
    written without a session (an agent's one-message adds read as notes, whatever
    neighbour context an implicit conversation gives them) or in ``UNNAMED_SESSION`` (where
    doors file what a client sent without naming one); the two kinds' evidence means
    different things (``omoide.retrieval.relevance``). ``assistant``: the memory is a message
    an assistant said (its role). ``cosine``: the memory's cosine to the query vector the read
    was given (None without one, or without a vector of its size)."""

    text: str
    created_at_ms: int
    turn: bool
    assistant: bool = False
    cosine: float | None = None


class Candidates(dict[str, Said]):
    """``MemoryReads.candidates``: ``id -> Said`` of the memories found among the ids
    ``asked``, and their whole memories (``memories``) for the few a search returns.
    ``whole`` gives the memories of ids all among those found, as ``get_memories`` would."""

    def __init__(
        self,
        said: Mapping[str, Said],
        asked: Iterable[str],
        whole: Callable[[Sequence[str]], list[MemoryItem]],
    ) -> None:
        super().__init__(said)
        self.asked = frozenset(asked)
        self._whole = whole

    def memories(self, ids: Sequence[str]) -> list[MemoryItem]:
        """The memories of those of ``ids`` that the read found, in the order of ``ids``,
        as ``get_memories`` returns them; ids the read did not find are left out."""
        return self._whole([i for i in ids if i in self])


class Nearest(list[tuple[str, float]]):
    """``vector_search``'s ``(memory id, cosine)`` hits, most similar first, and
    ``population``: how many vectors the tenant holds, whatever the filters (a tenant
    statistic, as bm25's document count is; the relevance score's prior,
    ``omoide.retrieval.relevance``). ``unembedded``: the tenant's memories without a vector
    (``MemoryReads.unembedded_count``) when the backend read it with the hits, in the same
    snapshot, or None: the caller asks ``unembedded_count`` if it needs the figure."""

    def __init__(
        self,
        hits: Iterable[tuple[str, float]] = (),
        population: int = 0,
        unembedded: int | None = None,
    ) -> None:
        super().__init__(hits)
        self.population = population
        self.unembedded = unembedded


@dataclass
class Neighbour:
    """The last memory of a session: what a new turn's neighbour context is built from."""

    id: str
    text: str
    context: str


@dataclass
class LatestTurn:
    """The tenant's latest memory of a type: the previous turn of a session-less stream when
    it has no session itself (``omoide.engine.memories``, implicit conversations)."""

    id: str
    text: str
    context: str
    session_id: str | None  # the session's external id
    created_at_ms: int


class MemoryReads(Protocol):
    """Reads of memories. Each call sees committed data only; see each method for whether
    its parts come from one snapshot."""

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[MemoryItem]:
        """The tenant's memories with these ids, in the order of ``ids``, valid or not.

        Ids that do not exist (or are another tenant's) are left out, never an error; an id
        given twice appears twice. Raises nothing for missing ids.
        """
        ...

    def texts_and_times(
        self, scope: Scope, ids: Sequence[str], query: np.ndarray | None = None
    ) -> dict[str, Said]:
        """``id -> Said`` of the tenant's memories with these ids: what a search's scoring
        reads of ~200 candidates, without building whole items. With ``query`` (a unit
        vector), each memory's cosine to it comes in the same read, so a candidate the vector
        list did not reach is scored by its own cosine. Ids that do not exist (or are
        another tenant's) are left out."""
        ...

    def candidates(self, scope: Scope, ids: Sequence[str], query: np.ndarray | None) -> Candidates:
        """``texts_and_times(scope, ids, query)``, and the whole memories of the ids it found
        (``Candidates.memories``): what a search scores its candidates by, then the rows of
        the hits it returns. A backend whose reads are round trips reads both in one
        statement, from one snapshot; one that reads in process may read the memories when
        they are asked for."""
        ...

    def list_memories(
        self, scope: Scope, filters: SearchFilters, limit: int, offset: int
    ) -> tuple[list[MemoryItem], int]:
        """One page of the tenant's memories matching ``filters``, newest first, and the
        total number of matches.

        The page and the total come from one snapshot, so they agree even while others
        write. ``filters``: session (external id), project (an isolated project sees only its
        sessions; every other view excludes isolated projects' sessions; an unknown project
        matches nothing), types, created range (``created_after`` inclusive,
        ``created_before`` exclusive), metadata equality (``None`` means "key absent or
        null"), and validity: currently valid only by default, ``include_invalid``, or
        ``as_of`` (valid at that instant: ``valid_from <= t < invalid_at``).
        """
        ...

    def latest_memories(self, scope: Scope, filters: SearchFilters, limit: int) -> list[MemoryItem]:
        """``list_memories`` without the total or offset: the newest ``limit`` matches."""
        ...

    def keyword_search(
        self, scope: Scope, terms: Sequence[str], filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        """Up to ``limit`` ``(memory id, bm25 score)`` of the tenant matching any of
        ``terms`` and ``filters``, best first (scale: see the module docstring).

        Terms are plain words, OR-ed; no term is ever query syntax. Once the *tenant* holds
        2,000 memories, the most common of several terms may be dropped (those in 30% or more
        of the tenant's memories, or past 15% of them in postings, rarest kept first): bm25
        gives them ~0 weight, yet they cost most of the time. Never all of the terms the
        tenant uses, and never any below 2,000 memories. Filters apply to the ranked matches,
        never to the statistics. ``[]`` for no terms.
        """
        ...

    def vector_search(
        self, scope: Scope, vector: np.ndarray, filters: SearchFilters, limit: int
    ) -> Nearest:
        """Up to ``limit`` ``(memory id, cosine)`` of the tenant's embedded memories that
        match ``filters``, most similar first (exact search; see the module docstring), and
        the tenant's number of vectors (``Nearest.population``, from the same read), and
        its memories without a vector if that read had them (``Nearest.unembedded``).

        Sees every vector committed before the call, by any process, and never one deleted
        before it. Memories without a vector are not found. ``InvalidInput`` if ``vector``'s
        dimension differs from the stored vectors'.
        """
        ...

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        """The history of the fact ``memory_id`` belongs to, oldest first: the entries of
        every version linked to it by ``supersedes`` (older and newer), in write order.

        A deleted memory's history stays readable. ``NotFound`` if the tenant has no history
        for that id.
        """
        ...

    def owner(self, memory_id: str) -> Scope | None:
        """The tenant a memory id belongs to, across all tenants (ids are unique store-wide),
        or None if no memory or history entry has that id.

        A deleted memory still names its tenant through its history. This is what lets an
        operation given only an id (``Memory.get(memory_id)`` without a tenant) find its
        tenant; callers must still check that the caller may act for that tenant.
        """
        ...

    def iter_memory_texts(
        self, batch: int, *, unstaged: bool = False
    ) -> Iterator[list[tuple[Scope, str, str]]]:
        """Every memory of every tenant as ``(scope, id, text)``, ``batch`` at a time, in
        insertion order (for a reindex; not a tenant read). ``unstaged``: only the memories
        without a staged vector (``MemoryWrites.stage_vector``), so a killed reindex resumes.

        Each batch is read when the iterator advances: memories inserted meanwhile after the
        last batch read are included, deleted ones may or may not be.
        """
        ...

    def unembedded_count(self, scope: Scope | None = None) -> int:
        """How many memories of the tenant (of every tenant with ``None``) have no vector:
        memories written while the embedder was down, before their ``embed`` job ran. Vector
        search misses them, so a search reports itself degraded while this is not 0. One
        snapshot; cheap enough for every search (two indexed counts in SQLite)."""
        ...


class MemoryWrites(Protocol):
    """Writes of memories, inside the caller's transaction: all of them commit together or
    not at all. Checks made here (``Conflict`` on an already invalid memory) run inside the
    transaction, so no concurrent writer can change their outcome before the commit."""

    def insert_memory(self, scope: Scope, new: NewMemory, actor: str) -> MemoryItem:
        """Insert ``new`` for the tenant with a fresh id, its full-text row, its source links
        and an ``ADD`` history entry by ``actor``; return it (not yet embedded).

        ``created_at`` is ``new.created_at_ms`` or now, ``valid_from`` ``new.valid_from_ms``
        or ``created_at``. ``supersedes`` is stored as given (unchecked: use
        ``supersede_memory`` to version a fact). ``NotFound`` if ``new.session_id`` or a
        ``new.source_episodes`` id is not the tenant's.
        """
        ...

    def insert_memories(
        self,
        scope: Scope,
        news: Sequence[NewMemory],
        actor: str,
        vectors: np.ndarray | None = None,
    ) -> list[MemoryItem]:
        """``insert_memory`` for each of ``news``, in order (insertion order, history and
        errors as separate calls would give); return the items in that order. A backend may
        write the whole batch in a few statements: this is the bulk path of ``add_many``.
        ``vectors``: row ``i`` is the vector of ``news[i]``, stored with it as ``put_vectors``
        would store it (the items come back embedded); a count of rows other than the
        memories' is ``InvalidInput``. PostgreSQL writes them in the memories' statement."""
        ...

    def supersede_memory(
        self, scope: Scope, old_id: str, new: NewMemory, at_ms: int, actor: str
    ) -> MemoryItem:
        """Close ``old_id`` at ``at_ms`` (never before its own ``valid_from``) and insert
        ``new`` as its next version, valid from that instant, with one ``UPDATE`` history
        entry holding both texts. Sets ``new.supersedes`` and ``new.valid_from_ms``.

        Nothing is erased: the old version stays for ``as_of`` and ``include_invalid``.
        ``NotFound`` if ``old_id`` is not the tenant's; ``Conflict`` if it is no longer valid
        (a concurrent writer superseded or invalidated it first: of two transactions
        superseding the same memory exactly one succeeds).
        """
        ...

    def invalidate_memory(self, scope: Scope, memory_id: str, at_ms: int, actor: str) -> MemoryItem:
        """Mark the memory no longer true from ``at_ms`` (never before its ``valid_from``),
        with a ``DELETE`` history entry; the row stays for ``as_of``. Returns it.

        ``NotFound`` if not the tenant's; ``Conflict`` if it is already invalid.
        """
        ...

    def last_in_session(self, scope: Scope, session_id: str, type_: MemoryType) -> Neighbour | None:
        """The most recently inserted memory of ``type_`` in the session (valid or not), or
        None (also when the session does not exist).

        Read in the transaction, so the neighbour of a new turn is the one committed last:
        two writers appending to one session see each other's turns in commit order.
        """
        ...

    def latest_turn(self, scope: Scope, type_: MemoryType) -> LatestTurn | None:
        """The tenant's memory of ``type_`` with the latest ``created_at`` (of equal times,
        the one inserted last), valid or not, or None when it has none.

        Read in the transaction, like ``last_in_session``.
        """
        ...

    def set_context(self, scope: Scope, memory_id: str, context: str) -> None:
        """Replace the memory's neighbour context (the full-text column weighted 0.4).
        No history entry (context is derived); an unknown id is silently ignored."""
        ...

    def update_memory(
        self,
        scope: Scope,
        memory_id: str,
        text: str | None,
        metadata: dict[str, Any] | None,
        actor: str,
    ) -> MemoryItem:
        """Edit the memory in place (``None`` leaves a field as it is; ``metadata``
        replaces the whole dict) with an ``UPDATE`` history entry; return it.

        A changed text drops the memory's vector, so the caller must re-embed it (or
        enqueue that in the same transaction). Valid or invalid memories alike.
        ``NotFound`` if not the tenant's.
        """
        ...

    def delete_memory(self, scope: Scope, memory_id: str, actor: str) -> None:
        """Erase the memory with its full-text row, vector and source links; its history
        gets a ``DELETE`` entry and stays. ``NotFound`` if not the tenant's."""
        ...

    def put_vector(
        self, scope: Scope, memory_id: str, vector: np.ndarray, text: str | None = None
    ) -> bool:
        """Store (or replace) the memory's vector, as float32; True when stored.

        ``text`` is the text the vector was computed from: when given, the vector is stored
        only if that is still the memory's text, checked inside the transaction, so an embed
        job or reindex that read the text before a concurrent ``update_memory`` cannot put the
        old text's vector over the new one (False). A memory deleted before its embedding
        arrived is silently skipped (False): an embed job may finish after its memory is gone.
        """
        ...

    def put_vectors(self, scope: Scope, memory_ids: Sequence[str], vectors: np.ndarray) -> int:
        """``put_vector`` (without a text check) of row ``i`` of ``vectors`` for
        ``memory_ids[i]``, for the whole batch; return how many were stored."""
        ...

    def stage_vector(self, scope: Scope, memory_id: str, vector: np.ndarray, text: str) -> bool:
        """A reindex's vector, stored beside the live one (search does not see it) until
        ``swap_staged_vectors``; same text check and return as ``put_vector``. Deleting the
        memory or changing its text drops its staged vector too. Not a tenant read path."""
        ...

    def clear_staged_vectors(self) -> None:
        """Drop every staged vector (a reindex for another embedder than the staged one)."""
        ...

    def swap_staged_vectors(self) -> list[tuple[Scope, str]]:
        """Replace every live memory vector by the staged ones and empty the stage, in the
        caller's transaction; return ``(scope, id)`` of the memories left without a vector
        (written or edited after they were staged), in insertion order, so the caller queues
        an ``embed`` job for them in the same transaction. Entity vectors are untouched."""
        ...

    def clear_vectors(self) -> None:
        """Delete every memory and entity vector of every tenant (before a reindex with
        another embedder). Not a tenant operation."""
        ...
