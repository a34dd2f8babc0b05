"""Reconciling new profile entries with the stored ones, as facts are reconciled: a changed
value of a single-valued attribute (``home_city``, ``occupation``, ``favorite_drink``)
supersedes the entry it changes, with history kept, instead of becoming a second valid entry;
a value already stored is a no-op; a multi-valued attribute (``hobby``, ``language``) gains
an entry per new value.

No LLM call: attribute keys are normalised snake_case already (``omoide.extract.profile``),
so the attribute decides. An attribute is multi-valued when its key names a kind of thing
people have several of (``MULTI_VALUED``) or is plural; any other key has one current value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from omoide.extract import ProfileEntry
from omoide.types import MemoryItem

# Keys (or a key's last word: "spoken_language") with several values at once.
MULTI_VALUED = frozenset(
    {
        "allergy", "child", "dislike", "friend", "goal", "habit", "hobby", "interest",
        "language", "like", "pet", "preference", "sibling", "skill", "sport", "health_note",
        "family", "family_member", "instrument", "project", "value", "trait",
    }
)  # fmt: skip
_FOLD = re.compile(r"[\W_]+", re.UNICODE)


def multi_valued(attribute: str) -> bool:
    last = attribute.rsplit("_", 1)[-1]
    plural = attribute.endswith("s") and not attribute.endswith("ss")
    return attribute in MULTI_VALUED or last in MULTI_VALUED or plural


def same_value(a: str, b: str) -> bool:
    """Equal ignoring case, punctuation and spacing ("Shenzhen." is "shenzhen")."""
    return _FOLD.sub(" ", a).strip().casefold() == _FOLD.sub(" ", b).strip().casefold()


@dataclass
class ProfilePlan:
    """What to write: ``add`` new entries, ``update`` (old entry, its new version), and
    ``retire`` stray valid duplicates of a single-valued attribute that is being updated."""

    add: list[ProfileEntry] = field(default_factory=list)
    update: list[tuple[MemoryItem, ProfileEntry]] = field(default_factory=list)
    retire: list[MemoryItem] = field(default_factory=list)
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        return not (self.add or self.update)


def plan(entries: Sequence[ProfileEntry], known: Sequence[MemoryItem]) -> ProfilePlan:
    """Reconcile ``entries`` (this exchange's) with ``known`` (valid entries, newest first)."""
    by_attribute: dict[str, list[MemoryItem]] = {}
    for item in known:
        attribute = item.metadata.get("attribute")
        if isinstance(attribute, str):
            by_attribute.setdefault(attribute, []).append(item)
    out = ProfilePlan()
    for entry in _last_per_single_attribute(entries):
        same = by_attribute.get(entry.attribute, [])
        if any(same_value(str(i.metadata.get("value", "")), entry.value) for i in same) or any(
            same_value(i.text, entry.text) for i in known
        ):
            out.unchanged += 1
        elif same and not multi_valued(entry.attribute):
            out.update.append((same[0], entry))
            out.retire.extend(same[1:])
        else:
            out.add.append(entry)
    return out


def _last_per_single_attribute(entries: Sequence[ProfileEntry]) -> list[ProfileEntry]:
    """One answer naming two home cities means the later one (the user corrected it)."""
    last: dict[str, ProfileEntry] = {}
    kept: list[ProfileEntry] = []
    for entry in entries:
        if multi_valued(entry.attribute):
            kept.append(entry)
        else:
            last[entry.attribute] = entry
    return kept + list(last.values())
