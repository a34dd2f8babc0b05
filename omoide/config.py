"""Settings from the environment and .env files (pydantic-settings).

Built by ``load_settings`` in exactly three places (the CLI callback, ``memory-server``, and
``Memory()`` when given none, so the library reads the same ``.env`` files as the server) and
passed down; nothing reads the environment at import time.

Every variable has an ``OMOIDE_*`` name; where the JiuwenMemory seed has a name for the same thing
(``IP``, ``PORT``, ``MEMORY_API_KEY``, ``MEMORY_DATA_DIR``, ``DB_URL``, ``MODEL_*``, ``API_*``,
``EMBED_*``, ``MEMORY_CODEC``, ``AES_KEY``) that name works too. Precedence, highest first: the
process environment, then ``~/.omoide/.env``, then ``./.env`` (the seed's order: the file read
first wins). An empty value means "not set", so ``MEMORY_DATA_DIR=`` falls back to the default
instead of the working directory.

The settings come in groups: ``settings.server``, ``.store``, ``.embed``, ``.llm``, ``.search``,
``.knowledge`` (the engine's ``KnowledgeConfig`` itself), ``.jobs`` and ``.compat``. Each
setting keeps its flat name (``SETTINGS``): the environment names say it (``OMOIDE_PORT`` is
``port``, in ``server``), and ``Settings(port=...)`` and ``settings.updated(port=...)`` take it.
No other module reads the environment for omoide (``process_environment`` serves the few
variables one entry point reads on its own).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings.exceptions import SettingsError

from omoide.errors import InvalidInput
from omoide.types import DEFAULT_ID

# postgresql://, postgres:// and SQLAlchemy's driver spellings (postgresql+asyncpg://, ...).
_POSTGRES_URL = re.compile(r"^postgres(?:ql)?(\+[a-z0-9_]+)?://", re.IGNORECASE)

# The SQLite vector index's defaults (``omoide.store.sqlite.ann`` says why these).
ANN_THRESHOLD = 50_000
ANN_EF = 320


def _env(*names: str) -> AliasChoices:
    """The environment names of a setting, the ``OMOIDE_*`` one first."""
    return AliasChoices(*names)


class TenantKey(BaseModel):
    """An API key bound to one tenant: requests with it can only touch that tenant."""

    user_id: str
    scope_id: str | None = None


class _Group(BaseModel):
    """A group of settings: built from field names (``port``) or environment names."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")


class ServerSettings(_Group):
    """Who may connect, for how long, with how much: the HTTP server and its limits."""

    host: str = Field(
        "127.0.0.1",
        description="Address to bind; one that is not loopback needs an API key.",
        validation_alias=_env("OMOIDE_HOST", "IP"),
    )
    port: int = Field(
        8000,
        ge=0,
        le=65535,
        description="Port to listen on.",
        validation_alias=_env("OMOIDE_PORT", "PORT"),
    )
    api_key: SecretStr | None = Field(
        None,
        description="Bearer key every route needs but GET /health, GET / and the API docs.",
        validation_alias=_env("OMOIDE_API_KEY", "MEMORY_API_KEY"),
    )
    tenant_keys: dict[str, TenantKey] = Field(
        default_factory=dict,
        description='Keys bound to one tenant, as JSON: {"<key>": {"user_id": "alice", '
        '"scope_id": "demo"}}; such a key only reaches that tenant.',
        repr=False,  # the keys are secrets: keep them out of reprs and logs
        validation_alias=_env("OMOIDE_TENANT_KEYS"),
    )
    max_body_bytes: int = Field(
        1_048_576,
        ge=1024,
        description="Larger request bodies get a 413.",
        validation_alias=_env("OMOIDE_MAX_BODY_BYTES"),
    )
    max_text_chars: int = Field(
        100_000,
        ge=1,
        description="Longest memory text or query, in characters.",
        validation_alias=_env("OMOIDE_MAX_TEXT_CHARS"),
    )
    max_response_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="Largest response body sent whole (a page of memories); a larger one is a"
        " 413 naming this limit. Exports stream and are not bound by it.",
        validation_alias=_env("OMOIDE_MAX_RESPONSE_BYTES"),
    )
    max_messages: int = Field(
        1_000,
        ge=1,
        le=1_000_000,
        description="Messages one add may carry. An add is one transaction, which holds the "
        "write lock of the database for every other writer (~1 ms per message).",
        validation_alias=_env("OMOIDE_MAX_MESSAGES"),
    )
    log_level: str = Field(
        "INFO",
        description="Logging level (`omoide mcp` logs warnings only, unless debug).",
        validation_alias=_env("OMOIDE_LOG_LEVEL"),
    )
    blas_threads: int = Field(
        1,
        ge=0,
        le=1024,
        description="Threads numpy's BLAS uses in the processes omoide starts (`serve`, `worker`,"
        " `mcp`, the compat servers); 0: numpy's default, one per core. A search's vector scan"
        " runs beside its query embedding and keyword ranking: split over every core it waits"
        " for them. The library (`Memory` in your own process) leaves your process's BLAS alone.",
        validation_alias=_env("OMOIDE_BLAS_THREADS"),
    )
    log_query_strings: bool = Field(
        False,
        description="Log query strings (search text, ids) in access lines; off: paths.",
        validation_alias=_env("OMOIDE_LOG_QUERY_STRINGS"),
    )
    allowed_hosts: list[str] | None = Field(
        None,
        description="Comma-separated Host names the server answers ('*' for any). Default: "
        "localhost, 127.0.0.1 and ::1 when bound to loopback, any otherwise (a key is required).",
        validation_alias=_env("OMOIDE_ALLOWED_HOSTS"),
    )
    header_timeout: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Seconds a client has to send a request's headers.",
        validation_alias=_env("OMOIDE_HEADER_TIMEOUT"),
    )
    body_timeout: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="Seconds a client has to send a request's body.",
        validation_alias=_env("OMOIDE_BODY_TIMEOUT"),
    )
    keep_alive_timeout: int = Field(
        5,
        ge=1,
        le=600,
        description="Seconds an idle keep-alive connection stays open.",
        validation_alias=_env("OMOIDE_KEEP_ALIVE_TIMEOUT"),
    )
    max_connections: int = Field(
        200,
        ge=1,
        description="Open connections and requests at once; beyond it a 503.",
        validation_alias=_env("OMOIDE_MAX_CONNECTIONS"),
    )
    metrics: bool = Field(
        False,
        description="Serve Prometheus metrics at /metrics.",
        validation_alias=_env("OMOIDE_METRICS"),
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Origins allowed to call the API from a browser: comma-separated, or *.",
        validation_alias=_env("OMOIDE_CORS_ORIGINS"),
    )

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _parse_origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [o.strip().rstrip("/") for o in value.split(",") if o.strip()]
        return value

    @field_validator("tenant_keys", mode="before")
    @classmethod
    def _parse_tenant_keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not valid JSON: {exc}") from exc
        return value

    @field_validator("tenant_keys", mode="after")
    @classmethod
    def _no_key_twice(cls, value: dict[str, TenantKey], info: ValidationInfo) -> Any:
        """A key that is also the full-access key would get full access, silently."""
        full = info.data.get("api_key")
        if full is not None and full.get_secret_value() in value:
            raise ValueError(
                "a tenant-bound key is also OMOIDE_API_KEY, which would give it full access:"
                " use different keys"
            )
        return value

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    def host_allowlist(self) -> frozenset[str] | None:
        """Lower-case Host names to answer, without ports; ``None`` answers any Host.

        A page on any site can make a browser send requests to 127.0.0.1 under its own name (DNS
        rebinding); refusing Host names that are not ours keeps it from reading the answers.
        """
        if self.allowed_hosts is not None:
            names = {host_name(name) for name in self.allowed_hosts}
            return None if "*" in names else frozenset(names)
        # With a key a rebinding page gets nothing (it cannot send the key), and a keyed local
        # server is often reached through a reverse proxy under another name.
        if is_loopback(self.host) and not (self.api_key or self.tenant_keys):
            return frozenset({"localhost", "127.0.0.1", "::1", host_name(self.host)})
        return None

    def check_exposure(self) -> None:
        """Refuse to serve a non-loopback address without an API key."""
        if is_loopback(self.host) or self.api_key or self.tenant_keys:
            return
        raise InvalidInput(
            f"refusing to listen on {self.host} without an API key: set MEMORY_API_KEY "
            "(or OMOIDE_API_KEY) to a secret, or bind to 127.0.0.1"
        )


class StoreSettings(_Group):
    """Where the memories live, how they are encrypted, and the SQLite vector index."""

    data_dir: Path = Field(
        Path("~/.omoide"),
        description="Where omoide.db and the prepared models live.",
        validation_alias=_env("OMOIDE_DATA_DIR", "MEMORY_DATA_DIR"),
    )
    db_url: str | None = Field(
        None,
        description="sqlite:///path/to/file.db, or a postgresql:// URL (the PostgreSQL backend).",
        validation_alias=_env("OMOIDE_DB_URL", "DB_URL"),
    )
    pg_search_timeout: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="Seconds a search statement may run on PostgreSQL; past it the request "
        "fails (retryable) instead of holding a connection.",
        validation_alias=_env("OMOIDE_PG_SEARCH_TIMEOUT"),
    )
    encryption_key: SecretStr | None = Field(
        None,
        description="Passphrase that encrypts the SQLite database (SQLCipher) and exports.",
        validation_alias=_env("OMOIDE_ENCRYPTION_KEY", "AES_KEY"),
    )
    encryption_codec: str | None = Field(
        None,
        description="JiuwenMemory's MEMORY_CODEC: aes (the only one; needs the key) or none.",
        validation_alias=_env("OMOIDE_ENCRYPTION_CODEC", "MEMORY_CODEC"),
    )
    index_backend: Literal["simple", "file"] = Field(
        "simple",
        validation_alias=_env("OMOIDE_INDEX_BACKEND", "INDEX_BACKEND"),
        description="file: also keep long-term memories as editable markdown files under "
        "FILE_MEMORY_DATA_DIR (the database stays what search reads).",
    )
    file_memory_data_dir: Path | None = Field(
        None,
        validation_alias=_env("OMOIDE_FILE_MEMORY_DATA_DIR", "FILE_MEMORY_DATA_DIR"),
        description="Root of the markdown files; default <data_dir>/file_memory_data.",
    )
    ann_threshold: int | None = Field(
        ANN_THRESHOLD,
        description="SQLite: vectors from which a tenant is searched through an HNSW graph (the"
        " `ann` extra) instead of an exact scan; `off`: always exact.",
        validation_alias=_env("OMOIDE_ANN_THRESHOLD"),
    )
    ann_ef: int = Field(
        ANN_EF,
        description="Candidates the HNSW graph explores per query (recall against speed).",
        validation_alias=_env("OMOIDE_ANN_EF"),
    )

    @field_validator("encryption_codec", mode="after")
    @classmethod
    def _check_codec(cls, value: str | None) -> str | None:
        codec = None if value is None else value.strip().lower().replace("-", "_")
        if codec in (None, "", "none", "plain", "aes", "aes_gcm", "aes256", "aes_256"):
            return None if codec in (None, "", "none", "plain") else "aes"
        if codec == "sm4":
            raise ValueError(
                "SM4 is not supported: use aes (AES-256, SQLCipher) with the key in"
                " AES_KEY / OMOIDE_ENCRYPTION_KEY"
            )
        raise ValueError("unknown codec: use aes (AES-256, with AES_KEY) or none")

    @field_validator("ann_threshold", mode="before")
    @classmethod
    def _lenient_threshold(cls, value: Any) -> Any:
        """A number of vectors, or ``off``; any other text means the default (as always)."""
        if not isinstance(value, str):
            return value
        raw = value.strip()
        if raw.lower() == "off":
            return None
        return int(raw) if raw.isdigit() else ANN_THRESHOLD

    @field_validator("ann_ef", mode="before")
    @classmethod
    def _lenient_ef(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        return int(value) if value.strip().isdigit() else ANN_EF

    @property
    def encryption_passphrase(self) -> str | None:
        """The key the store and exports are encrypted with, or ``None`` (not encrypted)."""
        if self.encryption_codec == "aes" and self.encryption_key is None:
            raise InvalidInput(
                "MEMORY_CODEC=aes needs the key: set AES_KEY or OMOIDE_ENCRYPTION_KEY"
            )
        if self.encryption_key is None:
            return None
        secret = self.encryption_key.get_secret_value()
        return secret or None

    @property
    def location(self) -> Path | str:
        """Where the store lives: a PostgreSQL URL when ``DB_URL`` / ``OMOIDE_DB_URL`` is one
        (``postgresql://``, ``postgres://``, or the SQLAlchemy ``postgresql+asyncpg://`` /
        ``postgresql+psycopg://``, returned as plain ``postgresql://``), else the SQLite file."""
        if self.db_url and _POSTGRES_URL.match(self.db_url.strip()):
            return _POSTGRES_URL.sub("postgresql://", self.db_url.strip(), count=1)
        return self.db_path

    @property
    def models_dir(self) -> Path:
        """``<data_dir>/models``: the built ONNX model and the expansion's word table."""
        return self.data_dir.expanduser() / "models"

    @property
    def db_path(self) -> Path:
        """The SQLite file: ``DB_URL`` (``sqlite:///path``) or ``<data_dir>/omoide.db``."""
        if self.db_url and _POSTGRES_URL.match(self.db_url.strip()):
            raise InvalidInput("DB_URL is a PostgreSQL URL, not a SQLite file; see store_location")
        if self.db_url:
            prefix = "sqlite:///"
            url = self.db_url.replace("sqlite+aiosqlite:///", prefix)
            if not url.startswith(prefix):
                raise InvalidInput(
                    f"DB_URL / OMOIDE_DB_URL must be sqlite:///<path>, got {self.db_url!r}"
                )
            return Path(url[len(prefix) :]).expanduser()
        return self.data_dir.expanduser() / "omoide.db"

    @property
    def file_mirror_root(self) -> Path | None:
        """Where the markdown memory files live, or None when ``INDEX_BACKEND`` is not file."""
        if self.index_backend != "file":
            return None
        root = self.file_memory_data_dir or self.data_dir / "file_memory_data"
        return root.expanduser()


class EmbedSettings(_Group):
    """The embedder: the bundled model, or a remote one."""

    embedder: Literal["local", "openai", "ollama", "hash"] = Field(
        "local",
        description="local: the bundled model; openai: any OpenAI-compatible /v1/embeddings; "
        "ollama; hash: a model-free stand-in for tests.",
        validation_alias=_env("OMOIDE_EMBEDDER"),
    )
    model: str = Field(
        "all-MiniLM-L6-v2",
        description="Model name or local directory; another model than the database's needs "
        "`omoide reindex`.",
        validation_alias=_env("OMOIDE_EMBED_MODEL", "EMBED_MODEL_NAME"),
    )
    api_base: str | None = Field(
        None,
        description="Base URL of a remote embedder (openai, ollama).",
        validation_alias=_env("OMOIDE_EMBED_API_BASE", "EMBED_API_BASE"),
    )
    api_key: SecretStr | None = Field(
        None,
        description="Key of a remote embedder.",
        validation_alias=_env("OMOIDE_EMBED_API_KEY", "EMBED_API_KEY"),
    )
    threads: int = Field(
        2,
        ge=1,
        le=64,
        description="Threads of the local model.",
        validation_alias=_env("OMOIDE_EMBED_THREADS"),
    )
    batch_size: int = Field(
        64,
        ge=1,
        le=4096,
        description="Texts embedded in one call of the model.",
        validation_alias=_env("OMOIDE_EMBED_BATCH_SIZE"),
    )
    runtime: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        "auto",
        description="Runtime of the local model. auto: a new store gets onnx-int8, a store keeps"
        " the runtime its vectors came from (`omoide reindex` moves it to onnx-int8). onnx:"
        " onnxruntime, the float vectors of sentence-transformers; onnx-int8: int8 matrix"
        " products, about 2x faster, close but other vectors; torch: sentence-transformers"
        " (`pip install 'omoide[torch]'`).",
        validation_alias=_env("OMOIDE_EMBED_RUNTIME"),
    )


class LLMSettings(_Group):
    """The OpenAI-compatible chat endpoint that extraction uses, and its budgets."""

    base_url: str | None = Field(
        None,
        description="An OpenAI-compatible chat endpoint (.../v1); set, it switches extraction on.",
        validation_alias=_env("OMOIDE_LLM_BASE_URL", "API_BASE"),
    )
    api_key: SecretStr | None = Field(
        None,
        description="The LLM endpoint's key, if it needs one.",
        validation_alias=_env("OMOIDE_LLM_API_KEY", "API_KEY"),
    )
    model: str | None = Field(
        None,
        description="The model name the LLM endpoint serves.",
        validation_alias=_env("OMOIDE_LLM_MODEL", "MODEL_NAME"),
    )
    provider: str | None = Field(
        None,
        description="JiuwenMemory's MODEL_PROVIDER; informative only (every endpoint is "
        "spoken to as OpenAI-compatible).",
        validation_alias=_env("OMOIDE_LLM_PROVIDER", "MODEL_PROVIDER"),
    )
    timeout: float = Field(
        60.0,
        gt=0,
        description="Seconds per LLM request.",
        validation_alias=_env("OMOIDE_LLM_TIMEOUT"),
    )
    response_format: Literal[
        "auto", "json_schema", "json_object_schema", "json_object", "prompt"
    ] = Field(
        "auto",
        description="Structured output: auto negotiates (json_schema, then json_object with "
        "the schema, then json_object, then prompting); any other value forces that form.",
        validation_alias=_env("OMOIDE_LLM_RESPONSE_FORMAT"),
    )
    max_tokens: int = Field(
        4096,
        ge=16,
        description="Upper bound of any request's max_tokens; each task asks for less "
        "(facts 512, graph 1024, ...).",
        validation_alias=_env("OMOIDE_LLM_MAX_TOKENS"),
    )
    thinking_tokens: int = Field(
        0,
        ge=0,
        description="Tokens added to every output budget, for reasoning models that think "
        "before they answer.",
        validation_alias=_env("OMOIDE_LLM_THINKING_TOKENS"),
    )
    max_calls_per_episode: int = Field(
        6,
        ge=0,
        description="LLM calls one add's extraction may make; later steps are skipped.",
        validation_alias=_env("OMOIDE_LLM_MAX_CALLS_PER_EPISODE"),
    )
    outage_probe_s: float = Field(
        5.0,
        ge=0,
        description="After an LLM outage deferred jobs, ask the endpoint's model list this "
        "often and release the jobs as soon as it answers (0: they wait out their backoff).",
        validation_alias=_env("OMOIDE_LLM_OUTAGE_PROBE_S"),
    )

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)


class SearchSettings(_Group):
    """How searches rank, and what adds index for them."""

    recipe: str = Field(
        "hybrid",
        description="Default search strategy: hybrid, hybrid_rrf, hybrid_weighted, keyword or "
        "vector.",
        validation_alias=_env("OMOIDE_SEARCH_RECIPE"),
    )
    implicit_conversations: bool = Field(
        True,
        description="Link chat messages added without a session into implicit conversations "
        "(each turn indexed with its neighbours' words); a plain text is never linked.",
        validation_alias=_env("OMOIDE_IMPLICIT_CONVERSATIONS"),
    )
    word_table_build: bool = Field(
        True,
        description="Embed the query expansion's common-word table when it is missing (a "
        "background thread, ~10 s once per machine); false: only load it if saved.",
        validation_alias=_env("OMOIDE_WORD_TABLE_BUILD"),
    )


class JobsSettings(_Group):
    """The background jobs (extraction, chunks, consolidation) and the requests that wait."""

    workers: int = Field(
        1,
        ge=0,
        le=32,
        description="Background job worker threads.",
        validation_alias=_env("OMOIDE_WORKERS"),
    )
    run_jobs: bool = Field(
        True,
        description="False: this process never runs jobs (not even while a request waits for"
        " them); `omoide worker` processes on the same database do. `serve --workers 0` sets it.",
        validation_alias=_env("OMOIDE_RUN_JOBS"),
    )
    lease_s: float = Field(
        120.0,
        gt=0,
        le=86_400,
        description="Seconds a claimed job is its worker's; a job whose worker died is claimed"
        " again after that.",
        validation_alias=_env("OMOIDE_JOB_LEASE_S"),
    )
    poll_s: float = Field(
        0.5,
        gt=0,
        le=60,
        description="Seconds an idle worker waits before looking for jobs.",
        validation_alias=_env("OMOIDE_WORKER_POLL_S"),
    )
    max_waiting_per_tenant: int = Field(
        4,
        ge=1,
        description="Requests of one tenant that may wait for their jobs at once (`wait: true`,"
        " `/add_messages/`, MCP with infer): each holds a server thread; one more gets 429. A"
        " key bound to a user counts as one tenant over all its scopes.",
        validation_alias=_env("OMOIDE_MAX_WAITING_PER_TENANT"),
    )
    max_waiting: int = Field(
        16,
        ge=1,
        description="Requests of all tenants that may wait for their jobs at once; the server's"
        " other threads stay free for requests that do not wait.",
        validation_alias=_env("OMOIDE_MAX_WAITING"),
    )
    dreaming_min_interval_s: float = Field(
        60.0,
        ge=0,
        le=86_400,
        description="The shortest interval between two dreaming sweeps of one schedule: a"
        " JiuwenMemory /start_dreaming asking for less sweeps this often (every sweep is a"
        " job, and with an LLM it spends calls). 0: as asked.",
        validation_alias=_env("OMOIDE_DREAMING_MIN_INTERVAL_S"),
    )
    job_retention_days: float = Field(
        30.0,
        ge=0,
        le=36_500,
        description="Days a finished job (done or failed) is kept after it ended, for"
        " /v1/jobs, task status and retries; then a job-running process deletes it. 0 keeps"
        " every job. A pending or running job is never deleted.",
        validation_alias=_env("OMOIDE_JOB_RETENTION_DAYS"),
    )


class CompatSettings(_Group):
    """The emulated products' doors and the defaults of their tools."""

    jiuwen: bool = Field(
        True,
        description="Serve the JiuwenMemory memory_server endpoints (/add_messages/, ...).",
        validation_alias=_env("OMOIDE_COMPAT_JIUWEN"),
    )
    jiuwen_cosine_threshold: bool = Field(
        False,
        description="JiuwenMemory's search routes and the MCP search tools rank by cosine "
        "alone (the vector recipe), so `score` and `threshold` are a cosine similarity, as "
        "upstream's, for a client whose thresholds were tuned on cosines; false: the default "
        "recipe and its relevance score, as every other door.",
        validation_alias=_env("OMOIDE_JIUWEN_COSINE_THRESHOLD"),
    )
    nexus: bool = Field(
        True,
        description="Serve the nexusAI memory-service routes (/sessions, /episodes, ...).",
        validation_alias=_env("OMOIDE_COMPAT_NEXUS"),
    )
    wilmer: bool = Field(
        True,
        description="Serve the WilmerAI discussion memory routes (/v1/discussions/...).",
        validation_alias=_env("OMOIDE_COMPAT_WILMER"),
    )
    mcp_default_user_id: str = Field(
        DEFAULT_ID,
        description="The user of MCP tool calls that name none.",
        validation_alias=_env("OMOIDE_MCP_DEFAULT_USER_ID", "MCP_DEFAULT_USER_ID"),
    )
    mcp_default_scope_id: str = Field(
        DEFAULT_ID,
        description="The scope of MCP tool calls that name none.",
        validation_alias=_env("OMOIDE_MCP_DEFAULT_SCOPE_ID", "MCP_DEFAULT_SCOPE_ID"),
    )


class ChunkConfig(BaseModel):
    """The trigger rules, under WilmerAI's names too (``chunkEstimatedTokenSize`` ...)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    chunk_estimated_token_size: int = Field(
        1000, ge=1, alias="chunkEstimatedTokenSize", description="WilmerAI chunkEstimatedTokenSize."
    )
    max_messages_between_chunks: int = Field(
        5, ge=1, alias="maxMessagesBetweenChunks", description="WilmerAI maxMessagesBetweenChunks."
    )
    lookback_start_turn: int = Field(
        3, ge=0, alias="lookbackStartTurn", description="WilmerAI lookbackStartTurn."
    )
    max_response_size_in_tokens: int = Field(
        400,
        ge=16,
        alias="maxResponseSizeInTokens",
        description="WilmerAI maxResponseSizeInTokens (LLM chunk summaries).",
    )


class KnowledgeConfig(BaseModel):
    """The knowledge lifecycle's settings as one object: chunk memories (WilmerAI's trigger
    rules), summaries, context and consolidation (nexusAI).

    ``summary_trigger``: ``"episode"`` updates a session's rolling summary after every add
    (the extraction job's summary step); ``"chunk"`` updates it only when a chunk memory is
    made, from the chunk's messages, and links it to that chunk (WilmerAI). ``Settings.knowledge``
    is one, read from ``OMOIDE_CHUNK_*``, ``OMOIDE_SUMMARY_TRIGGER``, ``OMOIDE_CONTEXT_*`` and
    ``OMOIDE_CONSOLIDATION_*``; ``Memory(knowledge=KnowledgeConfig(...))`` replaces it."""

    model_config = ConfigDict(frozen=True)

    chunks_enabled: bool = Field(True, description="Make chunk memories of sessions.")
    chunks: ChunkConfig = Field(default_factory=ChunkConfig)
    summary_trigger: Literal["episode", "chunk"] = Field(
        "episode", description="Update a session's rolling summary per add, or per chunk."
    )
    tokenizer: str = Field(
        "cl100k_base", description="tiktoken encoding for context budgets, or 'estimate'."
    )
    recent_turns: int = Field(6, ge=1, le=100, description="The recency floor.")
    min_age_days: float = Field(
        7.0, ge=0, description="Episodes younger than this are never consolidated."
    )
    min_session_episodes: int = Field(
        10, ge=1, description="Sessions with fewer episodes are never consolidated."
    )
    max_score: float = Field(
        0.1,
        ge=0,
        description="Episodes used more than this (access_count / (1 + days)) are kept.",
    )
    consolidation_batch: int = Field(
        50, ge=1, le=1000, description="Episodes merged into one summary at most."
    )


# The knowledge group's environment names (KnowledgeConfig keeps the engine's field names).
_KNOWLEDGE_ENV: dict[tuple[str, ...], str] = {
    ("chunks_enabled",): "OMOIDE_CHUNKS_ENABLED",
    ("chunks", "chunk_estimated_token_size"): "OMOIDE_CHUNK_TOKEN_SIZE",
    ("chunks", "max_messages_between_chunks"): "OMOIDE_CHUNK_MAX_MESSAGES",
    ("chunks", "lookback_start_turn"): "OMOIDE_CHUNK_LOOKBACK",
    ("chunks", "max_response_size_in_tokens"): "OMOIDE_CHUNK_MAX_RESPONSE_TOKENS",
    ("summary_trigger",): "OMOIDE_SUMMARY_TRIGGER",
    ("tokenizer",): "OMOIDE_CONTEXT_TOKENIZER",
    ("recent_turns",): "OMOIDE_CONTEXT_RECENT_TURNS",
    ("min_age_days",): "OMOIDE_CONSOLIDATION_MIN_AGE_DAYS",
    ("min_session_episodes",): "OMOIDE_CONSOLIDATION_MIN_EPISODES",
    ("max_score",): "OMOIDE_CONSOLIDATION_MAX_SCORE",
    ("consolidation_batch",): "OMOIDE_CONSOLIDATION_BATCH",
}

GROUPS: dict[str, type[BaseModel]] = {
    "server": ServerSettings,
    "store": StoreSettings,
    "embed": EmbedSettings,
    "llm": LLMSettings,
    "search": SearchSettings,
    "knowledge": KnowledgeConfig,
    "jobs": JobsSettings,
    "compat": CompatSettings,
}


@dataclass(frozen=True)
class Setting:
    """One setting: its flat name (``port``, the ``OMOIDE_*`` name in lower case without the
    prefix, also a keyword of ``Settings(...)``), where it lives (``("server", "port")``), its
    environment names (the ``OMOIDE_*`` one first) and its field."""

    name: str
    path: tuple[str, ...]
    env: tuple[str, ...]
    field: FieldInfo


def _field(model: type[BaseModel], path: tuple[str, ...]) -> FieldInfo:
    *parents, leaf = path
    for part in parents:
        annotation = model.model_fields[part].annotation
        assert isinstance(annotation, type)
        assert issubclass(annotation, BaseModel)
        model = annotation
    return model.model_fields[leaf]


def _settings() -> dict[str, Setting]:
    out: list[Setting] = []
    for group, model in GROUPS.items():
        if model is KnowledgeConfig:
            for path, name in _KNOWLEDGE_ENV.items():
                out.append(Setting("", (group, *path), (name,), _field(model, path)))
            continue
        for field_name, info in model.model_fields.items():
            alias = info.validation_alias
            assert isinstance(alias, AliasChoices), f"{group}.{field_name} has no env names"
            names = tuple(str(choice) for choice in alias.choices)
            out.append(Setting("", (group, field_name), names, info))
    return {
        s.env[0].removeprefix("OMOIDE_").lower(): Setting(
            s.env[0].removeprefix("OMOIDE_").lower(), s.path, s.env, s.field
        )
        for s in out
    }


SETTINGS: dict[str, Setting] = _settings()
"""Every setting by its flat name, in the order of the groups."""

# Every environment name in lower case (they are read case-insensitively). A flat name is
# matched before them: ``api_key`` is the server's key, ``API_KEY`` JiuwenMemory's LLM key.
_BY_ENV = {n.lower(): s for s in SETTINGS.values() for n in s.env}
_BY_PATH = {s.path: s for s in SETTINGS.values()}


def _lookup(key: str) -> Setting | None:
    """The setting a flat name or an environment name names."""
    return SETTINGS.get(key) or _BY_ENV.get(key.lower())


def _as_dict(value: Any) -> dict[str, Any]:
    """A group given as a model or a dict, as a dict of what was set in it."""
    if isinstance(value, BaseModel):
        return {name: getattr(value, name) for name in value.model_fields_set}
    return dict(value) if isinstance(value, Mapping) else {}


def route(values: Mapping[str, Any]) -> dict[str, Any]:
    """Flat names (``port``, ``OMOIDE_PORT``, ``PORT``) put into their groups; a flat value
    wins over the same one given inside its group. Other keys are kept as they are."""
    out: dict[str, Any] = {}
    flat: list[tuple[Setting, Any]] = []
    for key, value in values.items():
        setting = _lookup(key) if key not in GROUPS else None
        if setting is None:
            out[key] = value
        else:
            flat.append((setting, value))
    for setting, value in flat:
        group, *inner = setting.path
        node = out[group] = _as_dict(out.get(group))
        for part in inner[:-1]:
            node[part] = _as_dict(node.get(part))
            node = node[part]
        node[inner[-1]] = value
    return out


class _Environment(BaseSettings):
    """The environment and ``.env`` files read by flat name, as they have always been."""

    model_config = SettingsConfigDict(
        env_prefix="OMOIDE_", env_ignore_empty=True, extra="ignore", populate_by_name=True
    )


_FLAT: type[BaseSettings] = create_model(  # type: ignore[call-overload]
    "_FlatEnvironment",
    __base__=_Environment,
    **{
        s.name: (str | None, Field(None, validation_alias=AliasChoices(*s.env)))
        for s in SETTINGS.values()
    },
)


class _Grouped(PydanticBaseSettingsSource):
    """A flat environment source whose values are put into their groups."""

    def __init__(self, settings_cls: type[BaseSettings], inner: PydanticBaseSettingsSource):
        super().__init__(settings_cls)
        self.inner = inner

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        del field  # unused: __call__ reads the flat source whole
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return route(self.inner())


class Settings(BaseSettings):
    """Every setting, in groups. ``Settings(port=9000, llm_base_url=...)`` takes the flat names
    too (``SETTINGS``), as does ``updated``; the environment names are listed in
    docs/configuration.md (``env_names``)."""

    model_config = SettingsConfigDict(extra="ignore")

    server: ServerSettings = Field(default_factory=ServerSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    knowledge: KnowledgeConfig = Field(default_factory=KnowledgeConfig)
    jobs: JobsSettings = Field(default_factory=JobsSettings)
    compat: CompatSettings = Field(default_factory=CompatSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment and the .env files are read by flat name (``_FLAT``), then grouped;
        # no secrets directory is configured.
        del env_settings, file_secret_settings
        env_file = getattr(dotenv_settings, "env_file", None)
        return (
            init_settings,
            _Grouped(settings_cls, EnvSettingsSource(_FLAT)),
            _Grouped(settings_cls, DotEnvSettingsSource(_FLAT, env_file=env_file)),
        )

    @model_validator(mode="before")
    @classmethod
    def _route_flat_names(cls, data: Any) -> Any:
        return route(data) if isinstance(data, Mapping) else data

    def updated(self, **values: Any) -> Settings:
        """A copy with some settings changed, by flat name (``updated(port=3002)``); like
        ``model_copy(update=...)`` the values are not validated."""
        changes = route(values)
        update: dict[str, Any] = {}
        for group, inner in changes.items():
            if group not in GROUPS:
                raise KeyError(f"unknown setting {group!r}")
            given = isinstance(inner, BaseModel)  # a whole group: updated(server=...)
            update[group] = inner if given else _copy_with(getattr(self, group), inner)
        return self.model_copy(update=update)


def _copy_with(model: BaseModel, changes: dict[str, Any]) -> BaseModel:
    update = {
        key: _copy_with(getattr(model, key), value)
        if isinstance(value, dict) and isinstance(getattr(model, key), BaseModel)
        else value
        for key, value in changes.items()
    }
    return model.model_copy(update=update)


def host_name(header: str) -> str:
    """A ``Host`` value without its port, lower-case: ``[::1]:8000`` -> ``::1``."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_settings(home: Path | None = None, **overrides: Any) -> Settings:
    """Build Settings from env and the .env files (``~/.omoide/.env`` wins over ``./.env``).

    An invalid value raises ``InvalidInput`` naming the variable as the user set it, e.g.
    ``invalid setting PORT: Input should be a valid integer (got 'abc')``.
    """
    home_env = (home or Path.home()) / ".omoide" / ".env"
    env_files = [p for p in (Path(".env"), home_env) if p.is_file()]
    try:
        return Settings(_env_file=env_files or None, **overrides)
    except ValidationError as exc:
        raise InvalidInput(_describe(exc, env_files)) from None
    except SettingsError as exc:
        raise InvalidInput(f"invalid setting: {exc}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{_undecodable(env_files)} is not UTF-8 text") from None


def _undecodable(env_files: list[Path]) -> str:
    """The first of ``env_files`` that is not UTF-8 (python-dotenv raises without naming it)."""
    for path in env_files:
        try:
            path.read_text("utf-8")
        except UnicodeDecodeError:
            return str(path)
    return "a .env file"


def env_names(name: str) -> list[str]:
    """Every environment variable that sets the setting ``name`` (a flat name, ``port``), the
    ``OMOIDE_*`` name first."""
    return list(SETTINGS[name].env)


def all_env_names() -> set[str]:
    """Every environment variable a setting reads."""
    return {name for setting in SETTINGS.values() for name in setting.env}


def process_environment(*names: str) -> dict[str, str]:
    """The values of ``names`` in the process environment, for the few variables that one
    entry point reads outside the settings (a product's own names, ``omoide rekey``'s key)."""
    return {name: os.environ[name] for name in names if name in os.environ}


_SECRETS = {"api_key", "tenant_keys", "embed_api_key", "llm_api_key", "encryption_key"}


def _locate(loc: tuple[str, ...]) -> tuple[Setting | None, list[str]]:
    """The setting an error's location names (``("server", "port")``), and the rest of it."""
    for end in range(len(loc), 0, -1):
        setting = _BY_PATH.get(loc[:end])
        if setting is None and end == 2:
            found = _lookup(loc[1])
            setting = found if found is not None and found.path[0] == loc[0] else None
        if setting is not None:
            return setting, list(loc[end:])
    return None, list(loc)


def _describe(exc: ValidationError, env_files: list[Path]) -> str:
    """One line per error, naming the variable(s) the user actually set."""
    from dotenv import dotenv_values

    seen = {k.upper() for k in os.environ}
    for path in env_files:
        seen |= {k.upper() for k in dotenv_values(path)}
    lines = []
    for error in exc.errors():
        setting, rest = _locate(tuple(str(part) for part in error["loc"]))
        names = list(setting.env) if setting else [".".join(rest) or "settings"]
        if setting is None:
            rest = []
        shown = [n for n in names if n.upper() in seen] or names
        secret = setting is not None and setting.name in _SECRETS
        if setting is not None and setting.name == "tenant_keys" and rest:
            rest[0] = "<key>"  # the dict key IS the secret: never echo it
        where = f" (at {'.'.join(rest)})" if rest else ""
        plain = not secret and isinstance(error["input"], str | int)
        value = f" (got {error['input']!r})" if plain else ""
        reason = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"invalid setting {' / '.join(shown)}{where}: {reason}{value}")
    return "; ".join(lines)
