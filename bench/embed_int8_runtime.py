"""The int8 runtime (``OMOIDE_EMBED_RUNTIME=onnx-int8``) against the float export, in one process.

    python bench/embed_int8_runtime.py [--rounds 3] [--variants]

On the 788 LoCoMo dev turns, in calls of 256 as an importer sends them, alternating round by
round: sentences per second of the float graph (batches, as ``OnnxEmbedder`` runs it) and of
the int8 graph run one text at a time on 1 and 2 threads (as the int8 runtime runs it) and in
batches; the cosine of each int8 vector to the float one; and how far a text's int8 vector
moves when it is embedded inside a batch instead of alone (the reason the runtime runs texts
one by one). ``--variants`` also quantises versions that keep some products float (the
attention output, the feed-forward output, the first or the last layer), to see whether any
comes closer to the float vectors for its speed. Recall is measured through the product:
``OMOIDE_EMBED_RUNTIME=onnx-int8 python bench/locomo.py --recipes hybrid``.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import DEFAULT_DATA, load_locomo, machine_note, table

from omoide.config import Settings
from omoide.embed.onnx import OnnxEmbedder, _embed_each, _embed_sorted, _session
from omoide.embed.onnx_quantize import quantized_file

LAYERS = range(6)
KEPT_FLOAT = {
    "attention output float": [
        f"/model/encoder/layer.{i}/attention/output/dense/MatMul" for i in LAYERS
    ],
    "feed-forward output float": [f"/model/encoder/layer.{i}/output/dense/MatMul" for i in LAYERS],
    "first layer float": [
        f"/model/encoder/layer.0/{p}/MatMul"
        for p in (
            "attention/self/query",
            "attention/self/key",
            "attention/self/value",
            "attention/output/dense",
            "intermediate/dense",
            "output/dense",
        )
    ],
}


def variant(source: Path, target: Path, excluded: list[str]) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)
    quantize_dynamic(
        str(source),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,
        nodes_to_exclude=excluded,
    )
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", action="store_true")
    args = parser.parse_args()
    texts = [t.text for c in load_locomo(DEFAULT_DATA) for t in c.turns]
    models = Settings().models_dir
    float_model = OnnxEmbedder(cache_dir=models)
    int8_model = OnnxEmbedder(cache_dir=models, int8=True)
    float_model.embed(["load"]), int8_model.embed(["load"])  # export and quantise if missing
    float_path = float_model.onnx_path
    assert float_path is not None
    tokenizer = float_model._tokenizer
    int8_path = quantized_file(float_path)
    graphs: dict[str, Path] = {"int8": int8_path}
    with tempfile.TemporaryDirectory() as tmp:
        if args.variants:
            for name, excluded in KEPT_FLOAT.items():
                graphs[name] = variant(float_path, Path(tmp) / f"{len(graphs)}.onnx", excluded)
        runs: dict[str, Any] = {
            "float, batches, 2 threads": (_session(float_path, 2), "batch", 1),
            "float, batches, 1 thread": (_session(float_path, 1), "batch", 1),
        }
        for name, path in graphs.items():
            one = _session(path, 1)
            runs[f"{name}, one text per run, 2 threads"] = (one, "each", 2)
            runs[f"{name}, one text per run, 1 thread"] = (one, "each", 1)
        runs["int8, batches, 2 threads"] = (_session(int8_path, 2), "batch", 1)
        rates: dict[str, list[float]] = {name: [] for name in runs}
        vectors: dict[str, np.ndarray] = {}
        for _ in range(args.rounds):
            for name, (session, how, workers) in runs.items():
                start = time.perf_counter()
                parts = [
                    _embed_sorted(session, tokenizer, texts[i : i + 256], 64)
                    if how == "batch"
                    else _embed_each(session, tokenizer, texts[i : i + 256], workers)
                    for i in range(0, len(texts), 256)
                ]
                rates[name].append(len(texts) / (time.perf_counter() - start))
                vectors[name] = np.concatenate(parts)
    reference = vectors["float, batches, 2 threads"]
    base = float(np.median(rates["float, batches, 2 threads"]))
    rows = []
    for name in runs:
        cos = np.sum(vectors[name] * reference, axis=1)
        rows.append(
            (
                name,
                f"{np.median(rates[name]):.0f}",
                f"{np.median(rates[name]) / base:.2f}",
                f"{cos.min():.4f}",
                f"{np.percentile(cos, 1):.4f}",
                f"{cos.mean():.4f}",
            )
        )
    batched = np.sum(
        vectors["int8, batches, 2 threads"] * vectors["int8, one text per run, 1 thread"], axis=1
    )
    print(
        f"{len(texts)} LoCoMo turns, calls of 256, {args.rounds} rounds;"
        f" load {machine_note()['loadavg_at_start']}"
    )
    print(
        table(
            ["graph, how", "sentences/s", "vs float 2 threads", "cos min", "cos p1", "cos mean"],
            rows,
        )
    )
    print(
        f"int8 in batches vs the same text alone: cosine min {batched.min():.4f}, "
        f"mean {batched.mean():.4f}"
    )


if __name__ == "__main__":
    main()
