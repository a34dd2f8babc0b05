"""The omoide error tree. Every error omoide raises on purpose is an ``OmoideError``.

    OmoideError
    ├── InvalidInput        (also a ValueError)  bad arguments: empty text, bad filter, ...
    ├── NotFound            an id that does not exist in the caller's tenant
    ├── Conflict            a unique key already taken (e.g. a session external id)
    ├── Unauthorized        missing or wrong API key (HTTP 401)
    ├── Forbidden           a tenant-bound key used on another tenant (HTTP 403)
    ├── Busy                too many waiting requests of one tenant (HTTP 429, Retry-After)
    ├── FeatureDisabled     a feature that needs something not configured (an LLM)
    ├── MigrationError      the database schema cannot be used by this code
    └── BackendError        a dependency failed; ``retryable`` says whether to try again
        ├── StoreError
        ├── EmbedderError   (also raised when the database was built with another model)
        └── LLMError

HTTP status mapping lives only in ``omoide.api.errors``; the CLI prints one line and exits 1.
"""

from __future__ import annotations

from omoide.redact import redact


class OmoideError(Exception):
    """Root of every error omoide raises on purpose."""

    code = "omoide_error"

    def __init__(self, message: str, **fields: object) -> None:
        # A message quotes what failed (a URL, a DSN, a server's reply): never its secrets.
        message = redact(message)
        super().__init__(message)
        self.message = message
        self.fields = fields


class InvalidInput(OmoideError, ValueError):
    """The caller passed something omoide cannot accept, e.g. ``add("")``."""

    code = "invalid_input"


class NotFound(OmoideError):
    """No such id in the caller's tenant (another tenant's ids are indistinguishable)."""

    code = "not_found"


class Conflict(OmoideError):
    """A unique key is already taken."""

    code = "conflict"


class Unauthorized(OmoideError):
    """Missing or wrong API key."""

    code = "unauthorized"


class Forbidden(OmoideError):
    """The key is valid but bound to another tenant."""

    code = "forbidden"


class Busy(OmoideError):
    """A caller asked to wait for its jobs while its tenant (or the whole server) already has
    as many waiting requests as allowed; nothing was written. ``retry_after`` in seconds."""

    code = "busy"

    def __init__(self, message: str, *, retry_after: int = 5, **fields: object) -> None:
        super().__init__(message, retry_after=retry_after, **fields)
        self.retry_after = retry_after


class FeatureDisabled(OmoideError):
    """The feature needs a component that is not configured (for example an LLM)."""

    code = "feature_disabled"


class MigrationError(OmoideError):
    """The database schema is newer than this code, or a migration failed."""

    code = "migration_error"


class BackendError(OmoideError):
    """A dependency failed. ``retryable`` is True when trying again may succeed."""

    code = "backend_error"

    def __init__(self, message: str, *, retryable: bool = True, **fields: object) -> None:
        super().__init__(message, **fields)
        self.retryable = retryable


class StoreError(BackendError):
    """The storage backend failed."""

    code = "store_error"


class EmbedderError(BackendError):
    """The embedder failed, or does not match the model the database was built with."""

    code = "embedder_error"


class LLMError(BackendError):
    """The LLM endpoint failed or returned something unusable."""

    code = "llm_error"
