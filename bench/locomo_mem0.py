"""bench/locomo.py's comparison with mem0: mem0_baseline.py in its own virtualenv, and the
ingest ratio timed A-B-A (omoide before and after mem0) so that load drift cancels."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from common import Conversation
from locomo import ingest, open_engine, results_table, warm_up


def run_mem0(python: str, data: Path, limit: int, threads: int) -> dict[str, Any] | None:
    """bench/mem0_baseline.py in its own virtualenv (with omoide's torch thread count); its
    JSON result, or None if it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mem0.json"
        cmd = [python, str(Path(__file__).with_name("mem0_baseline.py"))]
        cmd += ["--data", str(data), "--out", str(out), "--limit", str(limit)]
        cmd += ["--threads", str(threads)]
        print(f"running mem0 baseline: {' '.join(cmd)}", flush=True)
        proc = subprocess.run(cmd, check=False)
        if proc.returncode != 0 or not out.exists():
            print(f"mem0 baseline failed (exit {proc.returncode})")
            return None
        return json.loads(out.read_text())


def ingest_again(convs: list[Conversation], batch: int) -> dict[str, Any]:
    """omoide's ingest once more, into a throwaway store (the second A of an A-B-A timing)."""
    with tempfile.TemporaryDirectory() as tmp:
        engine, timed = open_engine(Path(tmp) / "again.db")
        warm_up(timed)
        out = ingest(engine, timed, convs, batch)
        engine.close()
    return out


def compare_mem0(payload: dict[str, Any], mem0: dict[str, Any], after: dict[str, Any]) -> None:
    """Ingest ratio with omoide timed before and after mem0 (A-B-A), so load drift cancels."""
    rate = mem0["ingest"]["items_per_s"]
    results = payload["results"]
    print("\n" + results_table({"omoide hybrid": results["hybrid"], **mem0["results"]}))
    before = payload["ingest"]
    omoide = (before["items_per_s"] + after["items_per_s"]) / 2
    cpu = (before["cpu_seconds"] + after["cpu_seconds"]) / 2
    payload["ingest_after_mem0"] = after
    payload["ingest_vs_mem0"] = {
        "omoide_items_per_s_before_after": [before["items_per_s"], after["items_per_s"]],
        "omoide_items_per_s": omoide,
        "mem0_items_per_s": rate,
        "ratio": omoide / rate,
        "ratio_cpu_time": mem0["ingest"]["cpu_seconds"] / cpu,
    }
    print(
        f"ingest (add_many per session): omoide {before['items_per_s']:.0f} / "
        f"{after['items_per_s']:.0f} items/s before / after mem0's {rate:.0f} items/s = "
        f"{omoide / rate:.2f}x (target >= 3x); by CPU time "
        f"{payload['ingest_vs_mem0']['ratio_cpu_time']:.2f}x"
    )
    if payload.get("ingest_batched"):
        batched = payload["ingest_batched"]["items_per_s"]
        payload["ingest_vs_mem0"]["ratio_batched_500"] = batched / rate
        print(f"ingest (add_many of 500): omoide {batched:.0f} items/s = {batched / rate:.2f}x")
