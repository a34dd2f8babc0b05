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
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from omoide.errors import InvalidInput
from omoide.types import DEFAULT_ID

# postgresql://, postgres:// and SQLAlchemy's driver spellings (postgresql+asyncpg://, ...).
_POSTGRES_URL = re.compile(r"^postgres(?:ql)?(\+[a-z0-9_]+)?://", re.IGNORECASE)


def _alias(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class TenantKey(BaseModel):
    """An API key bound to one tenant: requests with it can only touch that tenant."""

    user_id: str
    scope_id: str | None = None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="OMOIDE_",
        env_ignore_empty=True,
        extra="ignore",
        populate_by_name=True,
    )

    host: str = Field(
        "127.0.0.1",
        description="Address to bind; one that is not loopback needs an API key.",
        validation_alias=_alias("OMOIDE_HOST", "IP"),
    )
    port: int = Field(
        8000,
        ge=0,
        le=65535,
        description="Port to listen on.",
        validation_alias=_alias("OMOIDE_PORT", "PORT"),
    )
    api_key: SecretStr | None = Field(
        None,
        description="Bearer key every route needs but GET /health, GET / and the API docs.",
        validation_alias=_alias("OMOIDE_API_KEY", "MEMORY_API_KEY"),
    )
    tenant_keys: Annotated[dict[str, TenantKey], NoDecode] = Field(
        default_factory=dict,
        description='Keys bound to one tenant, as JSON: {"<key>": {"user_id": "alice", '
        '"scope_id": "demo"}}; such a key only reaches that tenant.',
        repr=False,  # the keys are secrets: keep them out of reprs and logs
        validation_alias=_alias("OMOIDE_TENANT_KEYS"),
    )
    data_dir: Path = Field(
        Path("~/.omoide"),
        description="Where omoide.db and the prepared models live.",
        validation_alias=_alias("OMOIDE_DATA_DIR", "MEMORY_DATA_DIR"),
    )
    db_url: str | None = Field(
        None,
        description="sqlite:///path/to/file.db, or a postgresql:// URL (the PostgreSQL backend).",
        validation_alias=_alias("OMOIDE_DB_URL", "DB_URL"),
    )
    pg_search_timeout: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="Seconds a search statement may run on PostgreSQL; past it the request "
        "fails (retryable) instead of holding a connection.",
    )
    encryption_key: SecretStr | None = Field(
        None,
        description="Passphrase that encrypts the SQLite database (SQLCipher) and exports.",
        validation_alias=_alias("OMOIDE_ENCRYPTION_KEY", "AES_KEY"),
    )
    encryption_codec: str | None = Field(
        None,
        description="JiuwenMemory's MEMORY_CODEC: aes (the only one; needs the key) or none.",
        validation_alias=_alias("OMOIDE_ENCRYPTION_CODEC", "MEMORY_CODEC"),
    )

    embedder: Literal["local", "openai", "ollama", "hash"] = Field(
        "local",
        description="local: the bundled model; openai: any OpenAI-compatible /v1/embeddings; "
        "ollama; hash: a model-free stand-in for tests.",
    )
    embed_model: str = Field(
        "all-MiniLM-L6-v2",
        description="Model name or local directory; another model than the database's needs "
        "`omoide reindex`.",
        validation_alias=_alias("OMOIDE_EMBED_MODEL", "EMBED_MODEL_NAME"),
    )
    embed_api_base: str | None = Field(
        None,
        description="Base URL of a remote embedder (openai, ollama).",
        validation_alias=_alias("OMOIDE_EMBED_API_BASE", "EMBED_API_BASE"),
    )
    embed_api_key: SecretStr | None = Field(
        None,
        description="Key of a remote embedder.",
        validation_alias=_alias("OMOIDE_EMBED_API_KEY", "EMBED_API_KEY"),
    )
    embed_threads: int = Field(2, ge=1, le=64, description="Threads of the local model.")
    embed_batch_size: int = Field(
        64, ge=1, le=4096, description="Texts embedded in one call of the model."
    )
    embed_runtime: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        "auto",
        description="Runtime of the local model. auto: a new store gets onnx-int8, a store keeps"
        " the runtime its vectors came from (`omoide reindex` moves it to onnx-int8). onnx:"
        " onnxruntime, the float vectors of sentence-transformers; onnx-int8: int8 matrix"
        " products, about 2x faster, close but other vectors; torch: sentence-transformers"
        " (`pip install 'omoide[torch]'`).",
    )

    llm_base_url: str | None = Field(
        None,
        description="An OpenAI-compatible chat endpoint (.../v1); set, it switches extraction on.",
        validation_alias=_alias("OMOIDE_LLM_BASE_URL", "API_BASE"),
    )
    llm_api_key: SecretStr | None = Field(
        None,
        description="The LLM endpoint's key, if it needs one.",
        validation_alias=_alias("OMOIDE_LLM_API_KEY", "API_KEY"),
    )
    llm_model: str | None = Field(
        None,
        description="The model name the LLM endpoint serves.",
        validation_alias=_alias("OMOIDE_LLM_MODEL", "MODEL_NAME"),
    )
    llm_provider: str | None = Field(
        None,
        description="JiuwenMemory's MODEL_PROVIDER; informative only (every endpoint is "
        "spoken to as OpenAI-compatible).",
        validation_alias=_alias("OMOIDE_LLM_PROVIDER", "MODEL_PROVIDER"),
    )
    llm_timeout: float = Field(60.0, gt=0, description="Seconds per LLM request.")
    llm_response_format: Literal[
        "auto", "json_schema", "json_object_schema", "json_object", "prompt"
    ] = Field(
        "auto",
        description="Structured output: auto negotiates (json_schema, then json_object with "
        "the schema, then json_object, then prompting); any other value forces that form.",
    )
    llm_max_tokens: int = Field(
        4096,
        ge=16,
        description="Upper bound of any request's max_tokens; each task asks for less "
        "(facts 512, graph 1024, ...).",
    )
    llm_thinking_tokens: int = Field(
        0,
        ge=0,
        description="Tokens added to every output budget, for reasoning models that think "
        "before they answer.",
    )
    llm_max_calls_per_episode: int = Field(
        6,
        ge=0,
        description="LLM calls one add's extraction may make; later steps are skipped.",
    )
    llm_outage_probe_s: float = Field(
        5.0,
        ge=0,
        description="After an LLM outage deferred jobs, ask the endpoint's model list this "
        "often and release the jobs as soon as it answers (0: they wait out their backoff).",
    )

    search_recipe: str = Field(
        "hybrid",
        description="Default search strategy: hybrid, hybrid_rrf, hybrid_weighted, keyword or "
        "vector.",
    )
    implicit_conversations: bool = Field(
        True,
        description="Link chat messages added without a session into implicit conversations "
        "(each turn indexed with its neighbours' words); a plain text is never linked.",
    )
    word_table_build: bool = Field(
        True,
        description="Embed the query expansion's common-word table when it is missing (a "
        "background thread, ~10 s once per machine); false: only load it if saved.",
    )
    index_backend: Literal["simple", "file"] = Field(
        "simple",
        validation_alias=_alias("OMOIDE_INDEX_BACKEND", "INDEX_BACKEND"),
        description="file: also keep long-term memories as editable markdown files under "
        "FILE_MEMORY_DATA_DIR (the database stays what search reads).",
    )
    file_memory_data_dir: Path | None = Field(
        None,
        validation_alias=_alias("OMOIDE_FILE_MEMORY_DATA_DIR", "FILE_MEMORY_DATA_DIR"),
        description="Root of the markdown files; default <data_dir>/file_memory_data.",
    )
    compat_jiuwen: bool = Field(
        True, description="Serve the JiuwenMemory memory_server endpoints (/add_messages/, ...)."
    )
    jiuwen_cosine_threshold: bool = Field(
        True,
        description="JiuwenMemory's search routes and the MCP search tools rank by cosine "
        "alone (the vector recipe), so `score` and `threshold` are a cosine similarity, as "
        "upstream's; false: the default recipe and its score, as every other door.",
    )
    compat_nexus: bool = Field(
        True, description="Serve the nexusAI memory-service routes (/sessions, /episodes, ...)."
    )
    compat_wilmer: bool = Field(
        True, description="Serve the WilmerAI discussion memory routes (/v1/discussions/...)."
    )

    # the knowledge lifecycle: chunk memories (WilmerAI trigger rules), summaries, context,
    # consolidation (nexusAI)
    chunks_enabled: bool = Field(True, description="Make chunk memories of sessions.")
    chunk_token_size: int = Field(1000, ge=1, description="WilmerAI chunkEstimatedTokenSize.")
    chunk_max_messages: int = Field(5, ge=1, description="WilmerAI maxMessagesBetweenChunks.")
    chunk_lookback: int = Field(3, ge=0, description="WilmerAI lookbackStartTurn.")
    chunk_max_response_tokens: int = Field(
        400, ge=16, description="WilmerAI maxResponseSizeInTokens (LLM chunk summaries)."
    )
    summary_trigger: Literal["episode", "chunk"] = Field(
        "episode", description="Update a session's rolling summary per add, or per chunk."
    )
    context_tokenizer: str = Field(
        "cl100k_base", description="tiktoken encoding for context budgets, or 'estimate'."
    )
    context_recent_turns: int = Field(6, ge=1, le=100, description="The recency floor.")
    consolidation_min_age_days: float = Field(
        7.0, ge=0, description="Episodes younger than this are never consolidated."
    )
    consolidation_min_episodes: int = Field(
        10, ge=1, description="Sessions with fewer episodes are never consolidated."
    )
    consolidation_max_score: float = Field(
        0.1,
        ge=0,
        description="Episodes used more than this (access_count / (1 + days)) are kept.",
    )
    consolidation_batch: int = Field(
        50, ge=1, le=1000, description="Episodes merged into one summary at most."
    )
    max_body_bytes: int = Field(1_048_576, ge=1024, description="Larger request bodies get a 413.")
    max_text_chars: int = Field(
        100_000, ge=1, description="Longest memory text or query, in characters."
    )
    max_response_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="Largest response body sent whole (a page of memories); a larger one is a"
        " 413 naming this limit. Exports stream and are not bound by it.",
    )
    max_messages: int = Field(
        1_000,
        ge=1,
        le=1_000_000,
        description="Messages one add may carry. An add is one transaction, which holds the "
        "write lock of the database for every other writer (~1 ms per message).",
    )
    max_waiting_per_tenant: int = Field(
        4,
        ge=1,
        description="Requests of one tenant that may wait for their jobs at once (`wait: true`,"
        " `/add_messages/`, MCP with infer): each holds a server thread; one more gets 429.",
    )
    max_waiting: int = Field(
        16,
        ge=1,
        description="Requests of all tenants that may wait for their jobs at once; the server's"
        " other threads stay free for requests that do not wait.",
    )
    workers: int = Field(1, ge=0, le=32, description="Background job worker threads.")
    run_jobs: bool = Field(
        True,
        description="False: this process never runs jobs (not even while a request waits for"
        " them); `omoide worker` processes on the same database do. `serve --workers 0` sets it.",
    )
    job_lease_s: float = Field(
        120.0,
        gt=0,
        le=86_400,
        description="Seconds a claimed job is its worker's; a job whose worker died is claimed"
        " again after that.",
    )
    worker_poll_s: float = Field(
        0.5, gt=0, le=60, description="Seconds an idle worker waits before looking for jobs."
    )
    log_level: str = Field(
        "INFO", description="Logging level (`omoide mcp` logs warnings only, unless debug)."
    )
    log_query_strings: bool = Field(
        False, description="Log query strings (search text, ids) in access lines; off: paths."
    )

    # transport: who may connect, and for how long
    allowed_hosts: Annotated[list[str] | None, NoDecode] = Field(
        None,
        description="Comma-separated Host names the server answers ('*' for any). Default: "
        "localhost, 127.0.0.1 and ::1 when bound to loopback, any otherwise (a key is required).",
    )
    header_timeout: float = Field(
        10.0, gt=0, le=600, description="Seconds a client has to send a request's headers."
    )
    body_timeout: float = Field(
        30.0, gt=0, le=3600, description="Seconds a client has to send a request's body."
    )
    keep_alive_timeout: int = Field(
        5, ge=1, le=600, description="Seconds an idle keep-alive connection stays open."
    )
    max_connections: int = Field(
        200, ge=1, description="Open connections and requests at once; beyond it a 503."
    )

    # operations: MCP tool defaults (JiuwenMemory's names), /metrics, CORS
    mcp_default_user_id: str = Field(
        DEFAULT_ID,
        description="The user of MCP tool calls that name none.",
        validation_alias=_alias("OMOIDE_MCP_DEFAULT_USER_ID", "MCP_DEFAULT_USER_ID"),
    )
    mcp_default_scope_id: str = Field(
        DEFAULT_ID,
        description="The scope of MCP tool calls that name none.",
        validation_alias=_alias("OMOIDE_MCP_DEFAULT_SCOPE_ID", "MCP_DEFAULT_SCOPE_ID"),
    )
    metrics: bool = Field(False, description="Serve Prometheus metrics at /metrics.")
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Origins allowed to call the API from a browser: comma-separated, or *.",
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

    @property
    def store_location(self) -> Path | str:
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

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_base_url)

    def check_exposure(self) -> None:
        """Refuse to serve a non-loopback address without an API key."""
        if is_loopback(self.host) or self.api_key or self.tenant_keys:
            return
        raise InvalidInput(
            f"refusing to listen on {self.host} without an API key: set MEMORY_API_KEY "
            "(or OMOIDE_API_KEY) to a secret, or bind to 127.0.0.1"
        )


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


def env_names(field_name: str) -> list[str]:
    """Every environment variable that sets ``field_name``, the OMOIDE_* name first."""
    alias = Settings.model_fields[field_name].validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [f"OMOIDE_{field_name.upper()}"]


_SECRET_FIELDS = {"api_key", "tenant_keys", "embed_api_key", "llm_api_key", "encryption_key"}


def _describe(exc: ValidationError, env_files: list[Path]) -> str:
    """One line per error, naming the variable(s) the user actually set."""
    from dotenv import dotenv_values

    seen = {k.upper() for k in os.environ}
    for path in env_files:
        seen |= {k.upper() for k in dotenv_values(path)}
    by_name = {n.upper(): f for f in Settings.model_fields for n in [f, *env_names(f)]}
    lines = []
    for error in exc.errors():
        head, *rest = [str(part) for part in error["loc"]] or ["settings"]
        field = by_name.get(head.upper())
        names = env_names(field) if field else [head]
        shown = [n for n in names if n.upper() in seen] or names
        if field == "tenant_keys" and rest:
            rest[0] = "<key>"  # the dict key IS the secret: never echo it
        where = f" (at {'.'.join(rest)})" if rest else ""
        plain = field not in _SECRET_FIELDS and isinstance(error["input"], str | int)
        value = f" (got {error['input']!r})" if plain else ""
        reason = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"invalid setting {' / '.join(shown)}{where}: {reason}{value}")
    return "; ".join(lines)
