"""Can the bundled model rank fact-shaped tenants better with the same vectors, or with cheap
extra ones? Plain cosine against four variants, hit@3 per tenant and over all the tenants'
answerable questions, each with a 95% paired bootstrap interval against cosine:

* ``flip``: the question also embedded with "the user" read as "I" / "my", the better cosine
  kept (agents ask in the third person about facts written in the first);
* ``centred``: each memory's vector minus its tenant's mean, renormalised;
* ``maxsim``: the cosine plus 0.3 of a late-interaction score (each question token's best
  cosine among the memory's token states, MiniLM's own contextual states), both standardised
  over the tenant (the token states of the prebuilt int8 graph, ``onnx_int8.py``);
* ``sentence``: a memory of several sentences also embedded sentence by sentence, the better
  of whole and best sentence kept (half each).

The int8 graph a new store uses; no store, no search: vectors only (the default recipe ranks
these tenants as cosine does, bench/README.md).

    PYTHONPATH=. python bench/fact_variants.py [--data bench/data/facts ...]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from omoide.embed.onnx import OnnxEmbedder, _pad
from omoide.embed.onnx_int8 import Int8Embedder

DATA = Path(__file__).resolve().parent / "data"
FOLDERS = ("facts", "facts_more", "facts_heldout", "facts_heldout2")
SUBJECT = [
    (r"\bdoes the user\b", "do I"),
    (r"\bis the user\b", "am I"),
    (r"\bhas the user\b", "have I"),
    (r"\bwas the user\b", "was I"),
    (r"\b(the )?user's\b", "my"),
    (r"\bthe user\b", "I"),
]
Matrix = np.ndarray


def unit(m: Matrix) -> Matrix:
    return np.asarray(m / np.linalg.norm(m, axis=-1, keepdims=True), dtype=np.float32)


class Vectors:
    def __init__(self) -> None:
        self.embedder = OnnxEmbedder(threads=2, int8=True)
        self.embedder.embed(["load"])
        # our export pools inside its graph; the prebuilt int8 graph returns token states
        self.states = Int8Embedder()
        self.states.embed(["load"])

    def pooled(self, texts: list[str]) -> Matrix:
        return unit(np.asarray(self.embedder.embed(texts), dtype=np.float32))

    def tokens(self, text: str) -> Matrix:
        """The text's token states (without [CLS] and [SEP]), each of unit length."""
        session, tokenizer = self.states._session, self.states._tokenizer
        encoding = tokenizer.encode(text)
        feeds = _pad([encoding], [i.name for i in session.get_inputs()])
        states = session.run([session.get_outputs()[0].name], feeds)[0][0]
        keep = [i for i, t in enumerate(encoding.tokens) if t not in ("[CLS]", "[SEP]")]
        return unit(states[keep])


def flip(question: str) -> str:
    for pattern, repl in SUBJECT:
        question = re.sub(pattern, repl, question, flags=re.I)
    return question


def sentences(text: str) -> list[str]:
    parts = [s.strip() for s in re.split(r"(?<=[.!?;])\s+", text) if len(s.strip()) > 3]
    return parts if len(parts) > 1 else []


def z(v: Matrix) -> Matrix:
    return np.asarray((v - v.mean()) / (v.std() + 1e-9))


def tenant_scores(vec: Vectors, data: dict[str, Any]) -> tuple[list[set[int]], dict[str, Matrix]]:
    facts = [f["text"] for f in data["facts"]]
    ids = [f["id"] for f in data["facts"]]
    same: dict[str, set[str]] = {}
    for f in data["facts"]:
        if dup := f.get("duplicate_of"):
            same.setdefault(dup, {dup}).add(f["id"])
            same[f["id"]] = same[dup]
    questions = [q for q in data["questions"] if q.get("answers")]
    answers = [{ids.index(b) for a in q["answers"] for b in same.get(a, {a})} for q in questions]
    texts = [q["question"] for q in questions]
    memories = vec.pooled(facts)
    asked = vec.pooled(texts)
    cos = asked @ memories.T
    centred = asked @ unit(memories - memories.mean(axis=0)).T
    flipped = np.maximum(cos, vec.pooled([flip(t) for t in texts]) @ memories.T)
    fact_tokens = [vec.tokens(f) for f in facts]
    late = np.array(
        [[float((vec.tokens(t) @ ft.T).max(axis=1).mean()) for ft in fact_tokens] for t in texts]
    )
    maxsim = np.array([z(c) + 0.3 * z(m) for c, m in zip(cos, late, strict=True)])
    parts = [sentences(f) for f in facts]
    best_part = cos.copy()
    for j, p in enumerate(parts):
        if p:
            best_part[:, j] = np.maximum(cos[:, j], (asked @ vec.pooled(p).T).max(axis=1))
    sentence = (cos + best_part) / 2
    return answers, {
        "cosine": cos,
        "flip": flipped,
        "centred": centred,
        "maxsim": maxsim,
        "sentence": sentence,
    }


def hits(answers: list[set[int]], scores: Matrix) -> list[int]:
    tops = np.argsort(-scores, axis=1)[:, :3]
    return [int(bool(a & set(top.tolist()))) for a, top in zip(answers, tops, strict=True)]


def interval(a: list[int], b: list[int], rounds: int = 2000) -> str:
    d = np.array(a, dtype=float) - np.array(b, dtype=float)
    rng = np.random.default_rng(0)
    means = d[rng.integers(0, len(d), (rounds, len(d)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return f"{d.mean():+.3f} [{low:+.3f}, {high:+.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, nargs="*", default=[DATA / f for f in FOLDERS])
    args = parser.parse_args()
    vec = Vectors()
    every: dict[str, list[int]] = {}
    for file in sorted(f for d in args.data for f in d.glob("*.json")):
        answers, variants = tenant_scores(vec, json.loads(file.read_text()))
        row = {name: hits(answers, s) for name, s in variants.items()}
        for name, h in row.items():
            every.setdefault(name, []).extend(h)
        cells = "  ".join(f"{n} {np.mean(h):.3f}" for n, h in row.items())
        tenant = f"{file.parent.name}/{file.stem}"
        print(f"{tenant:<45} {len(answers):3d}  {cells}", flush=True)
    base = every["cosine"]

    def summary(name: str) -> str:
        vs = "" if name == "cosine" else f" {interval(every[name], base)}"
        return f"{name} {np.mean(every[name]):.3f}{vs}"

    print(f"all ({len(base)} questions): " + "; ".join(summary(n) for n in every))


if __name__ == "__main__":
    main()
