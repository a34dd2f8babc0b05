"""Errors of the job layer: a stored payload this code cannot read, and a failure with a result.

They live here rather than in ``omoide.errors`` because only the job layer raises or reads them.
"""

from __future__ import annotations

from typing import Any

from omoide.errors import InvalidInput


class InvalidJobPayload(InvalidInput):
    """A stored job payload is invalid, of an unknown version, or of an unknown kind.

    Retrying cannot fix it, so the worker fails that job at once (the message on the row);
    the other jobs of the batch are not affected.
    """

    code = "invalid_job_payload"


class JobFailed(Exception):
    """What a handler returns for a job that failed but has a partial result to keep.

    ``cause`` decides retry or give-up (through the kind's ``RetryPolicy``) and is the message
    on the row; ``result`` (e.g. the steps an extraction job completed) is stored with it when
    the job fails for good.
    """

    def __init__(self, cause: BaseException, result: dict[str, Any] | None = None) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.result = result
