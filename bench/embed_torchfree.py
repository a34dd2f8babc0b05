"""Two torch-free ways to run the bundled all-MiniLM-L6-v2, against the torch export.

- ``graph``: the ONNX graph written from the safetensors weights (omoide/embed/onnx_build.py),
  run by onnxruntime as the torch export is.
- ``numpy``: the same BERT encoder in numpy (below; one thread of BLAS).
- ``torch-export``: today's file, made once by ``torch.onnx.export`` (needs torch installed).

Prints, for each: the least cosine to the torch export over the LoCoMo dev turns, the median
time of one query and of a batch of 64 turns; rounds alternate between the runtimes.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/embed_torchfree.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file

from omoide.embed.local import _model_path
from omoide.embed.onnx import _embed_sorted, _pad, _read_model_dir, _session, _tokenizer
from omoide.embed.onnx_build import INPUTS, OPSET, OUTPUT, build_graph

LOCOMO = Path("/work/shared/datasets/locomo-dev")


def turns() -> list[str]:
    texts: list[str] = []
    for name in ("26.json", "30.json"):
        data = json.loads((LOCOMO / name).read_text())
        for key, value in data.items():
            if key.startswith("session_") and isinstance(value, list):
                texts += [turn["text"] for turn in value]
    return texts


class NumpyBert:
    """BertModel (eval) + mean pooling in numpy, float32."""

    def __init__(self, weights: Path, heads: int = 12, layers: int = 6) -> None:
        self.w = load_file(str(weights))
        self.heads, self.layers = heads, layers
        for key in list(self.w):
            if key.endswith(".weight") and self.w[key].ndim == 2 and "embeddings" not in key:
                self.w[key] = np.ascontiguousarray(self.w[key].T)

    def norm(self, x: np.ndarray, prefix: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w[prefix + ".weight"] + self.w[
            prefix + ".bias"
        ]

    def dense(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def __call__(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        from scipy.special import erf  # type: ignore[import-untyped]

        ids, mask, types = feeds["input_ids"], feeds["attention_mask"], feeds["token_type_ids"]
        b, s = ids.shape
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.token_type_embeddings.weight"][types]
            + w["embeddings.position_embeddings.weight"][:s]
        )
        x = self.norm(x, "embeddings.LayerNorm")
        bias = ((1.0 - mask) * np.finfo(np.float32).min).astype(np.float32)[:, None, None, :]
        h, d = self.heads, x.shape[-1] // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(name: str, p: str = p, x: np.ndarray = x) -> np.ndarray:
                return self.dense(x, f"{p}.attention.self.{name}").reshape(b, s, h, d)

            q, k, v = split("query"), split("key"), split("value")
            scores = np.einsum("bshd,bthd->bhst", q, k) * d**-0.5 + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = np.einsum("bhst,bthd->bshd", scores, v).reshape(b, s, h * d)
            x = self.norm(
                self.dense(ctx, f"{p}.attention.output.dense") + x,
                f"{p}.attention.output.LayerNorm",
            )
            inner = self.dense(x, f"{p}.intermediate.dense")
            inner = (0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))).astype(np.float32)
            x = self.norm(self.dense(inner, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        m = mask[..., None].astype(np.float32)
        return (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)  # type: ignore[no-any-return]


class NumpySession:
    """Enough of onnxruntime's session for ``_embed_sorted``."""

    class _Io:
        def __init__(self, name: str) -> None:
            self.name = name

    def __init__(self, model: NumpyBert) -> None:
        self.model = model

    def get_inputs(self) -> list[Any]:
        return [self._Io(n) for n in ("input_ids", "attention_mask", "token_type_ids")]

    def get_outputs(self) -> list[Any]:
        return [self._Io("sentence_embedding")]

    def run(self, _names: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        return [self.model(feeds)]


def torch_export(model_dir: Path, target: Path, tokenizer: Any) -> None:
    """What omoide did before the graph was built from the weights (up to 2026-12-06)."""
    import torch
    from sentence_transformers import SentenceTransformer

    module = SentenceTransformer(str(model_dir), device="cpu")[0]
    model = module.model if hasattr(module, "model") else module.auto_model
    model.set_attn_implementation("eager")

    class MeanPooled(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / torch.clamp(mask.sum(1), min=1e-9)

    example = _pad(tokenizer.encode_batch(["an example sentence to trace", "short"]), INPUTS)
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUTS}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation and tracer notes
        torch.onnx.export(
            MeanPooled().eval(),
            (),
            str(target),
            kwargs={k: torch.from_numpy(v) for k, v in example.items()},
            input_names=list(INPUTS),
            output_names=[OUTPUT],
            dynamic_axes={**axes, OUTPUT: {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    spec = _read_model_dir(Path(_model_path("all-MiniLM-L6-v2")))
    tokenizer = _tokenizer(spec)
    texts = turns()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        graph = Path(tmp) / "graph.onnx"
        build_graph(spec.path, spec.weights, graph)
        print(f"graph built in {time.perf_counter() - started:.1f} s")
        try:
            started = time.perf_counter()
            exported = Path(tmp) / "export.onnx"
            torch_export(spec.path, exported, tokenizer)
            print(f"torch export made in {time.perf_counter() - started:.1f} s")
        except ImportError as exc:
            print(f"no torch export ({exc}): cosines against the graph instead")
            exported = graph
        runtimes = {
            "torch-export": _session(exported, 1),
            "graph": _session(graph, 1),
            "numpy": NumpySession(NumpyBert(spec.weights)),
        }
        reference = _embed_sorted(runtimes["torch-export"], tokenizer, texts, 64)
        for name, session in runtimes.items():
            got = _embed_sorted(session, tokenizer, texts, 64)
            print(
                f"{name}: least cosine to the torch export {np.sum(got * reference, 1).min():.7f}"
            )
        query, batch = texts[:40], texts[100:164]
        times: dict[str, dict[str, list[float]]] = {n: {"query": [], "batch": []} for n in runtimes}
        for _ in range(rounds):
            for name, session in runtimes.items():
                started = time.perf_counter()
                for text in query:
                    _embed_sorted(session, tokenizer, [text], 64)
                times[name]["query"].append((time.perf_counter() - started) / len(query))
                started = time.perf_counter()
                _embed_sorted(session, tokenizer, batch, 64)
                times[name]["batch"].append(time.perf_counter() - started)
        for name, kinds in times.items():
            q, b = statistics.median(kinds["query"]), statistics.median(kinds["batch"])
            print(f"{name}: one query {q * 1000:.2f} ms, 64 turns {b * 1000:.1f} ms")


if __name__ == "__main__":
    main()
