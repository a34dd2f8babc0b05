"""OMOIDE_EMBED_RUNTIME=onnx-int8: the exported model with int8 products, made once, named apart."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import omoide.embed.onnx_quantize as quantize_module
from omoide import Memory
from omoide.cli import app, state
from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.embed.onnx import OnnxEmbedder, _embed_each
from omoide.engine.search.word_vectors import CALIBRATED
from omoide.errors import EmbedderError
from tests.test_embed_onnx import TEXTS, cosines

FACTS = [
    "I like jasmine tea",
    "My sister lives in Osaka",
    "I am learning to paint lakes",
    "Our dog Oscar chews every shoe in the house",
]


def _cache_with_float_export(directory: Path, float_model: OnnxEmbedder) -> Path:
    """A models directory holding the float export only (exporting again takes ~30 s)."""
    assert float_model.onnx_path is not None
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy2(float_model.onnx_path, directory / float_model.onnx_path.name)
    return directory


@pytest.fixture(scope="module")
def int8_cache(tmp_path_factory: pytest.TempPathFactory, onnx_embedder: OnnxEmbedder) -> Path:
    return _cache_with_float_export(tmp_path_factory.mktemp("int8-models"), onnx_embedder)


@pytest.fixture(scope="module")
def int8_embedder(int8_cache: Path) -> OnnxEmbedder:
    model = OnnxEmbedder(cache_dir=int8_cache, int8=True)
    model.embed(["warm up"])
    return model


def test_vectors_are_close_to_the_float_models_under_a_name_of_their_own(
    int8_embedder: OnnxEmbedder, onnx_embedder: OnnxEmbedder
) -> None:
    ours, floats = int8_embedder.embed(TEXTS), onnx_embedder.embed(TEXTS)
    assert ours.shape == floats.shape and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    similarity = cosines(ours, floats)
    assert similarity.min() >= quantize_module.MIN_COSINE
    assert similarity.mean() >= 0.98
    assert not np.array_equal(ours, floats)  # int8 products: not the float vectors
    assert int8_embedder.name == "sentence-transformers/all-MiniLM-L6-v2+int8"
    assert int8_embedder.name != onnx_embedder.name
    # the expansion's word-similarity threshold holds for it (measured: bench/README.md)
    assert int8_embedder.name in CALIBRATED


def test_a_texts_vector_does_not_depend_on_its_batch(int8_embedder: OnnxEmbedder) -> None:
    # int8 activations are scaled per run: batched, a text's vector would move with its batch
    # mates' lengths and padding. Each text runs alone, so the same text gives the same vector
    # in any call, in order, whichever worker thread ran it.
    texts = ["hi", TEXTS[31], "word " * 100, "🙂", "I like jasmine tea", "", "a b c d"]
    together = int8_embedder.embed(texts)
    alone = np.concatenate([int8_embedder.embed([t]) for t in texts])
    assert np.array_equal(together, alone)
    assert np.array_equal(int8_embedder.embed(texts[::-1])[::-1], together)
    assert (together @ together.T - np.eye(len(texts))).max() < 0.95


def test_a_query_runs_beside_a_writes_batch_and_gets_the_same_vectors(
    int8_embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A search's query does not wait for the write's batch in progress (it used to queue behind
    # it), and neither the lane nor the write's thread count changes a text's vector.
    texts = ["I like jasmine tea", TEXTS[31], "word " * 100, "🙂", ""]
    expected = int8_embedder.embed(texts)
    session = int8_embedder._session
    two_threads = _embed_each(session, int8_embedder._tokenizer, texts, 2)
    assert np.array_equal(two_threads, expected)  # as a write's batch when no query came lately
    gate, entered = threading.Event(), threading.Event()
    searcher = threading.current_thread()

    class Held:
        """The session, its runs held until ``gate`` but on the searching thread."""

        def __getattr__(self, name: str) -> object:
            return getattr(session, name)

        def run(self, *args: object) -> object:
            if threading.current_thread() is not searcher:
                entered.set()
                assert gate.wait(30), "the test never released the write"
            return session.run(*args)

    monkeypatch.setattr(int8_embedder, "_session", Held())
    got: list[np.ndarray] = []
    writer = threading.Thread(target=lambda: got.append(int8_embedder.embed(texts)))
    writer.start()
    assert entered.wait(30)
    try:
        query = int8_embedder.embed_query(["I like jasmine tea"])  # the write is still held
        assert writer.is_alive() and not gate.is_set()
    finally:
        gate.set()
        writer.join(30)
    assert np.array_equal(query, expected[:1])
    assert np.array_equal(got[0], expected)  # one thread, a query lately: the same vectors


def test_the_int8_file_is_made_once_and_reused(
    int8_embedder: OnnxEmbedder, int8_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = int8_embedder.onnx_path
    assert path is not None and path.parent == int8_cache and path.name.endswith("-int8v1.onnx")
    mtime = path.stat().st_mtime_ns

    def no_quantize(*args: object) -> None:
        raise AssertionError("quantised again")

    monkeypatch.setattr(quantize_module, "_quantize", no_quantize)
    again = OnnxEmbedder(cache_dir=int8_cache, int8=True)
    vectors = again.embed(FACTS)
    assert again.onnx_path == path and path.stat().st_mtime_ns == mtime
    assert cosines(vectors, int8_embedder.embed(FACTS)).min() >= 0.9999
    assert not list(int8_cache.glob("*.tmp"))


def test_a_cache_whose_float_and_int8_files_are_damaged_is_made_again(
    tmp_path: Path, int8_embedder: OnnxEmbedder, onnx_embedder: OnnxEmbedder
) -> None:
    # The int8 file was made again from the damaged float one: a failure until the cache was
    # deleted by hand.
    cache = _cache_with_float_export(tmp_path / "models", onnx_embedder)
    assert int8_embedder.onnx_path is not None
    shutil.copy2(int8_embedder.onnx_path, cache / int8_embedder.onnx_path.name)
    for path in cache.glob("*.onnx"):
        path.write_bytes(path.read_bytes()[:1000])  # a truncated copy of the cache
    again = OnnxEmbedder(cache_dir=cache, int8=True)
    assert cosines(again.embed(FACTS), int8_embedder.embed(FACTS)).min() >= 0.999
    assert all(p.stat().st_size > 1000 for p in cache.glob("*.onnx"))


def test_a_quantisation_too_far_from_the_float_model_is_refused(
    tmp_path: Path, onnx_embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache_with_float_export(tmp_path / "models", onnx_embedder)
    monkeypatch.setattr(quantize_module, "MIN_COSINE", 1.01)  # no int8 model can reach it
    with pytest.raises(EmbedderError) as info:
        OnnxEmbedder(cache_dir=cache, int8=True).embed(["x"])
    assert not info.value.retryable
    assert "OMOIDE_EMBED_RUNTIME=onnx" in info.value.message
    assert [p.name for p in cache.glob("*.onnx")] == [onnx_embedder.onnx_path.name]  # type: ignore[union-attr]
    assert not list(cache.glob("*.tmp"))


def test_a_float_database_switches_to_int8_through_reindex(
    tmp_path: Path, onnx_embedder: OnnxEmbedder, int8_embedder: OnnxEmbedder
) -> None:
    path = tmp_path / "omoide.db"
    with Memory(path, embedder=onnx_embedder, workers=0) as memory:
        for fact in FACTS:
            memory.add(fact, user_id="alice")
    with Memory(path, embedder=int8_embedder, workers=0) as memory:
        with pytest.raises(EmbedderError) as info:
            memory.add("I drink oolong on Sundays", user_id="alice")
        assert "omoide reindex" in info.value.message
        assert memory.reindex() == len(FACTS)
        memory.add("I drink oolong on Sundays", user_id="alice")
        found = memory.search("What does the user drink?", user_id="alice", recipe="vector")
    assert not found.degraded
    assert found.hits[0].memory.text in ("I like jasmine tea", "I drink oolong on Sundays")
    assert {h.memory.text for h in found.hits[:2]} == {
        "I like jasmine tea",
        "I drink oolong on Sundays",
    }


def test_settings_choose_the_int8_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_EMBED_RUNTIME", "onnx-int8")
    model = build_embedder(Settings(data_dir=tmp_path))
    assert isinstance(model, OnnxEmbedder) and model.int8
    assert model.name.endswith("+int8") and model.cache_dir == tmp_path / "models"
    assert not (tmp_path / "models").exists()  # nothing is loaded before the first embed
    monkeypatch.setenv("OMOIDE_EMBED_RUNTIME", "int8")
    with pytest.raises(ValueError, match="onnx-int8"):
        Settings(data_dir=tmp_path)


def test_a_new_store_gets_int8_and_an_old_one_keeps_float_until_reindex(
    tmp_path: Path,
    onnx_embedder: OnnxEmbedder,
    int8_embedder: OnnxEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OMOIDE_EMBED_RUNTIME", "OMOIDE_EMBED_MODEL", "OMOIDE_EMBEDDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path))
    models = tmp_path / "models"
    models.mkdir()
    for made in (onnx_embedder.onnx_path, int8_embedder.onnx_path):
        assert made is not None
        shutil.copy2(made, models / made.name)  # both files made: nothing is built again
    settings = Settings(data_dir=tmp_path)
    with Memory(tmp_path / "new.db", settings=settings, workers=0) as memory:
        memory.add(FACTS[0], user_id="alice")
        assert memory.embedder.name == int8_embedder.name
    old = tmp_path / "old.db"
    with Memory(old, embedder=onnx_embedder, workers=0) as memory:
        for fact in FACTS:
            memory.add(fact, user_id="alice")
    # the default settings keep the store's float runtime: no vectors of two spaces in one store
    with Memory(old, settings=settings, workers=0) as memory:
        assert memory.embedder.name == onnx_embedder.name
        memory.add("I drink oolong on Sundays", user_id="alice")
        found = memory.search("What does the user drink?", user_id="alice", recipe="vector")
        assert not found.degraded and not found.warnings
    state.settings, state.db = None, None
    try:
        done = CliRunner().invoke(app, ["--db", str(old), "reindex", "--json"])
    finally:
        state.settings, state.db = None, None
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"reindexed": len(FACTS) + 1}
    with Memory(old, settings=settings, workers=0) as memory:
        assert memory.embedder.name == int8_embedder.name
        found = memory.search("What does the user drink?", user_id="alice", recipe="vector")
        assert not found.degraded and not found.warnings
        assert {h.memory.text for h in found.hits[:2]} == {
            "I like jasmine tea",
            "I drink oolong on Sundays",
        }
    assert sorted(p.name for p in models.glob("*.onnx")) == sorted(
        p.name for p in (onnx_embedder.onnx_path, int8_embedder.onnx_path) if p is not None
    )
