"""Coalescing concurrent embedding calls into one batch.

One encode of 32 texts costs little more than one encode of one text on a CPU, so when many
threads embed at once (a server with concurrent adds and searches) the calls that arrive while
the model is busy are queued and run together as the next batch. Whoever finds the model idle
runs the queue (one batch) and wakes the others; nobody waits for more than the batch in
progress plus its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future

import numpy as np


class Coalescer:
    def __init__(self, encode: Callable[[list[str]], np.ndarray], max_batch: int = 256) -> None:
        self._encode = encode
        self._max_batch = max_batch
        self._cond = threading.Condition()
        self._pending: list[tuple[list[str], Future[np.ndarray]]] = []
        self._busy = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        future: Future[np.ndarray] = Future()
        with self._cond:
            self._pending.append((list(texts), future))
        while not future.done():
            with self._cond:
                if self._busy or future.done():
                    self._cond.wait(0.05)
                    continue
                self._busy = True
                batch = self._take()
            try:
                self._run(batch)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
        return future.result()

    def _take(self) -> list[tuple[list[str], Future[np.ndarray]]]:
        batch: list[tuple[list[str], Future[np.ndarray]]] = []
        size = 0
        while self._pending and (not batch or size + len(self._pending[0][0]) <= self._max_batch):
            item = self._pending.pop(0)
            batch.append(item)
            size += len(item[0])
        return batch

    def _run(self, batch: list[tuple[list[str], Future[np.ndarray]]]) -> None:
        texts = [t for item, _ in batch for t in item]
        try:
            vectors = self._encode(texts)
        except BaseException as exc:  # each caller gets the failure of the batch it was in
            for _, future in batch:
                future.set_exception(exc)
            return
        start = 0
        for item, future in batch:
            future.set_result(vectors[start : start + len(item)])
            start += len(item)
