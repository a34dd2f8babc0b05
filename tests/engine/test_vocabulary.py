"""The common words' vectors of the query expansion (``omoide.engine.search.vocabulary``): embedded
once, saved chunk by chunk, loaded by the next process, and the same for every tenant."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed.local import LocalEmbedder
from omoide.engine.search.vocabulary import BATCH, Vocabulary, common_words, shared_vocabulary
from omoide.engine.search.word_vectors import WordVectors

SHARED = Settings().store.models_dir  # the saved table other tests load
WORDS = ["sofa", "couch", "garden", "kitchen", "novel", "sister", "morning"]


class Counting:
    """The real model, counting the words it is asked to embed."""

    def __init__(self, model: LocalEmbedder) -> None:
        self.model = model
        self.name = model.name
        self.words: list[str] = []
        self.after_call: list[Callable[[], object]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.words += texts
        vectors = self.model.embed(texts)
        for hook in self.after_call:
            hook()
        return vectors


def built(embed: Counting, directory: Path | None, chunk: int = 3) -> Vocabulary:
    table = Vocabulary(embed.embed, embed.name, directory, WORDS, chunk=chunk)
    table.start()
    assert table.wait(120)
    return table


def test_the_list_is_common_lower_case_words() -> None:
    words = common_words()
    assert len(words) > 20_000 and len(set(words)) == len(words)
    assert {"sofa", "couch", "relax", "painting"} <= set(words)
    assert all(w.isalpha() and w.islower() and len(w) > 2 for w in words)
    assert "the" not in words and "what" not in words  # stopwords never reach the expansion


def test_built_once_then_loaded_from_its_files(tmp_path: Path, embedder: LocalEmbedder) -> None:
    first = Counting(embedder)
    table = built(first, tmp_path)
    assert table.complete and sorted(first.words) == sorted(WORDS)
    assert len(list(tmp_path.glob("*-words-*.npy"))) == 3  # 7 words, 3 a chunk
    vectors = table.vectors(["sofa", "couch", "armchair"])
    assert set(vectors) == {"sofa", "couch"}  # "armchair" is not in this table's list
    expected = embedder.embed(["sofa"])[0]
    assert float(vectors["sofa"] @ expected / np.linalg.norm(expected)) > 0.9999

    second = Counting(embedder)
    again = built(second, tmp_path)
    assert again.complete and second.words == []  # nothing embedded: read from the files
    assert np.array_equal(again.vectors(["couch"])["couch"], vectors["couch"])


def test_a_stopped_build_keeps_its_finished_chunks(tmp_path: Path, embedder: LocalEmbedder) -> None:
    first = Counting(embedder)
    table = Vocabulary(first.embed, first.name, tmp_path, WORDS, chunk=3)
    first.after_call.append(table.stop)  # as a process exiting after one embed call
    table.start()
    assert table.wait(120)
    assert not table.complete and not table.failed
    assert first.words == WORDS[:3] and set(table.vectors(WORDS)) == set(WORDS[:3])

    second = Counting(embedder)
    assert built(second, tmp_path).complete
    assert second.words == WORDS[3:]  # only the chunks the first process did not finish


def test_a_damaged_chunk_is_embedded_again(tmp_path: Path, embedder: LocalEmbedder) -> None:
    built(Counting(embedder), tmp_path)
    sorted(tmp_path.glob("*-words-*.1.npy"))[0].write_bytes(b"not a numpy file")
    sorted(tmp_path.glob("*-words-*.2.npy"))[0].write_bytes(b"")  # as after a crash
    again = Counting(embedder)
    table = built(again, tmp_path)
    assert table.complete and not table.failed
    assert again.words == WORDS[3:]
    vectors = table.vectors(["sofa"])["sofa"]
    with pytest.raises(ValueError, match="read-only"):
        vectors[0] = 2.0  # shared by every tenant: read-only


def test_another_model_or_list_has_its_own_files(tmp_path: Path, embedder: LocalEmbedder) -> None:
    built(Counting(embedder), tmp_path)
    other = Counting(embedder)
    other.name = "someone/another-model"
    assert built(other, tmp_path).complete and sorted(other.words) == sorted(WORDS)
    assert len(list(tmp_path.glob("*-words-*.npy"))) == 6


def test_a_directory_it_cannot_write_keeps_the_table_in_memory(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the models directory should be")
    table = built(Counting(embedder), blocked / "models")
    assert table.complete and table.vectors(["sofa"])
    assert blocked.read_text().startswith("a file")


def test_a_failing_embedder_leaves_searches_to_embed_on_demand(tmp_path: Path) -> None:
    def down(texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("the model was closed")

    table = Vocabulary(down, "m", tmp_path, WORDS, chunk=3)
    table.start()
    assert table.wait(30) and table.failed and table.vectors(WORDS) == {}
    failed = shared_vocabulary(down, "failing-model", tmp_path)
    assert failed.wait(30) and failed.failed
    assert shared_vocabulary(down, "failing-model", tmp_path) is failed  # no retry per search

    def up(texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 4), dtype=np.float32)

    retried = shared_vocabulary(up, "failing-model", tmp_path)  # another engine's embedder
    assert retried is not failed and retried.wait(60) and retried.complete


def test_words_outside_the_list_take_no_part(tmp_path: Path, embedder: LocalEmbedder) -> None:
    counting = Counting(embedder)
    with Memory(tmp_path / "omoide.db", embedder=counting, workers=0) as memory:
        words = WordVectors(memory.engine.embedding, SHARED)
        assert shared_vocabulary(embedder.embed, embedder.name, SHARED).wait(300)
        counting.words.clear()
        found = words(["sofa", "zqxcouch", "couch"], owner="alice")
        assert set(found) == {"sofa", "couch"} and counting.words == []  # read, not embedded
        assert float(np.linalg.norm(found["sofa"])) == pytest.approx(1.0)


class Gated(Counting):
    """Holds the table's batches until ``open`` is set; a search's words go through."""

    def __init__(self, model: LocalEmbedder) -> None:
        super().__init__(model)
        self.open = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == BATCH:
            assert self.open.wait(300)
        return super().embed(texts)


def test_before_the_table_is_ready_words_are_embedded_per_tenant(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    """Until the table is there a list word is embedded (the model's vector, as the table's);
    meanwhile it is cached for that tenant only, so a search never gets faster because
    another tenant's searches embedded its words."""
    gated = Gated(embedder)
    with Memory(tmp_path / "omoide.db", embedder=gated, workers=0) as memory:
        words = WordVectors(memory.engine.embedding, tmp_path / "models")
        before = words(["sofa", "couch", "zqxcouch"], owner="alice")
        assert set(before) == {"sofa", "couch"}
        asked = [w for w in gated.words if w in ("sofa", "couch")]
        assert sorted(asked) == ["couch", "sofa"]  # embedded on demand: no chunk yet
        words(["sofa"], owner="alice")
        assert gated.words.count("sofa") == 1  # cached for alice
        words(["sofa"], owner="bob")
        assert gated.words.count("sofa") == 2  # embedded again for bob
        table = shared_vocabulary(gated.embed, gated.name, tmp_path / "models")
        assert not table.complete
        table.stop()  # its vectors are the model's, as test_built_once_... checks
        gated.open.set()
        assert table.wait(300)
    for word in ("sofa", "couch"):
        expected = embedder.embed([word])[0]
        assert float(before[word] @ expected / np.linalg.norm(expected)) > 0.9999


def test_a_table_that_only_loads_never_embeds(tmp_path: Path, embedder: LocalEmbedder) -> None:
    """``OMOIDE_WORD_TABLE_BUILD=false``: the saved chunks are read, missing ones stay missing
    (their words are embedded by the searches that need them), nothing runs beside them."""
    idle = Counting(embedder)
    empty = Vocabulary(idle.embed, idle.name, tmp_path, WORDS, chunk=3, build=False)
    empty.start()
    assert empty.wait(60) and not empty.complete and not empty.failed
    assert idle.words == [] and empty.vectors(WORDS) == {}
    built(Counting(embedder), tmp_path)
    loads = Vocabulary(idle.embed, idle.name, tmp_path, WORDS, chunk=3, build=False)
    loads.start()
    assert loads.wait(60) and loads.complete and idle.words == []


class _Waits(threading.Event):
    """An event that records how long it was asked to wait, and never waits."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.asked.append(timeout or 0.0)
        return self.is_set()


def _embed_words(texts: Sequence[str]) -> np.ndarray:
    return np.ones((len(texts), 4), np.float32)


def test_the_build_yields_to_searches_and_runs_freely_without_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from omoide.engine.shared import activity

    words = [f"w{i}" for i in range(3 * BATCH)]
    monkeypatch.setattr(activity, "_last_search", -1e9)  # no search for a long time
    table = Vocabulary(_embed_words, "fake", None, words, chunk=len(words))
    table._stop = waits = _Waits()
    table._build(0)
    assert waits.asked == []  # idle: one batch after the other

    activity.note_search()  # searches are arriving
    table._build(0)
    assert len(waits.asked) == 3  # a rest after each batch of the chunk
    assert all(w >= 0 for w in waits.asked)
