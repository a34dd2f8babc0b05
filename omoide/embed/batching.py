"""Coalescing concurrent embedding calls into one batch, a search's query ahead of bulk work.

One encode of 32 texts costs little more than one encode of one text on a CPU, so when many
threads embed at once (a server with concurrent adds and searches) the calls that arrive while
the model is busy are queued and run together as the next batch. Whoever finds the model idle
runs the queue (one batch) and wakes the others; nobody waits for more than the batch in
progress plus its own.

Two lanes: ``embed(texts, urgent=True)`` is a search's query, the rest (writes, jobs, builds)
is bulk. An urgent call never joins a bulk batch (it would wait for all of it) and is taken
before any bulk call waiting. With ``concurrent=True`` (the encoder may run on two threads at
once, as an onnxruntime session may) the urgent lane does not even wait for the bulk batch in
progress: it runs beside it. ``queries_arriving()`` tells a bulk encoder that urgent calls
came lately, so it can take fewer cores and leave one to them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future

import numpy as np

# An urgent call in the last this many seconds: queries are arriving.
QUERIES_ARRIVING_S = 2.0

_Item = tuple[list[str], Future[np.ndarray]]
URGENT, BULK = True, False


class Coalescer:
    def __init__(
        self,
        encode: Callable[[list[str]], np.ndarray],
        max_batch: int = 256,
        *,
        encode_urgent: Callable[[list[str]], np.ndarray] | None = None,
        concurrent: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._encode = {BULK: encode, URGENT: encode_urgent or encode}
        self._max_batch = max_batch
        self._concurrent = concurrent
        self._clock = clock
        self._cond = threading.Condition()
        self._pending: dict[bool, list[_Item]] = {URGENT: [], BULK: []}
        self._busy = {URGENT: False, BULK: False}
        self._last_urgent: float | None = None

    def embed(self, texts: Sequence[str], *, urgent: bool = False) -> np.ndarray:
        future: Future[np.ndarray] = Future()
        with self._cond:
            self._pending[urgent].append((list(texts), future))
            if urgent:
                self._last_urgent = self._clock()
        while not future.done():
            with self._cond:
                lane = None if future.done() else self._free_lane(urgent)
                if lane is None:
                    self._cond.wait(0.05)
                    continue
                self._busy[lane] = True
                batch = self._take(lane)
            try:
                self._run(lane, batch)
            finally:
                with self._cond:
                    self._busy[lane] = False
                    self._cond.notify_all()
        return future.result()

    def queries_arriving(self) -> bool:
        """Whether an urgent call came in the last ``QUERIES_ARRIVING_S`` seconds."""
        last = self._last_urgent
        return last is not None and self._clock() - last < QUERIES_ARRIVING_S

    @property
    def waiting(self) -> int:
        """Calls queued and not yet taken into a batch."""
        with self._cond:
            return len(self._pending[URGENT]) + len(self._pending[BULK])

    def _free_lane(self, urgent: bool) -> bool | None:
        """The lane whose next batch the caller may run now, or None: wait."""
        if self._concurrent:
            free = not self._busy[urgent] and bool(self._pending[urgent])
            return urgent if free else None
        if self._busy[URGENT] or self._busy[BULK]:
            return None
        if self._pending[URGENT]:
            return URGENT
        return BULK if self._pending[BULK] else None

    def _take(self, lane: bool) -> list[_Item]:
        pending = self._pending[lane]
        batch: list[_Item] = []
        size = 0
        while pending and (not batch or size + len(pending[0][0]) <= self._max_batch):
            item = pending.pop(0)
            batch.append(item)
            size += len(item[0])
        return batch

    def _run(self, lane: bool, batch: list[_Item]) -> None:
        texts = [t for item, _ in batch for t in item]
        try:
            vectors = self._encode[lane](texts)
        except BaseException as exc:  # each caller gets the failure of the batch it was in
            for _, future in batch:
                future.set_exception(exc)
            return
        start = 0
        for item, future in batch:
            future.set_result(vectors[start : start + len(item)])
            start += len(item)
