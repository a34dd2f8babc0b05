"""The float model's graph with int8 matrix products: ``OMOIDE_EMBED_RUNTIME=onnx-int8``.

Why: on 2 cores with AVX-512 VNNI / AMX, onnxruntime's int8 products embed ~2.3x the sentences
per second of the float graph, and a query in ~2 ms instead of ~4.5 (bench/README.md, "The
int8 runtime"). Every MatMul with a constant weight gets int8 weights, one scale per output
channel, and uint8 activations scaled per run (``quantize_dynamic``); layer norms, softmax,
GELU and the pooling stay float. The vectors are close to the float model's (cosine 0.98-1.0,
mean 0.992 over LoCoMo's turns) but not equal, so the embedder has a name of its own and a
database switches runtimes with ``omoide reindex``. CPUs without VNNI run the same int8
weights through slower kernels.

The quantised file is made once from the float graph, beside it, under the same lock-file
and rename scheme, and checked against the float model before it is used.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from omoide.embed.file_lock import file_lock
from omoide.errors import EmbedderError

log = logging.getLogger("omoide")

# Bump when the quantisation settings change: the file name changes with it.
QUANTIZE_VERSION = 1
# The least cosine to the float vectors on the check's texts. Measured 0.981 at worst over
# LoCoMo's 788 turns; a broken quantisation (per-tensor weights: 0.89) is refused.
MIN_COSINE = 0.95


def quantized_file(float_path: Path) -> Path:
    return float_path.with_name(f"{float_path.stem}-int8v{QUANTIZE_VERSION}.onnx")


def ensure_quantized(float_path: Path, worst_cosine: Callable[[Path], float]) -> Path:
    """The int8 file of ``float_path``, made now if missing; ``worst_cosine`` gives the least
    cosine of a candidate file's vectors to the float model's. Safe against concurrent uses."""
    target = quantized_file(float_path)
    if target.is_file():
        return target
    with file_lock(target.with_suffix(".lock")):
        if target.is_file():  # another thread or process finished it while we waited
            return target
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}-", suffix=".tmp")
        os.close(fd)
        log.info("quantising %s to int8, once: %s", float_path.name, target)
        started = time.perf_counter()
        try:
            _quantize(float_path, Path(tmp))
            cosine = worst_cosine(Path(tmp))
            if cosine < MIN_COSINE:
                raise EmbedderError(
                    f"the int8 model made from {float_path.name} is too far from the float one "
                    f"(cosine {cosine:.4f} < {MIN_COSINE}): set OMOIDE_EMBED_RUNTIME=onnx",
                    retryable=False,
                )
            os.chmod(tmp, 0o644)  # mkstemp makes it 0600; other users may share the cache
            os.replace(tmp, target)
            log.info("quantised %s in %.1f s", target.name, time.perf_counter() - started)
        finally:
            Path(tmp).unlink(missing_ok=True)
    return target


def _quantize(source: Path, target: Path) -> None:
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:  # the quantiser imports `onnx`, which the graph's build needs too
        raise EmbedderError(
            f"the int8 runtime needs onnx to quantise the model once ({exc}): "
            "`pip install omoide`, or set OMOIDE_EMBED_RUNTIME=onnx",
            retryable=False,
        ) from exc
    quiet = logging.getLogger()  # the quantiser logs advice through the root logger
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True)
    except Exception as exc:  # onnx and onnxruntime raise their own exception types
        raise EmbedderError(
            f"quantising {source.name} failed: {exc}; set OMOIDE_EMBED_RUNTIME=onnx",
            retryable=False,
        ) from exc
    finally:
        quiet.setLevel(level)
