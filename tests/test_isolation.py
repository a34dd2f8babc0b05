"""Tenant isolation, property-based: no interleaving of writes lets one tenant see another."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide import Memory, NotFound
from omoide.embed import HashEmbedder

USERS = ["alice", "bob", "carol"]
SCOPES = ["a", "b"]
WORDS = ["tea", "coffee", "osaka", "lisbon", "sister", "cat"]

op = st.one_of(
    st.tuples(
        st.just("add"),
        st.sampled_from(USERS),
        st.sampled_from(SCOPES),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        st.sampled_from([None, "s1", "s2"]),
    ),
    st.tuples(st.just("update"), st.integers(0, 50), st.sampled_from(WORDS)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("delete_all"), st.sampled_from(USERS), st.sampled_from(SCOPES)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=25))
def test_reads_never_cross_tenants(ops: list[tuple]) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory(Path(tmp) / "iso.db", embedder=HashEmbedder(), workers=0) as memory,
    ):
        owner: dict[str, tuple[str, str]] = {}
        created: list[str] = []
        for step in ops:
            if step[0] == "add":
                _, user, scope, words, session = step
                [item] = memory.add(
                    " ".join(words), user_id=user, scope_id=scope, session_id=session
                )
                owner[item.id] = (user, scope)
                created.append(item.id)
            elif created and step[0] in ("update", "delete"):
                memory_id = created[step[1] % len(created)]
                user, scope = owner[memory_id]
                try:
                    if step[0] == "update":
                        memory.update(memory_id, step[2], user_id=user, scope_id=scope)
                    else:
                        memory.delete(memory_id, user_id=user, scope_id=scope)
                except NotFound:
                    pass  # already deleted
            elif step[0] == "delete_all":
                memory.delete_all(user_id=step[1], scope_id=step[2])
        for user in USERS:
            for scope in SCOPES:
                tenant = (user, scope)
                for query in ("tea coffee osaka", "lisbon sister cat"):
                    hits = memory.search(query, user_id=user, scope_id=scope, limit=50).hits
                    assert all(owner[h.memory.id] == tenant for h in hits)
                page = memory.get_all(user_id=user, scope_id=scope, limit=100)
                assert all(owner[i.id] == tenant for i in page.items)
                assert page.total == len(page.items)
                for memory_id, other in owner.items():
                    if other != tenant:
                        try:
                            memory.get(memory_id, user_id=user, scope_id=scope)
                        except NotFound:
                            continue
                        raise AssertionError(f"{tenant} read {other}'s memory")
