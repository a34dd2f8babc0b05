"""Pure extraction: LLM answers in, typed operations out. No store, no embedder, no I/O
besides the ``LLM`` passed in, so the engine's durable jobs decide what to write and when.

    >>> facts = extract_facts(llm, messages)
    >>> ops = reconcile(llm, facts, existing=[("mem_42", "The user lives in Osaka")])

Every extractor takes ``drops=Drops()`` to learn what it refused (placeholders, copies of the
prompt's examples, over-long items): refused items are dropped one by one, never the answer.
"""

from __future__ import annotations

from omoide.extract._common import Drops
from omoide.extract.facts import FactOp, extract_facts, reconcile
from omoide.extract.graph import Graph, GraphEntity, GraphRelation, extract_graph
from omoide.extract.profile import ProfileEntry, extract_profile
from omoide.extract.summary import summarize
from omoide.extract.variables import MemVariable, coerce, extract_variables

__all__ = [
    "Drops",
    "FactOp",
    "Graph",
    "GraphEntity",
    "GraphRelation",
    "MemVariable",
    "ProfileEntry",
    "coerce",
    "extract_facts",
    "extract_graph",
    "extract_profile",
    "extract_variables",
    "reconcile",
    "summarize",
]
