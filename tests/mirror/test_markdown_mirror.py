"""INDEX_BACKEND=file: memories written through the library appear in the markdown files, and
edits to the files (a person's, another tool's) come back as ordinary writes with history."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.engine.mirror.format import parse
from omoide.errors import NotFound
from omoide.llm.client import OpenAICompatLLM
from omoide.store.protocol import NewMemory
from omoide.types import MemoryType, Scope, SearchFilters
from tests.extraction.conftest import CHAT, GRAPH, script
from tests.fakes import FakeLLMServer
from tests.mirror.conftest import USER, type_file, until

Open = Callable[..., Memory]
SCOPE = Scope(user_id=USER)


def _add(memory: Memory, text: str, kind: MemoryType = MemoryType.SEMANTIC) -> str:
    [item] = memory.add_many([NewMemory(text=text, type=kind)], user_id=USER)
    return item.id


def _stored(memory: Memory) -> dict[str, str]:
    """Valid semantic memories read from the store itself (no dirty check runs)."""
    items, _ = memory.store.memories.list_memories(
        SCOPE, SearchFilters(types=[MemoryType.SEMANTIC]), 1000, 0
    )
    return {i.id: i.text for i in items}


def _items(path: Path) -> dict[str | None, str]:
    parsed = parse(path.read_text("utf-8"))
    assert not parsed.malformed
    return {i.memory_id: i.text for i in parsed.items}


def test_off_by_default(tmp_path: Path) -> None:
    assert Settings().store.file_mirror_root is None
    with Memory(tmp_path / "x.db", workers=0, settings=Settings()) as memory:
        assert memory.engine.services.mirror is None


def test_writes_appear_in_one_file_per_type(open_mirrored: Open, root: Path) -> None:
    memory = open_mirrored()
    tea = _add(memory, "I like jasmine tea")
    name = _add(memory, "My name is Alice", MemoryType.USER_PROFILE)
    two = _add(memory, "first line\nsecond line")
    memory.add("a raw turn is no long-term memory", user_id=USER)
    assert _items(type_file(root)) == {tea: "I like jasmine tea", two: "first line\nsecond line"}
    assert _items(type_file(root, "user_profile.md")) == {name: "My name is Alice"}
    assert "<!-- id:" + tea + " -->" in type_file(root).read_text("utf-8")

    memory.update(tea, "I like green tea", user_id=USER)
    memory.delete(two, user_id=USER)
    assert _items(type_file(root)) == {tea: "I like green tea"}
    memory.delete_all(user_id=USER)
    assert _items(type_file(root)) == {}


@pytest.mark.parametrize("watch", [False, True], ids=["dirty-check", "watcher"])
def test_edits_come_back_as_writes_with_history(
    open_mirrored: Open, root: Path, watch: bool
) -> None:
    memory = open_mirrored(watch=watch)
    keep, change, drop = (_add(memory, t) for t in ("keep me", "I like jasmine tea", "drop me"))
    path = type_file(root)
    text = path.read_text("utf-8")
    lines = [line for line in text.splitlines() if drop not in line]
    edited = "\n".join(lines).replace("jasmine tea", "green tea") + "\n- I live in Kyoto\n"
    path.write_text(edited, "utf-8")

    def picked_up() -> bool:
        stored = _stored(memory)
        return drop not in stored and "I live in Kyoto" in stored.values()

    if watch:  # the watcher alone: the store is read directly, no dirty check runs
        until(picked_up, "the watcher to ingest the edit")
    else:
        assert not picked_up()
        memory.get_all(user_id=USER)  # the dirty check before the listing
        assert picked_up()
    stored = _stored(memory)
    assert stored[keep] == "keep me" and stored[change] == "I like green tea"
    assert [h.event for h in memory.history(change, user_id=USER)] == ["ADD", "UPDATE"]
    assert [h.event for h in memory.history(drop, user_id=USER)] == ["ADD", "DELETE"]
    with pytest.raises(NotFound):
        memory.get(drop, user_id=USER)
    # the new line got its id in the file, and reading again changes nothing
    until(lambda: None not in _items(path), "the new item's id in the file")
    assert _items(path) == stored
    memory.get_all(user_id=USER)
    assert _stored(memory) == stored


def test_search_sees_an_edit_at_once(open_mirrored: Open, root: Path) -> None:
    memory = open_mirrored(watch=False)
    _add(memory, "I like jasmine tea")
    path = type_file(root)
    path.write_text(path.read_text("utf-8") + "- 我住在深圳\n", "utf-8")
    hits = memory.search("深圳", user_id=USER).hits
    assert [h.memory.text for h in hits][:1] == ["我住在深圳"]
    assert "- 我住在深圳 <!-- id:" in path.read_text("utf-8")


def test_chinese_round_trips(open_mirrored: Open, root: Path) -> None:
    memory = open_mirrored(watch=False)
    text = "用户喜欢茉莉花茶\n周末住在深圳，工作日在广州"  # noqa: RUF001 (Chinese punctuation)
    memory_id = _add(memory, text)
    assert _items(type_file(root)) == {memory_id: text}
    edited = type_file(root).read_text("utf-8").replace("茉莉花茶", "龙井茶")
    type_file(root).write_text(edited, "utf-8")
    memory.get_all(user_id=USER)
    assert memory.get(memory_id, user_id=USER).text == text.replace("茉莉花茶", "龙井茶")
    # an id in another script is a safe directory name too
    other = _add_for(memory, "日本語のメモ", "田中/太郎")
    assert (root / "memories" / "田中%2F太郎" / "default" / "semantic_memory.md").is_file()
    assert other in (
        root / "memories" / "田中%2F太郎" / "default" / "semantic_memory.md"
    ).read_text("utf-8")


def _add_for(memory: Memory, text: str, user_id: str) -> str:
    [item] = memory.add_many([NewMemory(text=text, type=MemoryType.SEMANTIC)], user_id=user_id)
    return item.id


def test_malformed_blocks_are_kept_and_reported(open_mirrored: Open, root: Path) -> None:
    memory = open_mirrored(watch=False)
    a, b = _add(memory, "memory a"), _add(memory, "memory b")
    path = type_file(root)
    lines = path.read_text("utf-8").splitlines()
    merged = [line for line in lines if a not in line and b not in line]
    # a person joined two items into one line (two ids), and typed a paragraph without "- "
    merged += [f"- memory a, edited <!-- id:{a} --> memory b <!-- id:{b} -->", "", "loose note"]
    merged += ["- " + "x" * 200_000]  # longer than max_text_chars: refused by the service
    path.write_text("\n".join(merged) + "\n", "utf-8")
    memory.get_all(user_id=USER)
    # nothing was changed or deleted, and every block is still in the file
    assert _stored(memory) == {a: "memory a", b: "memory b"}
    content = path.read_text("utf-8")
    assert f"memory a, edited <!-- id:{a} --> memory b <!-- id:{b} -->" in content
    assert "loose note" in content and "x" * 200_000 in content
    status = memory.engine.services.mirror.status()  # type: ignore[union-attr]
    reasons = sorted(p["reason"].split(":")[0] for p in status["problems"])
    assert status["status"] == "degraded"
    assert reasons == [
        "not applied",
        "several id comments in one item",
        "text outside a '- ' list item",
    ]
    # rereading is stable: the file does not grow and nothing is ingested twice
    memory.get_all(user_id=USER)
    assert path.read_text("utf-8") == content
    # fixing the blocks clears the report
    fixed = content.replace(f" memory b <!-- id:{b} -->", f"\n- memory b <!-- id:{b} -->")
    fixed = fixed.replace("loose note", "- loose note").replace("- " + "x" * 200_000 + "\n", "")
    path.write_text(fixed, "utf-8")
    memory.get_all(user_id=USER)
    assert sorted(_stored(memory).values()) == ["loose note", "memory a, edited", "memory b"]
    assert memory.engine.services.mirror.status()["problems"] == []  # type: ignore[union-attr]


def test_a_file_that_is_not_utf8_is_left_alone(open_mirrored: Open, root: Path) -> None:
    memory = open_mirrored(watch=False)
    a = _add(memory, "memory a")
    path = type_file(root)
    broken = path.read_bytes() + b"- caf\xe9\n"
    path.write_bytes(broken)
    memory.get_all(user_id=USER)
    _add(memory, "memory b")  # a write while the file is broken does not overwrite it
    assert path.read_bytes() == broken
    assert _stored(memory)[a] == "memory a"
    status = memory.engine.services.mirror.status()  # type: ignore[union-attr]
    assert [p["reason"] for p in status["problems"]] == ["the file is not UTF-8"]


def test_the_jiuwen_setting_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("INDEX_BACKEND", "file")
    monkeypatch.setenv("FILE_MEMORY_DATA_DIR", str(tmp_path / "md"))
    assert Settings().store.file_mirror_root == tmp_path / "md"
    monkeypatch.delenv("FILE_MEMORY_DATA_DIR")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    assert Settings().store.file_mirror_root == tmp_path / "data" / "file_memory_data"


def test_a_summary_reaches_its_file(open_mirrored: Open, root: Path) -> None:
    memory = open_mirrored(watch=False)
    summary = memory.create_summary("s1", "We talked about tea.", user_id=USER)
    assert _items(type_file(root, "summary.md")) == {summary.id: "We talked about tea."}


def test_extracted_memories_reach_the_files(
    tmp_path: Path, root: Path, llm: OpenAICompatLLM, fake_llm: FakeLLMServer
) -> None:
    """Extraction writes in its job's own transaction: the job batch announces it."""
    summary = "Mei lives in Shenzhen."
    script(
        fake_llm,
        facts=["Mei lives in Shenzhen"],
        profile={"name": "Mei"},
        summary=summary,
        graph=GRAPH,
    )
    settings = Settings(index_backend="file", file_memory_data_dir=root)
    with Memory(
        tmp_path / "x.db", embedder=HashEmbedder(), llm=llm, settings=settings, workers=0
    ) as mem:
        result = mem.add_messages(CHAT, user_id=USER, session_id="c1", wait=True)
        assert result.extraction.state == "done", result.extraction
        assert list(_items(type_file(root)).values()) == ["Mei lives in Shenzhen"]
        assert list(_items(type_file(root, "user_profile.md")).values()) == ["name: Mei"]
        assert list(_items(type_file(root, "summary.md")).values()) == [summary]


def test_a_tenant_whose_files_cannot_be_written_is_reported(
    open_mirrored: Callable[..., Memory], root: Path
) -> None:
    memory = open_mirrored(watch=False)
    user = "carol"
    (root / "memories").mkdir(parents=True, exist_ok=True)
    (root / "memories" / user).write_text("a file where her folder would go", "utf-8")
    [item] = memory.add_many(
        [NewMemory(text="kept anyway", type=MemoryType.SEMANTIC)], user_id=user
    )
    assert memory.get(item.id, user_id=user).text == "kept anyway"  # the database has it
    status = memory.engine.services.mirror.status()  # type: ignore[union-attr]
    assert status["status"] == "degraded"
    assert any("could not be written" in p["reason"] for p in status["problems"])


@pytest.mark.parametrize("watch", [False, True], ids=["dirty-check", "watcher"])
@pytest.mark.parametrize("user", ["é" * 200, "!" * 256], ids=["long-letters", "long-escapes"])
def test_an_id_too_long_for_a_folder_name_is_mirrored_and_read_back(
    open_mirrored: Open, root: Path, watch: bool, user: str
) -> None:
    # A valid id can escape to more bytes than a filesystem name holds (255): its writes then
    # failed to mirror, each logged a traceback, and /health said degraded for every tenant.
    memory = open_mirrored(watch=watch)
    [item] = memory.add_many(
        [NewMemory(text="I like jasmine tea", type=MemoryType.SEMANTIC)], user_id=user
    )
    mirror = memory.engine.services.mirror
    assert mirror is not None and mirror.status()["status"] == "ok"
    [path] = (root / "memories").glob("*/default/semantic_memory.md")
    assert all(len(part.encode()) <= 255 for part in path.parts)
    assert _items(path) == {item.id: "I like jasmine tea"}
    assert mirror.scope_of(path) == Scope(user_id=user)
    edited = path.with_name("edited.tmp")  # replaced whole, as an editor saves
    edited.write_text(path.read_text("utf-8").replace("jasmine", "green"), "utf-8")
    edited.replace(path)

    def picked_up() -> bool:
        found = memory.store.memories.get_memories(Scope(user_id=user), [item.id])
        return [m.text for m in found] == ["I like green tea"]

    if watch:
        until(picked_up, "the watcher to ingest the edit")
    else:
        memory.get_all(user_id=user)  # the dirty check before the listing
        assert picked_up()
    other = memory.add_many(
        [NewMemory(text="My cat is Mochi", type=MemoryType.SEMANTIC)], user_id="bob"
    )
    assert _items(type_file(root, user="bob")) == {other[0].id: "My cat is Mochi"}


def test_an_id_whose_folder_name_fits_keeps_the_folder_it_always_had(
    open_mirrored: Open, root: Path
) -> None:
    # 220 bytes fit a filesystem name: earlier versions mirrored this id to its own readable
    # folder, which a person may have open; moving it to a shortened name left that folder
    # edited and never read again.
    user = "é" * 110
    memory = open_mirrored(watch=False)
    memory.add_many([NewMemory(text="I like jasmine tea", type=MemoryType.SEMANTIC)], user_id=user)
    [folder] = (root / "memories").iterdir()
    assert folder.name == user


def test_a_file_still_being_written_is_not_taken_for_half_its_memories(
    open_mirrored: Open, root: Path
) -> None:
    # An editor saving in place truncates the file, then writes it: a sync that runs between
    # (a read's dirty check, another write's mirroring) read the missing items as deleted and
    # the cut one as edited; the memories came back under new ids once the file was whole.
    memory = open_mirrored(watch=False)
    tea, city = _add(memory, "I like jasmine tea"), _add(memory, "I live in Kyoto")
    path = type_file(root)
    whole = path.read_text("utf-8").replace("jasmine", "green")
    cut = whole.index("green") + 2  # inside the first item: the rest not written yet
    with path.open("w", encoding="utf-8") as writer:
        writer.write(whole[:cut])
        writer.flush()
        memory.get_all(user_id=USER)  # the dirty check, with the file half written
        cat = _add(memory, "My cat is Mochi")  # a write's mirroring, likewise
        assert _stored(memory) == {
            tea: "I like jasmine tea",
            city: "I live in Kyoto",
            cat: "My cat is Mochi",
        }
        writer.write(whole[cut:])
    memory.get_all(user_id=USER)  # whole now: ingested
    assert _stored(memory) == {
        tea: "I like green tea",
        city: "I live in Kyoto",
        cat: "My cat is Mochi",
    }
    assert [h.event for h in memory.history(city, user_id=USER)] == ["ADD"]
    assert _items(path) == _stored(memory)
