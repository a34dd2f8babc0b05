"""all-MiniLM-L6-v2 (or another mean-pooled BERT sentence-transformers model) through onnxruntime.

The same vectors as ``LocalEmbedder`` (cosine >= 0.9999, checked by tests/test_embed_onnx.py
where torch is installed), so the two share a ``name`` and a database embedded by one is
searched by the other without ``omoide reindex``. One query and batches run several times
faster than through torch, with a fraction of its memory and start time (bench/README.md).

On first use the ONNX graph is written once from the bundled safetensors weights
(``onnx_build.py``: no torch) to ``<cache_dir>/<model>-<hash of the weights and of the build
code>.onnx``; later processes only load that file. The build writes to a temporary file and
renames it, under a lock file, so concurrent first uses (threads or processes) end with one
valid model.

Tokenization (the fast tokenizer of the model directory), truncation at the model's
``max_seq_length``, per-batch padding of length-sorted texts, mean pooling over the attention
mask and L2 normalisation reproduce what sentence-transformers does for this model.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from omoide.embed.batching import Coalescer
from omoide.embed.file_lock import file_lock
from omoide.embed.local import DEFAULT_MODEL, _model_path
from omoide.embed.onnx_build import OPSET, OUTPUT, build_graph
from omoide.embed.onnx_quantize import ensure_quantized, quantized_file
from omoide.embed.protocol import INT8_SUFFIX, normalize
from omoide.errors import EmbedderError

log = logging.getLogger("omoide")

# Bump when the built graph changes (its nodes, opset, pooling): the file name changes with it,
# so an old file is never loaded by new code. 2 was the torch export; 3 the graph of onnx_build.
EXPORT_VERSION = 3
# Padded tokens per run: attention holds batch x heads x width^2 floats, so 64 texts of 256
# tokens take over 1 GB, which onnxruntime's arena then keeps. Measured on 2 cores (1 and 2
# threads, LoCoMo turns and 256-token texts): 512 tokens per run is also about the fastest
# (small runs stay in cache and pad less): 140 vs 62 sentences/s uncapped, 220 MB vs 1 GB RSS.
MAX_TOKENS = 512
MIN_COSINE = 0.9999  # a batch must give the vectors of its texts run alone this closely

_EXPORT_LOCK = threading.Lock()  # one build at a time in this process (each holds 90 MB)

# Texts a new graph is checked on: short, empty, unicode, and longer than max_seq_length.
_PROBES = [
    "I like jasmine tea",
    "",
    "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted. 🌈",
    "東京で寿司を食べた。Ça va très bien, merci ! Здравствуйте.",
    " ".join(f"sentence {i} about painting, hiking and a dog called Oscar." for i in range(80)),
]


@dataclass(frozen=True)
class _ModelDir:
    """What the graph and the tokenizer need from a sentence-transformers model directory."""

    path: Path
    weights: Path
    max_length: int
    do_lower_case: bool
    dim: int | None


class OnnxEmbedder:
    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        threads: int = 1,
        batch_size: int = 64,
        cache_dir: Path | str | None = None,
        *,
        int8: bool = False,
    ) -> None:
        self.model_name = model
        # The same name as LocalEmbedder: the graph gives its vectors (tests/test_embed_onnx.py).
        # int8 products (onnx_quantize.py) give close but other vectors: a name of their own.
        self.name = f"sentence-transformers/{model}" + (INT8_SUFFIX if int8 else "")
        self.int8 = int8
        self.threads = threads
        self.batch_size = batch_size
        self.max_tokens = MAX_TOKENS  # padded tokens per onnxruntime run (see MAX_TOKENS)
        self.cache_dir = Path(cache_dir if cache_dir is not None else "~/.omoide/models")
        self.onnx_path: Path | None = None  # set by the first embed
        self._session: Any = None
        self._tokenizer: Any = None
        self._spec: _ModelDir | None = None
        self._load_lock = threading.Lock()
        # A session may run on two threads at once: a search's query runs beside a write's
        # batch instead of after it (``Coalescer``'s urgent lane).
        self._batcher = Coalescer(
            self._encode_bulk, encode_urgent=self._encode_query, concurrent=True
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._batcher.embed(texts)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """A search's query: it runs beside the batch in progress, not after it."""
        return self._batcher.embed(texts, urgent=True)

    def _encode_bulk(self, texts: list[str]) -> np.ndarray:
        # While queries arrive, an int8 batch runs on one thread and leaves a core to them; its
        # vectors are the same (one run per text, ``_embed_each``).
        return self._encode(texts, 1 if self._batcher.queries_arriving() else self.threads)

    def _encode_query(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, self.threads)

    def _encode(self, texts: list[str], workers: int) -> np.ndarray:
        with self._load_lock:  # the two lanes may both get here first
            if self._session is None:
                self._load()
        assert self._spec is not None
        if not texts:
            return np.zeros((0, self._spec.dim or 0), dtype=np.float32)
        try:
            if self.int8:
                return _embed_each(self._session, self._tokenizer, texts, workers)
            return _embed_sorted(
                self._session, self._tokenizer, texts, self.batch_size, self.max_tokens
            )
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbedderError(f"embedding failed: {exc}") from exc

    def _load(self) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError as exc:
            raise EmbedderError(
                "the ONNX embedder needs onnxruntime and tokenizers: `pip install omoide`"
                ", or set OMOIDE_EMBED_RUNTIME=torch",
                retryable=False,
            ) from exc
        spec = _read_model_dir(Path(_model_path(self.model_name)))
        tokenizer = _tokenizer(spec)
        threads = 1 if self.int8 else self.threads  # int8: a thread per text (_embed_each)
        try:
            path = self._model_file(spec, tokenizer)
            session = _session(path, threads)
        except Exception:
            if not self._drop_damaged(spec):
                raise
            path = self._model_file(spec, tokenizer)  # a damaged cache file: made again, once
            try:
                session = _session(path, threads)
            except Exception as exc:
                raise EmbedderError(f"cannot load {path}: {exc}", retryable=False) from exc
        self._spec, self._tokenizer, self.onnx_path, self._session = spec, tokenizer, path, session

    def _drop_damaged(self, spec: _ModelDir) -> bool:
        """Delete the cached graphs (int8: and the float one it is quantised from) that
        onnxruntime cannot load; whether there was one."""
        graph = onnx_file(spec, self.cache_dir.expanduser(), self.model_name)
        dropped = False
        for path in (graph, quantized_file(graph)) if self.int8 else (graph,):
            try:
                if path.is_file():
                    _session(path, 1)
            except Exception:
                with contextlib.suppress(OSError):  # an unwritable cache fails after, named
                    path.unlink()
                dropped = True
        return dropped

    def _model_file(self, spec: _ModelDir, tokenizer: Any) -> Path:
        path = ensure_exported(spec, self.cache_dir.expanduser(), self.model_name, tokenizer)
        if not self.int8:
            return path
        return ensure_quantized(path, lambda candidate: _worst_cosine(candidate, path, tokenizer))


def _embed_sorted(
    session: Any, tokenizer: Any, texts: list[str], batch_size: int, max_tokens: int = MAX_TOKENS
) -> np.ndarray:
    """Longest texts first so each batch pads little (as sentence-transformers does), batches of
    at most ``batch_size`` texts and ``max_tokens`` padded tokens; the original order is restored
    by writing each batch back to its rows."""
    encodings = tokenizer.encode_batch(texts)
    lengths = [len(e.ids) for e in encodings]
    order = np.argsort([-n for n in lengths], kind="stable")
    feeds = [i.name for i in session.get_inputs()]
    out: np.ndarray | None = None
    start = 0
    while start < len(order):
        # the first row of a batch is its longest: it sets the padded width
        rows = order[start : start + max(1, min(batch_size, max_tokens // lengths[order[start]]))]
        start += len(rows)
        pooled = _pooled(session, _pad([encodings[i] for i in rows], feeds))
        if out is None:
            out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
        out[rows] = pooled
    assert out is not None
    return normalize(out)


def _embed_each(session: Any, tokenizer: Any, texts: list[str], workers: int) -> np.ndarray:
    """One onnxruntime run per text, on ``workers`` threads side by side.

    The int8 graph scales its activations per run, so in a batch a text's vector would depend
    on its batch mates and their padding (cosine down to 0.96 measured); run alone, a text
    always gets the same vector. Runs of one text pad nothing, and onnxruntime releases the GIL:
    on 2 cores, 2 threads embedded 1.3x the texts of 1 with the other core busy.
    """
    encodings = tokenizer.encode_batch(texts)
    feeds = [i.name for i in session.get_inputs()]

    def part(first: int) -> list[np.ndarray]:
        return [
            _pooled(session, _pad([encodings[i]], feeds))[0]
            for i in range(first, len(texts), workers)
        ]

    if workers <= 1 or len(texts) == 1:
        return normalize(np.stack(part(0)))
    with ThreadPoolExecutor(min(workers, len(texts))) as pool:
        parts = list(pool.map(part, range(min(workers, len(texts)))))
    out = np.empty((len(texts), parts[0][0].shape[0]), dtype=np.float32)
    for first, vectors in enumerate(parts):
        out[first :: len(parts)] = vectors
    return normalize(out)


def _pooled(session: Any, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """Sentence vectors: our export pools inside the graph; a graph that returns token states
    (the int8 model of ``onnx_int8.py``) is mean-pooled here over the attention mask."""
    names = [o.name for o in session.get_outputs()]
    if OUTPUT in names:
        pooled: np.ndarray = session.run([OUTPUT], feeds)[0]
        return pooled
    hidden = session.run([names[0]], feeds)[0]
    mask = feeds["attention_mask"][..., None].astype(np.float32)
    mean: np.ndarray = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
    return mean


def _pad(encodings: list[Any], feeds: Sequence[str]) -> dict[str, np.ndarray]:
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)  # pad id 0, as the tokenizer pads
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, e in enumerate(encodings):
        n = len(e.ids)
        ids[row, :n] = e.ids
        mask[row, :n] = e.attention_mask
        types[row, :n] = e.type_ids
    arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    return {name: arrays[name] for name in feeds}


# the model directory ------------------------------------------------------------------------
def _read_model_dir(path: Path) -> _ModelDir:
    if not path.is_dir():
        raise EmbedderError(
            f"{path} is not a local model directory (the ONNX runtime downloads nothing)",
            retryable=False,
        )

    def read(name: str) -> Any:
        file = path / name
        return json.loads(file.read_text()) if file.is_file() else {}

    modules = read("modules.json") or []
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    pooling_dir = next(
        (m.get("path") for m in modules if m.get("type", "").endswith("Pooling")), ""
    )
    pooling = read(f"{pooling_dir}/config.json") if pooling_dir else {}
    modes = {k: bool(v) for k, v in pooling.items() if k.startswith("pooling_mode")}
    mean_only = bool(modes) and all(
        v == (k == "pooling_mode_mean_tokens") for k, v in modes.items()
    )
    if kinds[:2] != ["Transformer", "Pooling"] or set(kinds[2:]) - {"Normalize"} or not mean_only:
        raise EmbedderError(
            f"the ONNX runtime supports mean-pooled sentence-transformers models only; {path} has "
            f"modules {kinds or 'unknown'}: set OMOIDE_EMBED_RUNTIME=torch",
            retryable=False,
        )
    weights = [path / f for f in ("model.safetensors", "pytorch_model.bin") if (path / f).is_file()]
    if not weights or not (path / "tokenizer.json").is_file():
        raise EmbedderError(
            f"{path} has no model.safetensors/pytorch_model.bin or no tokenizer.json: "
            "set OMOIDE_EMBED_RUNTIME=torch",
            retryable=False,
        )
    st_config = read("sentence_bert_config.json")
    max_length = st_config.get("max_seq_length")
    if not max_length:  # sentence-transformers: the tokenizer's limit, capped by the model's
        limits = [
            read("tokenizer_config.json").get("model_max_length"),
            read("config.json").get("max_position_embeddings"),
        ]
        max_length = min([int(v) for v in limits if v and int(v) > 0] or [512])
    return _ModelDir(
        path=path,
        weights=weights[0],
        max_length=int(max_length),
        do_lower_case=bool(st_config.get("do_lower_case")),
        dim=pooling.get("word_embedding_dimension"),
    )


def _tokenizer(spec: _ModelDir) -> Any:
    from tokenizers import Tokenizer, normalizers

    tokenizer = Tokenizer.from_file(str(spec.path / "tokenizer.json"))
    # tokenizer.json of this model pads and truncates to 128: sentence-transformers does neither.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=spec.max_length)
    lowercases = tokenizer.normalizer is not None and tokenizer.normalizer.normalize_str("A") == "a"
    if spec.do_lower_case and not lowercases:  # as sentence-transformers does for this flag
        current = [tokenizer.normalizer] if tokenizer.normalizer is not None else []
        tokenizer.normalizer = normalizers.Sequence([normalizers.Lowercase(), *current])
    return tokenizer


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle pool threads would spin after each run and starve the rest of the process (the
    # keyword search beside a query), as torch's OpenMP threads did (see local.py).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


# the graph, built once --------------------------------------------------------------------
def onnx_file(spec: _ModelDir, cache_dir: Path, model: str) -> Path:
    """``<cache_dir>/<model>-<hash>.onnx``; the hash covers the weights and the export code."""
    key = f"{_weights_digest(spec.weights, cache_dir)}:{EXPORT_VERSION}:{OPSET}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(model).name or "model")
    return cache_dir / f"{stem}-{digest}.onnx"


def ensure_exported(spec: _ModelDir, cache_dir: Path, model: str, tokenizer: Any) -> Path:
    """The cached graph, built now if missing. Safe against concurrent first uses."""
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmbedderError(f"cannot create {cache_dir}: {exc}", retryable=False) from exc
    target = onnx_file(spec, cache_dir, model)
    if target.is_file():
        return target
    with _EXPORT_LOCK, file_lock(target.with_suffix(".lock")):
        if target.is_file():  # another thread or process finished it while we waited
            return target
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".{target.stem}-", suffix=".tmp")
        os.close(fd)
        # the first use waits for this (seconds): say why, and where the file goes
        log.info("building the ONNX model of %s from its weights, once: %s", model, target)
        started = time.perf_counter()
        try:
            _export(spec, Path(tmp), tokenizer)
            os.chmod(tmp, 0o644)  # mkstemp makes it 0600; other users may share the cache
            os.replace(tmp, target)
            log.info("built %s in %.1f s", target.name, time.perf_counter() - started)
        finally:
            Path(tmp).unlink(missing_ok=True)
    return target


def _export(spec: _ModelDir, target: Path, tokenizer: Any) -> None:
    try:
        build_graph(spec.path, spec.weights, target)
    except EmbedderError:
        raise
    except Exception as exc:  # onnx and safetensors raise their own exception types
        raise EmbedderError(
            f"building the ONNX model of {spec.path.name} failed: {exc}; "
            "set OMOIDE_EMBED_RUNTIME=torch",
            retryable=False,
        ) from exc
    _check_export(target, tokenizer)


def _check_export(path: Path, tokenizer: Any) -> None:
    """Refuse a graph whose vectors depend on their batch (a broken attention mask): what the
    padding of batches of 2, of 8 and of one wide batch give must equal each text alone."""
    session = _session(path, 1)
    alone = _embed_each(session, tokenizer, _PROBES, 1)
    got = np.concatenate(
        [
            _embed_sorted(session, tokenizer, _PROBES, 2),
            _embed_sorted(session, tokenizer, _PROBES, 8),
            _embed_sorted(session, tokenizer, _PROBES, 8, max_tokens=1 << 20),  # wide padding
        ]
    )
    cosine = float(np.min(np.sum(got * np.concatenate([alone] * 3), axis=1)))
    if not np.isfinite(got).all() or cosine < MIN_COSINE:
        raise EmbedderError(
            f"the ONNX model {path.stem} gives other vectors in a batch than alone (cosine "
            f"{cosine:.5f} < {MIN_COSINE}): set OMOIDE_EMBED_RUNTIME=torch",
            retryable=False,
        )


def _worst_cosine(candidate: Path, reference: Path, tokenizer: Any) -> float:
    """The least cosine between two graphs' vectors of the probe texts."""
    got = _embed_each(_session(candidate, 1), tokenizer, _PROBES, 1)
    expected = _embed_sorted(_session(reference, 1), tokenizer, _PROBES, 8)
    return float(np.min(np.sum(got * expected, axis=1)))


# the weights' digest, memoised by (size, mtime) so each start does not re-read 90 MB ---------
def _weights_digest(weights: Path, cache_dir: Path) -> str:
    stat = weights.stat()
    resolved = str(weights.resolve())
    stamp = {"path": resolved, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    memo = cache_dir / f".{hashlib.sha256(resolved.encode()).hexdigest()[:16]}.digest.json"
    with contextlib.suppress(OSError, ValueError):
        saved = json.loads(memo.read_text())
        if {k: saved.get(k) for k in stamp} == stamp and isinstance(saved.get("sha256"), str):
            return str(saved["sha256"])
    with open(weights, "rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    with contextlib.suppress(OSError):
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            json.dump({**stamp, "sha256": digest}, handle)
        os.replace(tmp, memo)
    return digest
