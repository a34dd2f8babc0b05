"""The onnxruntime embedder: sentence-transformers' vectors from a graph written once from the
weights (no torch), shared by name."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import omoide.embed.onnx as onnx_module
from omoide import Memory
from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.embed.local import LocalEmbedder
from omoide.embed.onnx import OnnxEmbedder
from omoide.errors import EmbedderError

LONG = " ".join(f"On day {i} Caroline painted a lake at sunrise with Melanie." for i in range(60))
TEXTS = [
    "",
    " ",
    "\n\t",
    ".",
    "a",
    "🙂",
    "🌈🌈🌈 ✨",
    "ok",
    "I like jasmine tea",
    "My sister lives in Osaka",
    "When did Caroline go to the LGBTQ support group?",
    "Melanie: I'm swamped with the kids & work. What's up with you? Anything new?",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "[8 May 2023] Jon: I lost my job as a banker, so I'm opening a dance studio!",
    "東京で寿司を食べた。とても美味しかった。",
    "Ça va très bien, merci ! Nous sommes allés à la plage près de Nice.",
    "Здравствуйте, как дела? Я живу в Москве.",
    "Ünïcödé wïth äccents: naïve café, façade, jalapeño, Øresund, ß.",
    "مرحبا، كيف حالك اليوم؟",
    "उन्होंने कल बाज़ार से सब्ज़ियाँ खरीदीं।",
    "def embed(texts): return model.encode(texts)  # code, not prose",
    "SELECT * FROM memories WHERE user_id = 'alice' ORDER BY created_at DESC;",
    "https://example.com/path?query=jasmine&tea=1#fragment",
    "2023-05-07T14:03:00Z 404 GET /api/v1/search 12.5ms",
    "$$$ 100% !!! ??? ... --- ***",
    "ALL CAPS SENTENCE ABOUT A DOG CALLED OSCAR",
    "all lower case sentence about a dog called oscar",
    "   leading and trailing spaces   ",
    "tabs\tand\nnewlines\r\nin the middle",
    "word " * 255,
    "word " * 254 + "ending",
    LONG,
    LONG + " And then something completely different about tax returns and invoices.",
    "x" * 3000,
    "antidisestablishmentarianism " * 40,
    "The quick brown fox jumps over the lazy dog.",
    "She said: \u201cDon\u2019t forget the \u2018quotes\u2019 \u2014 and dashes\u2026\u201d",
    "1 2 3 4 5 6 7 8 9 10",
    "Gina and Jon talked about their dance studio plans for the summer season.",
    "Evan bought a new car, a Prius, after his old one broke down on the highway.",
    "Audrey adopted two dogs from the shelter and named them Pepper and Precious.",
    "What did Andrew do with his girlfriend last weekend?",
    "The meeting was moved from Tuesday to Thursday at 3pm because of the holiday.",
    "Ich habe gestern ein Buch über Geschichte gelesen.",
    "El perro corre rápidamente por el parque.",
    "Il pleut des cordes depuis ce matin à Paris.",
    "🙂 mixed emoji 🙃 and text 🎉 in one 🍵 sentence",
    "\u200b\u200bzero width spaces\u200b",
    "a\u0301 combining accent",
    "\x00 control \x07 characters",
]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1)


def test_same_vectors_and_name_as_sentence_transformers(
    onnx_embedder: OnnxEmbedder, embedder: LocalEmbedder
) -> None:
    assert len(TEXTS) >= 50
    ours, theirs = onnx_embedder.embed(TEXTS), embedder.embed(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert cosines(ours, theirs).min() >= 0.9999
    assert onnx_embedder.name == embedder.name == "sentence-transformers/all-MiniLM-L6-v2"


def test_long_texts_are_cut_at_max_seq_length(onnx_embedder: OnnxEmbedder) -> None:
    # LONG is far over 256 tokens: what follows it is cut off, exactly as sentence-transformers
    # does (the vectors of both equal the torch ones in the test above).
    long, longer = onnx_embedder.embed([LONG, LONG + " something else entirely"])
    assert float(long @ longer) == pytest.approx(1.0, abs=1e-6)


def test_a_batch_keeps_its_order_whatever_the_lengths(onnx_cache: Path) -> None:
    model = OnnxEmbedder(cache_dir=onnx_cache, batch_size=3)  # many batches, sorted by length
    texts = ["hi", LONG, "word " * 100, "🙂", "I like jasmine tea", "x" * 3000, "", "a b c d"]
    together = model.embed(texts)
    alone = np.concatenate([model.embed([t]) for t in texts])
    assert cosines(together, alone).min() >= 0.9999
    reordered = model.embed(texts[::-1])[::-1]
    assert cosines(together, reordered).min() >= 0.9999


def test_no_texts_give_no_vectors(onnx_embedder: OnnxEmbedder) -> None:
    assert onnx_embedder.embed([]).shape == (0, 384)


def test_the_export_is_cached(
    onnx_embedder: OnnxEmbedder, onnx_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = onnx_embedder.onnx_path
    assert path is not None and path.parent == onnx_cache
    assert path.name.startswith("all-MiniLM-L6-v2-") and path.suffix == ".onnx"
    mtime = path.stat().st_mtime_ns

    def no_export(*args: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_module, "_export", no_export)
    again = OnnxEmbedder(cache_dir=onnx_cache)
    assert again.embed(["I like jasmine tea"]).shape == (1, 384)
    assert again.onnx_path == path and path.stat().st_mtime_ns == mtime
    assert list(onnx_cache.glob("*.onnx")) == [path]


@pytest.mark.slow
def test_concurrent_first_uses_make_one_valid_model(
    tmp_path: Path, onnx_embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the in-process lock, only the lock file and the atomic rename keep two first
    # uses apart: what two processes would rely on.
    monkeypatch.setattr(onnx_module, "_EXPORT_LOCK", contextlib.nullcontext())
    exports: list[Path] = []
    real_export = onnx_module._export

    def counting_export(spec, target, tokenizer) -> None:  # type: ignore[no-untyped-def]
        exports.append(target)
        real_export(spec, target, tokenizer)

    monkeypatch.setattr(onnx_module, "_export", counting_export)
    models = [OnnxEmbedder(cache_dir=tmp_path), OnnxEmbedder(cache_dir=tmp_path)]
    barrier = threading.Barrier(2)
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def first_use(i: int) -> None:
        barrier.wait()
        try:
            results[i] = models[i].embed(TEXTS[:12])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=first_use, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert len(exports) == 1
    assert models[0].onnx_path == models[1].onnx_path
    assert [p.name for p in tmp_path.glob("*.onnx")] == [models[0].onnx_path.name]  # type: ignore[union-attr]
    assert not list(tmp_path.glob("*.tmp"))
    reference = onnx_embedder.embed(TEXTS[:12])
    for vectors in results.values():
        assert cosines(vectors, reference).min() >= 0.9999


def test_a_database_written_with_torch_is_searched_with_onnx(
    tmp_path: Path, embedder: LocalEmbedder, onnx_embedder: OnnxEmbedder
) -> None:
    path = tmp_path / "omoide.db"
    facts = ["I like jasmine tea", "My sister lives in Osaka", "I am learning to paint lakes"]
    with Memory(path, embedder=embedder, workers=0) as memory:
        for fact in facts:
            memory.add(fact, user_id="alice")
        before = memory.search("What does the user drink?", user_id="alice", recipe="vector")
    # No `omoide reindex`: the names match, so the store accepts the other runtime.
    with Memory(path, embedder=onnx_embedder, workers=0) as memory:
        after = memory.search("What does the user drink?", user_id="alice", recipe="vector")
        memory.add("I drink oolong on Sundays", user_id="alice")
        mixed = memory.search("Which tea on Sundays?", user_id="alice", recipe="vector")
    assert not after.degraded and not after.warnings
    assert [h.memory.text for h in after.hits] == [h.memory.text for h in before.hits]
    assert after.hits[0].memory.text == "I like jasmine tea"
    for b, a in zip(before.hits, after.hits, strict=True):
        assert a.score == pytest.approx(b.score, abs=1e-3)
    assert mixed.hits[0].memory.text == "I drink oolong on Sundays"


def test_a_missing_export_dependency_says_how_to_fix_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError
    with pytest.raises(EmbedderError) as info:
        OnnxEmbedder(cache_dir=tmp_path).embed(["x"])
    assert not info.value.retryable
    assert (
        "pip install" in info.value.message and "OMOIDE_EMBED_RUNTIME=torch" in info.value.message
    )
    assert not list(tmp_path.glob("*.onnx")) and not list(tmp_path.glob("*.tmp"))


def test_settings_choose_the_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMOIDE_EMBED_RUNTIME", raising=False)
    new_store = build_embedder(Settings(data_dir=tmp_path))  # auto, no vectors yet: int8
    assert isinstance(new_store, OnnxEmbedder) and new_store.int8
    assert new_store.cache_dir == tmp_path / "models" and new_store.threads == 2
    float_store = build_embedder(Settings(data_dir=tmp_path), "sentence-transformers/x")
    assert isinstance(float_store, OnnxEmbedder) and not float_store.int8
    monkeypatch.setenv("OMOIDE_EMBED_RUNTIME", "onnx")
    chosen = build_embedder(Settings(data_dir=tmp_path))
    assert isinstance(chosen, OnnxEmbedder) and not chosen.int8
    monkeypatch.setenv("OMOIDE_EMBED_RUNTIME", "torch")
    assert isinstance(build_embedder(Settings(data_dir=tmp_path)), LocalEmbedder)
    assert not (tmp_path / "models").exists()  # nothing is loaded before the first embed


def _locomo_turns() -> list[str]:
    """Every turn of the LoCoMo dev conversations, or a visible skip where they are absent."""
    here = Path(__file__).resolve().parents[1]
    places = [os.environ.get("OMOIDE_LOCOMO_DEV", ""), here.parent / "shared/datasets/locomo-dev"]
    places.append("/work/shared/datasets/locomo-dev")
    found = next((Path(p) for p in places if p and (Path(p) / "26.json").is_file()), None)
    if found is None:
        pytest.skip("LoCoMo dev set not found (set OMOIDE_LOCOMO_DEV to its directory)")
    turns: list[str] = []
    for file in sorted(found.glob("*.json")):
        for key, value in json.loads(file.read_text()).items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [turn["text"] for turn in value]
    return turns


@pytest.mark.slow
def test_every_locomo_turn_gets_sentence_transformers_vector(
    onnx_embedder: OnnxEmbedder, embedder: LocalEmbedder
) -> None:
    # The promise behind the shared name: a database embedded through torch (or by the torch
    # export of earlier versions) is searched by the graph built without torch, no reindex.
    turns = _locomo_turns()
    assert len(turns) > 700
    assert cosines(onnx_embedder.embed(turns), embedder.embed(turns)).min() >= 0.9999


def test_the_model_is_built_without_torch_and_says_so(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    # torch made unimportable: any import of it during the build or the embed would fail.
    script = (
        "import json, logging, sys\n"
        "sys.modules['torch'] = None\n"
        "logging.basicConfig(level=logging.INFO, stream=sys.stderr)\n"
        "from omoide.embed.onnx import OnnxEmbedder\n"
        f"model = OnnxEmbedder(cache_dir={str(tmp_path)!r})\n"
        f"print(json.dumps(model.embed({TEXTS[8:14]!r}).tolist()))\n"
        "print(json.dumps([m for m, mod in sys.modules.items() if mod is not None and "
        "m.split('.')[0] in ('torch', 'transformers', 'sentence_transformers')]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    vectors, imported = (json.loads(line) for line in done.stdout.splitlines())
    assert imported == []
    assert cosines(np.array(vectors), onnx_embedder.embed(TEXTS[8:14])).min() >= 0.9999
    assert "building the ONNX model of all-MiniLM-L6-v2 from its weights" in done.stderr
    assert "built all-MiniLM-L6-v2-" in done.stderr
    assert len(list(tmp_path.glob("*.onnx"))) == 1


def test_another_architecture_is_refused_with_the_way_out(tmp_path: Path) -> None:
    from omoide.embed.onnx_build import build_graph

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "mpnet"}))
    with pytest.raises(EmbedderError) as info:
        build_graph(tmp_path, tmp_path / "model.safetensors", tmp_path / "x.onnx")
    assert not info.value.retryable and "OMOIDE_EMBED_RUNTIME=torch" in info.value.message
    assert not (tmp_path / "x.onnx").exists()
