"""omoide: long-term memory for LLM applications and agents."""

from omoide._version import __version__
from omoide.client import Client
from omoide.errors import (
    BackendError,
    Conflict,
    EmbedderError,
    FeatureDisabled,
    Forbidden,
    InvalidInput,
    LLMError,
    MigrationError,
    NotFound,
    OmoideError,
    StoreError,
    Unauthorized,
)
from omoide.memory import Memory
from omoide.store.protocol import NewMemory
from omoide.types import (
    Episode,
    HistoryEntry,
    Job,
    MemoryItem,
    MemoryType,
    Message,
    Page,
    SearchFilters,
    SearchHit,
    SearchResult,
    Session,
)

__all__ = [
    "BackendError",
    "Client",
    "Conflict",
    "EmbedderError",
    "Episode",
    "FeatureDisabled",
    "Forbidden",
    "HistoryEntry",
    "InvalidInput",
    "Job",
    "LLMError",
    "Memory",
    "MemoryItem",
    "MemoryType",
    "Message",
    "MigrationError",
    "NewMemory",
    "NotFound",
    "OmoideError",
    "Page",
    "SearchFilters",
    "SearchHit",
    "SearchResult",
    "Session",
    "StoreError",
    "Unauthorized",
    "__version__",
]
