"""mem0's ``AsyncMemory`` (docs.mem0.ai/open-source/features/async-memory, its methods verbatim
but for the import and the placeholder ids): ``from mem0 import AsyncMemory`` was an
ImportError with the shim. Each call awaits the sync shim's, so the results are mem0's dicts."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import pytest

from omoide.compat.mem0 import AsyncMemory, Memory


@pytest.fixture(autouse=True)
def _omoide_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    for name in ("OMOIDE_LLM_BASE_URL", "API_BASE", "OMOIDE_LLM_MODEL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.filterwarnings("ignore:infer=True stored the messages:UserWarning")
def test_mem0_async_memory_docs_unchanged() -> None:
    async def script() -> dict[str, Any]:
        memory = AsyncMemory()
        try:
            added = await memory.add(
                messages=[
                    {"role": "user", "content": "I'm travelling to SF"},
                    {"role": "assistant", "content": "That's great to hear!"}
                ],
                user_id="alice"
            )  # fmt: skip
            memory_id = added["results"][0]["id"]
            found = await memory.search(query="Where am I travelling?", user_id="alice")
            listed = await memory.get_all(user_id="alice")
            got = await memory.get(memory_id=memory_id)
            await memory.update(memory_id=memory_id, data="I'm travelling to Seattle")
            events = await memory.history(memory_id=memory_id)
            deleted = await memory.delete(memory_id=memory_id)
            await memory.delete_all(user_id="alice")
            left = await memory.get_all(user_id="alice")
            return locals()
        finally:
            memory.close()

    done = asyncio.run(script())
    assert done["found"]["results"][0]["memory"] == "I'm travelling to SF"
    assert len(done["listed"]["results"]) == 2
    assert done["got"]["memory"] == "I'm travelling to SF"
    assert [e["event"] for e in done["events"]] == ["ADD", "UPDATE"]
    assert done["events"][1]["new_memory"] == "I'm travelling to Seattle"
    assert done["deleted"] == {"message": "Memory deleted successfully!"}
    assert done["left"] == {"results": []}


def test_async_memory_from_config_is_awaited_and_errors_are_the_shims(tmp_path: Path) -> None:
    async def script() -> None:
        memory = await AsyncMemory.from_config({"history_db_path": str(tmp_path / "m.db")})
        async with memory:
            with pytest.raises(ValueError, match="nope"):
                await memory.delete("nope")
            assert await memory.get("nope") is None

    asyncio.run(script())
    assert (tmp_path / "m.db").exists()


@pytest.mark.parametrize("method", ["add", "search", "get_all", "get", "update", "delete"])
def test_async_methods_take_the_sync_keywords(method: str) -> None:
    assert inspect.iscoroutinefunction(getattr(AsyncMemory, method))
    sync = inspect.signature(getattr(Memory, method))
    assert inspect.signature(getattr(AsyncMemory, method)) == sync
