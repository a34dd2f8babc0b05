"""Array parameters sent as one literal each read back as the values they were built from."""

from __future__ import annotations

from omoide.store.postgres.arrays import int_array, text_array
from omoide.store.postgres.db import connect

AWKWARD = [
    "plain",
    "",
    "NULL",
    "null",
    "with space",
    "a,b",
    "{braces}",
    'say "hi"',
    "back\\slash",
    '\\"',
    "ünïcødé 日本",
    " lead and trail ",
]

CLEAN = ["9f1c2e", "a b", "NULL", "x,y", "{z}", ""]  # nothing to escape


def test_text_and_int_arrays_read_back_the_same(pg_url: str) -> None:
    with connect(pg_url) as conn:
        row = conn.execute(
            "SELECT %s::text[] AS texts, %s::text[] AS clean, %s::bigint[] AS ints,"
            " %s::text[] AS none, %s::bigint[] AS no_ints",
            (
                text_array(AWKWARD),
                text_array(CLEAN),
                int_array([3, -1, 0, 2**62]),
                text_array([]),
                int_array([]),
            ),
        ).fetchone()
    assert row is not None
    assert row["texts"] == AWKWARD
    assert row["clean"] == CLEAN
    assert row["ints"] == [3, -1, 0, 2**62]
    assert row["none"] == [] and row["no_ints"] == []
