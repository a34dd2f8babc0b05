"""The markdown of one memory file (``semantic_memory.md``, ...): written and read back.

One memory is one list item; its id rides at the end of the item as an HTML comment, which a
markdown viewer hides and an editor keeps when a person changes the words before it::

    - I like jasmine tea <!-- id:mem_01J... -->
    - a memory over
      two lines <!-- id:mem_01K... -->

Reading never guesses: what is not a list item with at most one id (stray text, an item with
two ids, an id on two items, an empty item) is a ``Malformed`` block, kept verbatim, so a
rewrite puts it back in the file (under a marker) instead of dropping it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ID_COMMENT = re.compile(r"<!--\s*id:\s*([A-Za-z0-9_.:-]+)\s*-->")
_ITEM = re.compile(r"^[-*+] (.*)$|^[-*+]$")
KEPT_MARKER = (
    "<!-- omoide: the blocks below could not be read as memories (they are reported in "
    "/health); fix them (one '- ' item each, at most one id comment) or delete them -->"
)
HELP = (
    "<!-- omoide: one memory per '- ' item. Change the words freely but keep each item's id "
    "comment; delete an item to delete the memory; a new '- ' item becomes a new memory. -->"
)


@dataclass(frozen=True)
class Item:
    """A list item that reads as one memory: ``memory_id`` is None for a new one."""

    text: str
    memory_id: str | None
    raw: str = ""
    line: int = 0


@dataclass(frozen=True)
class Malformed:
    """A block kept as written, with why it could not be read and its first line number."""

    raw: str
    reason: str
    line: int


@dataclass
class Parsed:
    items: list[Item] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)


def render(title: str, texts: list[tuple[str, str]], kept: list[Malformed]) -> str:
    """The file for memories ``(id, text)`` in this order, then the ``kept`` blocks."""
    out = [f"# {title}", "", HELP, ""]
    rendered = set()
    for memory_id, text in texts:
        item = item_markdown(memory_id, text)
        rendered.add(item)
        out.append(item)
    # a block already written above (an id on two items, one of them as rendered) or twice
    # in the file is kept once, so rewrites never grow the file
    blocks = list(dict.fromkeys(b.raw.rstrip("\n") for b in kept if b.raw.rstrip("\n")))
    blocks = [b for b in blocks if b not in rendered]
    if blocks:
        out.extend(["", KEPT_MARKER, ""])
        for block in blocks:
            out.extend([block, ""])
    return "\n".join(out).rstrip("\n") + "\n"


def item_markdown(memory_id: str, text: str) -> str:
    """One memory as a list item: continuation lines indented, the id comment last."""
    lines = text.strip().splitlines() or [""]
    body = [f"- {lines[0]}"] + [f"  {line}" if line.strip() else "" for line in lines[1:]]
    body[-1] = f"{body[-1]} <!-- id:{memory_id} -->"
    return "\n".join(body)


def parse(content: str) -> Parsed:
    """The items and malformed blocks of a file, in file order."""
    lines = content.splitlines()
    parsed = Parsed()
    blocks: list[tuple[int, list[str]]] = []  # (first line, lines) of each list item
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
        elif line.lstrip().startswith("<!--") and (end := _comment_end(lines, i)) is not None:
            i = end
        elif _ITEM.match(line):
            end = _item_end(lines, i)
            blocks.append((i + 1, lines[i:end]))
            i = end
        else:
            end = _paragraph_end(lines, i)
            raw = "\n".join(lines[i:end])
            parsed.malformed.append(Malformed(raw, "text outside a '- ' list item", i + 1))
            i = end
    _read_items(blocks, parsed)
    return parsed


def _read_items(blocks: list[tuple[int, list[str]]], parsed: Parsed) -> None:
    """Items from the blocks; an id on several items makes each of them malformed."""
    read: list[tuple[int, list[str], str, list[str]]] = []
    for first, block in blocks:
        raw = "\n".join(block)
        ids = ID_COMMENT.findall(raw)
        text = _item_text(block)
        read.append((first, block, text, ids))
    seen: dict[str, int] = {}
    for _, _, _, ids in read:
        for memory_id in set(ids):
            seen[memory_id] = seen.get(memory_id, 0) + 1
    for first, block, text, ids in read:
        raw = "\n".join(block)
        if len(set(ids)) > 1:
            parsed.malformed.append(Malformed(raw, "several id comments in one item", first))
        elif ids and seen[ids[0]] > 1:
            parsed.malformed.append(Malformed(raw, f"id {ids[0]} is on several items", first))
        elif not text:
            parsed.malformed.append(Malformed(raw, "an item without text", first))
        else:
            parsed.items.append(Item(text, ids[0] if ids else None, raw, first))


def _item_text(block: list[str]) -> str:
    first = _ITEM.match(block[0])
    head = (first.group(1) or "") if first else block[0]
    rest = [line[2:] if line.startswith("  ") else line.lstrip() for line in block[1:]]
    text = "\n".join([head, *rest])
    return ID_COMMENT.sub("", text).strip()


def _item_end(lines: list[str], start: int) -> int:
    """The line after an item: it goes on over indented lines (and blank lines between)."""
    end = start + 1
    j = end
    while j < len(lines):
        if lines[j][:1] in (" ", "\t") and lines[j].strip():
            end = j = j + 1
        elif not lines[j].strip():
            j += 1
        else:
            break
    return end


def _paragraph_end(lines: list[str], start: int) -> int:
    end = start + 1
    while end < len(lines) and lines[end].strip() and not _ITEM.match(lines[end]):
        end += 1
    return end


def _comment_end(lines: list[str], start: int) -> int | None:
    """The line after a comment block; None (so it is read as text) if it holds an id or
    never closes: an unclosed ``<!--`` must not hide the rest of the file."""
    for j in range(start, len(lines)):
        if ID_COMMENT.search(lines[j]):
            return None
        if "-->" in lines[j]:
            return j + 1
    return None
