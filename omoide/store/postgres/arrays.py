"""Array parameters as one literal each (``'{...}'``, cast in the statement: ``%s::text[]``).

psycopg dumps a Python list element by element, and checks each text form against a regex to
decide its quoting: for the ids of a search's candidates, or the seqs of a keyword ranking,
that cost more of the client's time than the rest of the statement. A literal built here is
one string, sent with the unknown type, which the statement's cast parses: the same values
reach the server.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def int_array(values: Iterable[int]) -> str:
    """``values`` as an array literal, for ``%s::bigint[]``."""
    return "{" + ",".join(map(str, map(int, values))) + "}"


def text_array(values: Sequence[str]) -> str:
    """``values`` as an array literal, for ``%s::text[]``: each element double-quoted, with
    its backslashes and double quotes escaped (so commas, braces, spaces and ``NULL`` stay
    text)."""
    if not values:
        return "{}"
    joined = "".join(values)
    if "\\" in joined or '"' in joined:
        return "{" + ",".join('"' + _escaped(v) + '"' for v in values) + "}"
    return '{"' + '","'.join(values) + '"}'  # nothing to escape: one join


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
