"""A job kind: its name, its versioned payload model, and its retry policy.

A payload is stored as JSON and read back by whatever code runs later, so the model is the
contract between the code that enqueued the job and the code that runs it, across upgrades:
- ``v`` is the payload version; a stored row without ``v`` is version 1 (rows written before
  payloads were versioned). ``dump`` writes ``v`` only when it is not 1, and leaves out fields
  that hold their default, so old and new rows of the same job compare equal (the store's
  ``has_pending_job`` compares payloads exactly).
- A kind whose model moves to version N gives ``upgrades`` from each older version to the next;
  a row of a newer version than the code knows, or one that fails validation, raises
  ``InvalidJobPayload``, which fails that one job visibly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from omoide.jobs.errors import InvalidJobPayload
from omoide.jobs.policy import RetryPolicy
from omoide.types import Job

# An id a job works on: present and non-empty (never the string "None" of a missing key).
Id = Annotated[str, Field(min_length=1)]


class Payload(BaseModel):
    """Base of every job payload: unknown fields are rejected, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: int = 1


P = TypeVar("P", bound=Payload)

# Turns a stored payload of version n (without its "v") into one of version n + 1.
Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class JobKind(Generic[P]):
    """One kind of durable job; ``name`` is the ``kind`` column of its rows."""

    name: str
    payload: type[P]
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    upgrades: Mapping[int, Upgrade] = field(default_factory=dict, compare=False, hash=False)

    @property
    def version(self) -> int:
        """The payload version this code writes: the default of the model's ``v``."""
        return int(self.payload.model_fields["v"].default)

    def parse(self, job: Job) -> P:
        """The job's payload as this kind's model, upgraded from an older version if needed.

        Raises ``InvalidJobPayload`` for another kind's job, an unknown version or an invalid
        payload, with a message that names the job and what is wrong."""
        if job.kind != self.name:
            raise self._invalid(job, f"is a {job.kind!r} job, not {self.name!r}")
        data = dict(job.payload)
        version = data.pop("v", 1)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise self._invalid(job, f"has an invalid payload version {version!r}")
        if version > self.version:
            raise self._invalid(
                job,
                f"has payload version {version}; this code reads up to version {self.version}"
                " (written by a newer omoide?)",
            )
        while version < self.version:
            upgrade = self.upgrades.get(version)
            if upgrade is None:
                raise self._invalid(job, f"has payload version {version}, which has no upgrade")
            data, version = upgrade(data), version + 1
        try:
            return self.payload.model_validate({**data, "v": version})
        except ValidationError as exc:
            raise self._invalid(job, f"has an invalid payload: {_describe(exc)}") from exc

    def dump(self, payload: P) -> dict[str, Any]:
        """The JSON object to store: non-default fields, and ``v`` unless it is 1."""
        if not isinstance(payload, self.payload):
            raise InvalidJobPayload(
                f"a {self.name!r} job takes {self.payload.__name__}, not {type(payload).__name__}"
            )
        data = payload.model_dump(mode="json", exclude_defaults=True, exclude={"v"})
        if payload.v != 1:
            data["v"] = payload.v
        return data

    def _invalid(self, job: Job, problem: str) -> InvalidJobPayload:
        return InvalidJobPayload(f"job {job.id} ({self.name}) {problem}", id=job.id, kind=job.kind)


def _describe(exc: ValidationError) -> str:
    """One line per problem: the field path and pydantic's message (not the whole value)."""
    parts = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"]) or "payload"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
