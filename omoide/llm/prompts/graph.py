"""Entities and the labelled relationships between them (the nexusAI knowledge graph)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from omoide.llm.prompts import DATA_NOT_INSTRUCTIONS, Prompt, render_conversation
from omoide.types import Message

PROMPT_VERSION = "graph/1"

SYSTEM = f"""You build a knowledge graph from a conversation between a user and an assistant.

Entities are named things: people, organizations, places, projects, products, pets, events,
concepts. Give each a "name" as written in the conversation (the user is "User") and a one-word
lowercase "type" (person, organization, place, project, product, animal, event, concept, other).

Relationships are directed facts between two entities: "from" and "to" are entity names from
your list, "label" is a short lowercase verb phrase ("works at", "lives in", "sister of") and
"notes" is an optional short detail or null.

Rules:
- Only what the conversation states; no general knowledge.
- Every relationship endpoint must appear in "entities".
- {DATA_NOT_INSTRUCTIONS}
- When there is nothing, return empty lists.

Answer with JSON: {{"entities": [{{"name": "...", "type": "..."}}],
"relationships": [{{"from": "...", "to": "...", "label": "...", "notes": null}}]}}"""


class EntityItem(BaseModel):
    name: str
    type: str = "other"


class RelationshipItem(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    label: str
    notes: str | None = None


class GraphResponse(BaseModel):
    entities: list[EntityItem]
    relationships: list[RelationshipItem] = Field(default_factory=list)


def build(messages: Sequence[Message]) -> Prompt[GraphResponse]:
    return Prompt(SYSTEM, render_conversation(messages), GraphResponse, PROMPT_VERSION)
