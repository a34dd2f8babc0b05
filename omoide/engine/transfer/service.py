"""``TransferService``: a store's tenants to a JSONL file and back (``omoide export/import``).

The file is one JSON object a line: a header (format, version, the embedding model signature
and the tenant selection), then the store's records (``omoide.store.ports.transfer``), each
with its ``kind``. Keys are written sorted and without spaces, so two exports of equal data are
equal files whatever backend wrote them (PostgreSQL's jsonb reorders keys). Both directions
stream: the export writes batches as the store yields them, the import reads a line at a time
and writes a batch per transaction, so neither holds more than a batch in memory.

An import refuses a file whose vectors come from another embedding model than the store's
(or, for a store without vectors yet, the configured embedder's): mixing vector spaces makes
search silently wrong. With ``reembed`` the vectors are dropped and ``embed`` jobs queued for
what had them, in the transaction that writes the rows.

With an encryption key (``OMOIDE_ENCRYPTION_KEY``) exports are written encrypted
(``omoide.engine.transfer.sealed``) unless ``plain`` is asked for; an import reads either kind.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from omoide.engine.shared.embedding import META_DIM, META_MODEL, Embedding
from omoide.engine.shared.job_signal import JobSignal
from omoide.engine.transfer import sealed
from omoide.engine.transfer.records import check_record
from omoide.errors import Conflict, InvalidInput
from omoide.jobs.kinds import EMBED, EMBED_ENTITIES, EmbedEntitiesPayload, EmbedPayload
from omoide.jobs.queue import enqueue
from omoide.store import files
from omoide.store.ports.admin import AdminReads
from omoide.store.ports.transfer import ADDED_IN, RECORD_KINDS
from omoide.store.protocol import Transactions, Tx
from omoide.types import Scope

FORMAT = "omoide-export"
# 2 added the schedule and scope_config kinds (``ADDED_IN``). An export is written in the
# newest version, so an omoide that reads only older ones refuses it at the header, before
# writing anything, rather than failing at its first unknown kind midway through the import.
VERSION = 2
READS = frozenset({1, 2})
BATCH = 500
Progress = Callable[[int, int | None], None]
Record = dict[str, Any]


@dataclass
class TransferReport:
    """What an export wrote or an import changed, per record kind."""

    records: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    embed_jobs: int = 0

    @property
    def total(self) -> int:
        return sum(self.records.values())


def _lines(source: IO[str]) -> Iterator[str]:
    """``source``'s lines; bytes that are not UTF-8 are ``InvalidInput``, not a decode error."""
    number = 1
    try:
        for number, text in enumerate(source, start=2):  # noqa: B007  # read in the except
            yield text
    except UnicodeDecodeError:
        raise InvalidInput(f"after line {number}: not UTF-8 text (a damaged file?)") from None


def _line(data: Record) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


class TransferService:
    def __init__(
        self,
        admin_reads: AdminReads,
        transactions: Transactions,
        embedding: Embedding,
        signal: JobSignal,
        *,
        batch: int = BATCH,
        key: str | None = None,
    ) -> None:
        self._admin_reads = admin_reads
        self._transactions = transactions
        self._embedding = embedding
        self._signal = signal
        self._batch = batch
        self._key = key

    def export(
        self,
        dest: Path,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        progress: Progress | None = None,
        plain: bool = False,
    ) -> TransferReport:
        """Write the selected tenants (``None``: all users / all scopes) to ``dest``, a new
        file only its owner can read, encrypted when the store has a key unless ``plain``.
        ``InvalidInput`` if ``dest`` exists or ``scope_id`` is given without ``user_id``."""
        if scope_id is not None and user_id is None:
            raise InvalidInput("--scope needs --user: a scope id belongs to a user")
        dest = Path(dest).expanduser()
        if dest.exists():
            raise InvalidInput(f"{dest} already exists; choose a new path")
        # Written beside the destination and renamed when complete: a failed export leaves
        # no file that looks like a whole one.
        partial = dest.with_name(dest.name + ".partial")
        files.create_new_private(partial)
        try:
            with self._open_output(partial, plain) as out:
                report = self._write_records(out, user_id, scope_id, progress)
            files.commit_file(partial, dest)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        return report

    def _open_output(self, path: Path, plain: bool) -> IO[str]:
        if self._key is None or plain:
            return path.open("w", encoding="utf-8")
        return sealed.open_sealed_writer(path, self._key)

    def _open_input(self, path: Path) -> IO[str]:
        if sealed.is_sealed(path):
            return sealed.open_sealed_reader(path, self._key)
        return path.open("r", encoding="utf-8")

    def _write_records(
        self, out: IO[str], user_id: str | None, scope_id: str | None, progress: Progress | None
    ) -> TransferReport:
        report = TransferReport()
        out.write(_line(self._header(user_id, scope_id)))
        for kind, records in self._admin_reads.export_records(user_id, scope_id, self._batch):
            for record in records:
                out.write(_line({"kind": kind, **record}))
            report.records[kind] = report.records.get(kind, 0) + len(records)
            if progress is not None:
                progress(report.total, None)
        return report

    def import_(
        self, source: Path, *, reembed: bool = False, progress: Progress | None = None
    ) -> TransferReport:
        """Write the file's records into this store, skipping what it holds already (so a
        second import changes nothing). ``Conflict`` on an embedding model mismatch unless
        ``reembed``; ``InvalidInput`` for a file that is not an export of this format."""
        source = Path(source).expanduser()
        total = source.stat().st_size
        report = TransferReport()
        with self._open_input(source) as lines:
            header = self._read_header(lines)
            signature = self._check_model(header, reembed)
            embedding = header.get("embedding")
            dim = None if reembed or not isinstance(embedding, dict) else embedding.get("dim")
            batches = self._batches(lines, int(header["version"]), dim)
            for kind, records, consumed in batches:
                with self._transactions.transaction() as tx:
                    if signature is not None:
                        self._adopt(tx, signature)
                        signature = None
                    written = self._write(tx, kind, records, reembed, report)
                report.records[kind] = report.records.get(kind, 0) + written
                report.skipped[kind] = report.skipped.get(kind, 0) + len(records) - written
                if progress is not None:
                    progress(min(consumed, total), total)
        if report.embed_jobs:
            self._signal.wake()
        return report

    def _header(self, user_id: str | None, scope_id: str | None) -> Record:
        model = self._admin_reads.get_meta(META_MODEL)
        dim = self._admin_reads.get_meta(META_DIM)
        embedding = None if model is None else {"model": model, "dim": int(dim or 0)}
        return {
            "kind": "header",
            "format": FORMAT,
            "version": VERSION,
            "embedding": embedding,
            "tenant": {"user_id": user_id, "scope_id": scope_id},
        }

    @staticmethod
    def _read_header(lines: IO[str]) -> Record:
        try:
            header = json.loads(lines.readline())
        except UnicodeDecodeError:
            raise InvalidInput("not an omoide export: the file is not UTF-8 text") from None
        except json.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise InvalidInput("not an omoide export: the first line is no omoide-export header")
        if header.get("version") not in READS:
            raise InvalidInput(
                f"export format version {header.get('version')!r}; this omoide reads"
                f" {', '.join(map(str, sorted(READS)))}"
            )
        return header

    def _check_model(self, header: Record, reembed: bool) -> Record | None:
        """The file's signature when the store should adopt it; raise on a mismatch."""
        theirs = header.get("embedding")
        if theirs is None or reembed:
            return None
        ours = self._admin_reads.get_meta(META_MODEL)
        ours_dim = self._admin_reads.get_meta(META_DIM)
        if ours is None:
            if theirs["model"] != self._embedding.name:
                self._mismatch(theirs, f"the configured embedder {self._embedding.name}")
            return dict(theirs)
        if (ours, int(ours_dim or 0)) != (theirs["model"], theirs["dim"]):
            self._mismatch(theirs, f"this store's {ours} ({ours_dim}-d)")
        return None

    @staticmethod
    def _mismatch(theirs: Record, ours: str) -> None:
        raise Conflict(
            f"the export's vectors come from {theirs['model']} ({theirs['dim']}-d), not {ours};"
            " import with --reembed to drop them and re-embed",
            mismatch=True,
        )

    @staticmethod
    def _adopt(tx: Tx, signature: Record) -> None:
        """The imported vectors make the file's embedder this store's (as a first embed does)."""
        tx.admin.set_meta(META_MODEL, str(signature["model"]))
        tx.admin.set_meta(META_DIM, str(signature["dim"]))

    def _batches(
        self, lines: IO[str], version: int, dim: int | None
    ) -> Iterator[tuple[str, list[Record], int]]:
        """Consecutive records of one kind, up to a batch at a time, in file order, with how
        much of the file (characters) is read; a kind newer than the file's version, or a
        record whose fields hold values of the wrong type, is refused."""
        kind, consumed = "", 0
        batch: list[Record] = []
        for number, text in enumerate(_lines(lines), start=2):
            consumed += len(text)
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"line {number}: not an export record ({exc})") from None
            except RecursionError:
                raise InvalidInput(
                    f"line {number}: not an export record (nested too deeply)"
                ) from None
            if not isinstance(record, dict) or "kind" not in record:
                raise InvalidInput(f"line {number}: not an export record (no kind)")
            this = record.pop("kind")
            if not isinstance(this, str) or this not in RECORD_KINDS:
                raise InvalidInput(f"line {number}: unknown record kind {this!r}")
            if ADDED_IN.get(this, 1) > version:
                raise InvalidInput(f"line {number}: no {this} records in format version {version}")
            check_record(this, record, number, dim if isinstance(dim, int) else None)
            if batch and (this != kind or len(batch) >= self._batch):
                yield kind, batch, consumed
                batch = []
            kind = this
            batch.append(record)
        if batch:
            yield kind, batch, consumed

    def _write(
        self, tx: Tx, kind: str, records: list[Record], reembed: bool, report: TransferReport
    ) -> int:
        """Import one batch; with ``reembed``, queue embed jobs for what had vectors."""
        had_vector = [r.get("vector") is not None for r in records]
        if reembed and kind in ("memory", "entity"):
            records = [{**r, "vector": None} for r in records]
        written = tx.admin.import_records(kind, records)
        if reembed and kind in ("memory", "entity"):
            by_tenant: dict[tuple[str, str], list[str]] = {}
            for position in written:
                if had_vector[position]:
                    r = records[position]
                    by_tenant.setdefault((r["user_id"], r["scope_id"]), []).append(r["id"])
            for (user_id, scope_id), ids in by_tenant.items():
                scope = Scope(user_id=user_id, scope_id=scope_id)
                if kind == "memory":
                    enqueue(tx.jobs, scope, EMBED, EmbedPayload(memory_ids=ids))
                else:
                    enqueue(tx.jobs, scope, EMBED_ENTITIES, EmbedEntitiesPayload(entity_ids=ids))
                report.embed_jobs += 1
        return len(written)
