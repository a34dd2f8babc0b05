"""``tests/test_memory.py`` again, with every ``Memory`` on a PostgreSQL store.

The library tests are imported as they are; an autouse fixture makes ``Memory(path)`` open a
fresh PostgreSQL schema for each distinct path (the same path again opens the same schema,
as reopening a file would). ``test_failing_job_is_retried_then_failed_and_visible`` is left
out: it ages rows through the SQLite writer connection directly.
"""

from __future__ import annotations

import pytest

import omoide.memory
from omoide.store.postgres import PostgresStore
from tests.postgres.server import put_memories_on_postgres
from tests.test_memory import (  # noqa: F401 - collected here, on PostgreSQL
    test_a_turn_is_found_through_the_question_it_answers,
    test_any_query_text_is_safe,
    test_bad_input_is_refused_and_nothing_is_written,
    test_bad_limits_are_refused,
    test_delete_all_removes_one_tenant,
    test_embedder_outage_stores_and_queues_then_recovers,
    test_get_all_pages_with_the_true_total,
    test_messages_become_memories_with_an_episode,
    test_opening_with_another_model_names_reindex,
    test_reset_forgets_everything_including_the_model,
    test_search_finds_by_meaning_and_stays_in_tenant,
    test_threshold_and_type_filters,
    test_unknown_ids_are_not_found,
    test_unknown_recipe_is_invalid,
    test_update_delete_history,
)


@pytest.fixture(autouse=True)
def _memory_on_postgres(monkeypatch: pytest.MonkeyPatch, pg_server: str) -> None:
    put_memories_on_postgres(monkeypatch)


def test_these_memories_really_are_on_postgresql(hash_memory: omoide.memory.Memory) -> None:
    assert isinstance(hash_memory.store, PostgresStore)
    hash_memory.add("tea with Mei", user_id="alice")
    assert hash_memory.store.admin.stats()["memories"] == 1
