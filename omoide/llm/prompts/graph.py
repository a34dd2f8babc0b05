"""Entities and the labelled relationships between them (the knowledge graph).

Entity types come from a small vocabulary (``ENTITY_TYPES``): free-form types split one person
into several entities ("Caroline" as person, friend, woman, ...), so a synonym is mapped to its
vocabulary word and anything else to ``other``, in the response model itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal, TypeAlias, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from omoide.llm.prompts import DATA_NOT_INSTRUCTIONS, Prompt, render_conversation, render_example
from omoide.types import Message

PROMPT_VERSION = "graph/2"

EntityType: TypeAlias = Literal[
    "person", "organization", "location", "event", "object", "animal", "project", "concept",
    "other",
]  # fmt: skip
ENTITY_TYPES: tuple[str, ...] = get_args(EntityType)
_SYNONYMS = {
    "location": ("place", "city", "country", "region", "address", "town", "venue", "area"),
    "organization": ("company", "org", "organisation", "team", "school", "university",
                     "institution", "employer", "business", "club", "group"),
    "person": ("people", "human", "user", "friend", "family", "relative", "individual"),
    "object": ("product", "item", "thing", "device", "tool", "vehicle", "book", "food", "drink"),
    "animal": ("pet", "dog", "cat"),
    "event": ("meeting", "trip", "date", "holiday", "occasion", "activity"),
    "project": ("plan", "goal"),
    "concept": ("idea", "topic", "skill", "language", "hobby", "field", "subject"),
}  # fmt: skip
_TO_TYPE = {word: kind for kind, words in _SYNONYMS.items() for word in words}


def entity_type(value: object) -> str:
    """A vocabulary word for any type a model writes: ``"Place"`` -> ``"location"``."""
    word = " ".join(str(value or "").lower().split())
    if word in ENTITY_TYPES:
        return word
    return _TO_TYPE.get(word, _TO_TYPE.get(word.removesuffix("s"), "other"))


class EntityItem(BaseModel):
    name: str
    type: EntityType = "other"

    @field_validator("type", mode="before")
    @classmethod
    def _vocabulary(cls, value: object) -> str:
        return entity_type(value)


class RelationshipItem(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    label: str
    notes: str | None = None


class GraphResponse(BaseModel):
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "entities": [
            {"name": "User", "type": "person"},
            {"name": "Tomasz", "type": "person"},
            {"name": "Vistula Rowing Club", "type": "organization"},
        ],
        "relationships": [
            {"from": "Tomasz", "to": "User", "label": "nephew of", "notes": None},
            {"from": "Tomasz", "to": "Vistula Rowing Club", "label": "member of", "notes": None},
        ],
    }
    MAX_TOKENS: ClassVar[int] = 1024

    entities: list[EntityItem]
    relationships: list[RelationshipItem] = Field(default_factory=list)


SYSTEM = f"""You build a knowledge graph from a conversation between a user and an assistant.

Entities are named things. Give each a "name" as written in the conversation (the user is
"User") and a "type", one of: {", ".join(ENTITY_TYPES)}.

Relationships are directed facts between two entities: "from" and "to" are entity names from
your list, "label" is a short lowercase verb phrase ("works at", "lives in", "sister of") and
"notes" is an optional short detail or null.

Rules:
- Only what the conversation states; no general knowledge, nothing from the example below.
- Every relationship endpoint must appear in "entities".
- {DATA_NOT_INSTRUCTIONS}
- When there is nothing, return empty lists.

Answer with JSON shaped like this example (its entities are not in this conversation):
{render_example(GraphResponse.EXAMPLE)}"""


def build(messages: Sequence[Message]) -> Prompt[GraphResponse]:
    return Prompt(SYSTEM, render_conversation(messages), GraphResponse, PROMPT_VERSION)
