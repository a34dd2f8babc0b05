"""Entities and relationships: normalised, de-duplicated, and never pointing at nothing."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from omoide.extract._common import collapse, has_content
from omoide.llm.prompts import graph as graph_prompt
from omoide.llm.protocol import LLM
from omoide.types import Message

log = logging.getLogger(__name__)


class GraphEntity(BaseModel):
    """A named thing; ``(name, type)`` is its identity (nexusAI ``UNIQUE(name, type)``)."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: str


class GraphRelation(BaseModel):
    """A directed, labelled edge, e.g. ``Mei -[sister of]-> User``, with optional notes."""

    model_config = ConfigDict(frozen=True)

    source: GraphEntity
    target: GraphEntity
    label: str
    notes: str | None = None


class Graph(NamedTuple):
    entities: list[GraphEntity]
    relationships: list[GraphRelation]


def extract_graph(llm: LLM, messages: Sequence[Message]) -> Graph:
    """Entities and relationships stated in ``messages``.

    Names are stripped and their whitespace collapsed; types and labels are also lowercased
    (``"Person"`` and ``"person"`` must not make two entities). Entities repeat once per
    ``(name, type)``, first spelling wins. A relationship is dropped when an endpoint is not
    among the entities (matched ignoring case), when it links an entity to itself, or when it
    has no label; the first of several identical edges is kept.

        >>> entities, relationships = extract_graph(llm, [Message(content="Mei is my sister")])
        >>> relationships[0].label
        'sister of'
    """
    if not has_content(messages):
        return Graph([], [])
    answer = graph_prompt.build(messages).run(llm).value
    entities = _entities(answer.entities)
    return Graph(list(entities.values()), _relations(answer.relationships, entities))


def normalize_name(name: str) -> str:
    """``"  Mei   Lin "`` -> ``"Mei Lin"``."""
    return collapse(name)


def _entities(items: Sequence[graph_prompt.EntityItem]) -> dict[tuple[str, str], GraphEntity]:
    entities: dict[tuple[str, str], GraphEntity] = {}
    for item in items:
        name = normalize_name(item.name)
        kind = collapse(item.type).lower() or "other"
        if name:
            entities.setdefault((name.casefold(), kind), GraphEntity(name=name, type=kind))
    return entities


def _relations(
    items: Sequence[graph_prompt.RelationshipItem],
    entities: dict[tuple[str, str], GraphEntity],
) -> list[GraphRelation]:
    by_name: dict[str, GraphEntity] = {}
    for (folded, _), entity in entities.items():
        by_name.setdefault(folded, entity)
    relations: dict[tuple[str, str, str, str, str], GraphRelation] = {}
    for item in items:
        source = by_name.get(normalize_name(item.from_).casefold())
        target = by_name.get(normalize_name(item.to).casefold())
        label = collapse(item.label).lower()
        if source is None or target is None or source == target or not label:
            log.debug("dropping relationship %r -> %r (%r)", item.from_, item.to, item.label)
            continue
        key = (source.name, source.type, target.name, target.type, label)
        notes = collapse(item.notes or "") or None
        relations.setdefault(
            key, GraphRelation(source=source, target=target, label=label, notes=notes)
        )
    return list(relations.values())
