"""``omoide.Client`` is a drop-in for ``Memory``: same calls, same types, typed errors."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

import omoide
from omoide import (
    BackendError,
    Client,
    Conflict,
    EmbedderError,
    FeatureDisabled,
    Forbidden,
    InvalidInput,
    Memory,
    Message,
    NotFound,
    SearchFilters,
    Unauthorized,
)
from omoide.types import Scope
from tests.api.conftest import BODY_LIMIT, KEY, Running

VOLATILE = {"id", "created_at", "updated_at", "valid_from", "memory_id", "source_episodes"}


def scenario(m: Any) -> dict[str, Any]:
    """One run over every shared method; ``m`` is a ``Memory`` or a ``Client``."""
    out: dict[str, Any] = {}
    out["add"] = m.add("I like jasmine tea", user_id="alice")
    memory_id = out["add"][0].id
    turns = [{"role": "user", "content": "I moved"}, Message(role="assistant", content="Ok")]
    chat, other = "team/chat-1", "team/chat-2"  # a "/" must survive the URL path
    out["add_messages"] = m.add(turns, user_id="alice", session_id=chat, metadata={"src": "t"})
    out["search"] = m.search("which tea do I like", user_id="alice", limit=3)
    out["get"] = m.get(memory_id, user_id="alice")
    out["get_all"] = m.get_all(user_id="alice", filters=SearchFilters(session_id=chat), limit=1)
    out["update"] = m.update(memory_id, "I like green tea", user_id="alice")
    out["history"] = m.history(memory_id, user_id="alice")
    found = m.context("tea?", user_id="alice", token_budget=500, track_access=False)
    out["context"] = re.sub(r"\[[0-9a-f]{32}\]", "[id]", found.text)  # token counts vary by id
    out["create_session"] = m.create_session(
        other, user_id="alice", name="n", project="p", metadata={"k": 1}
    )
    out["get_session"] = m.get_session(other, user_id="alice")
    out["update_session"] = m.update_session(other, user_id="alice", name="renamed")
    out["list_sessions"] = m.list_sessions(user_id="alice", limit=10)
    out["list_episodes"] = m.list_episodes(chat, user_id="alice")
    out["list_jobs"] = m.list_jobs(scope=Scope(user_id="alice"))
    out["job_counts"] = m.job_counts()
    out["delete"] = m.delete(memory_id, user_id="alice")
    out["delete_session"] = m.delete_session(chat, user_id="alice")
    out["delete_all"] = m.delete_all(user_id="alice")
    out["health"] = m.health()
    return out


def _shape(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_shape(v) for v in value])
    if isinstance(value, dict):
        return ("dict", sorted(value))
    return type(value).__name__


def _stable(value: Any) -> Any:
    """The value as JSON without ids and timestamps, which differ between the two stores."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list | tuple):
        return [_stable(v) for v in value]
    return value


def test_client_returns_what_memory_returns(server: Running, memory: Memory) -> None:
    with server.client() as client:
        remote = scenario(client)
    local = scenario(memory)
    assert remote.keys() == local.keys()
    for name in local:
        if name == "health":
            assert set(local[name]) <= set(remote[name])
            continue
        assert _shape(remote[name]) == _shape(local[name]), name
        assert _stable(remote[name]) == _stable(local[name]), name


def test_client_has_the_memory_methods_with_the_same_parameters() -> None:
    shared = [
        "add", "search", "get", "get_all", "update", "delete", "delete_all", "history", "context",
        "create_session", "get_session", "list_sessions", "update_session", "delete_session",
        "list_episodes", "list_jobs", "job_counts", "retry_job", "health", "close",
    ]  # fmt: skip
    for name in shared:
        mine = inspect.signature(getattr(Client, name)).parameters
        theirs = inspect.signature(getattr(Memory, name)).parameters
        assert list(mine) == list(theirs), name
        assert [p.kind for p in mine.values()] == [p.kind for p in theirs.values()], name
    assert "Client" in omoide.__all__ and omoide.Client is Client


def test_http_errors_become_omoide_errors(server: Running) -> None:
    with server.client() as client:
        with pytest.raises(NotFound) as missing:
            client.get("no-such-id")
        assert missing.value.fields["status"] == 404 and missing.value.fields["request_id"]
        client.create_session("dup")
        with pytest.raises(Conflict):
            client.create_session("dup")
        with pytest.raises(InvalidInput, match="must not be empty"):
            client.add("   ")
        with pytest.raises(InvalidInput, match="limit"):
            client.get_all(limit=0)
        with pytest.raises(InvalidInput, match="limit of"):
            client.add("x" * BODY_LIMIT)
        with pytest.raises(NotFound):
            client.retry_job(424242)
        with pytest.raises(NotFound):
            client.list_episodes("no-such-session")
        with pytest.raises(FeatureDisabled, match="LLM"):
            client.add("I live in Porto", infer=True)


def test_auth_errors(start_server: Callable[..., Running]) -> None:
    server = start_server(api_key=KEY, tenant_keys={"alice-key": {"user_id": "alice"}})
    with server.client() as anonymous, pytest.raises(Unauthorized):
        anonymous.get_all()
    with server.client("wrong") as wrong, pytest.raises(Unauthorized):
        wrong.search("tea")
    with server.client("alice-key") as alice:
        assert alice.add("alice's note")[0].user_id == "alice"
        assert alice.get_all().total == 1
        with pytest.raises(Forbidden):
            alice.get_all(user_id="bob")
    with server.client(KEY) as admin:
        assert admin.get_all(user_id="alice").total == 1
        assert admin.health()["status"] == "healthy"


def test_server_failures_are_backend_errors(
    server: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    def model_mismatch(*args: object, **kwargs: object) -> None:
        raise EmbedderError("database built with another model", retryable=False)

    with server.client() as client:
        monkeypatch.setattr(server.engine, "search", crash)
        with pytest.raises(BackendError) as crashed:
            client.search("tea")
        assert "boom" not in crashed.value.message
        monkeypatch.setattr(server.engine, "search", model_mismatch)
        with pytest.raises(EmbedderError, match="another model") as mismatch:
            client.search("tea")
        assert mismatch.value.fields["status"] == 500
    with Client("http://127.0.0.1:9", timeout=2) as unreachable:
        with pytest.raises(BackendError, match="cannot reach") as down:
            unreachable.get_all()
        assert down.value.retryable
