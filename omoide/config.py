"""Settings from the environment and .env files (pydantic-settings).

Built in exactly three places (the HTTP app, ``Memory()`` when asked to read the environment, and
the CLI callback) and passed down; nothing reads the environment at import time.

Every variable has an ``OMOIDE_*`` name; where the JiuwenMemory seed has a name for the same thing
(``IP``, ``PORT``, ``MEMORY_API_KEY``, ``MEMORY_DATA_DIR``, ``DB_URL``, ``MODEL_*``, ``API_*``,
``EMBED_*``) that name works too. Precedence, highest first: the process environment, then
``~/.omoide/.env``, then ``./.env`` (the seed's order: the file read first wins). An empty value
means "not set", so ``MEMORY_DATA_DIR=`` falls back to the default instead of the working directory.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from omoide.errors import InvalidInput


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

    host: str = Field("127.0.0.1", validation_alias=_alias("OMOIDE_HOST", "IP"))
    port: int = Field(8000, ge=0, le=65535, validation_alias=_alias("OMOIDE_PORT", "PORT"))
    api_key: SecretStr | None = Field(
        None, validation_alias=_alias("OMOIDE_API_KEY", "MEMORY_API_KEY")
    )
    tenant_keys: dict[str, TenantKey] = Field(
        default_factory=dict,
        description='JSON: {"<key>": {"user_id": "alice", "scope_id": "demo"}}',
        validation_alias=_alias("OMOIDE_TENANT_KEYS"),
    )
    data_dir: Path = Field(
        Path("~/.omoide"), validation_alias=_alias("OMOIDE_DATA_DIR", "MEMORY_DATA_DIR")
    )
    db_url: str | None = Field(None, validation_alias=_alias("OMOIDE_DB_URL", "DB_URL"))

    embedder: Literal["local", "openai", "ollama", "hash"] = "local"
    embed_model: str = Field(
        "all-MiniLM-L6-v2", validation_alias=_alias("OMOIDE_EMBED_MODEL", "EMBED_MODEL_NAME")
    )
    embed_api_base: str | None = Field(
        None, validation_alias=_alias("OMOIDE_EMBED_API_BASE", "EMBED_API_BASE")
    )
    embed_api_key: SecretStr | None = Field(
        None, validation_alias=_alias("OMOIDE_EMBED_API_KEY", "EMBED_API_KEY")
    )
    embed_threads: int = Field(2, ge=1, le=64)
    embed_batch_size: int = Field(64, ge=1, le=4096)

    llm_base_url: str | None = Field(
        None, validation_alias=_alias("OMOIDE_LLM_BASE_URL", "API_BASE")
    )
    llm_api_key: SecretStr | None = Field(
        None, validation_alias=_alias("OMOIDE_LLM_API_KEY", "API_KEY")
    )
    llm_model: str | None = Field(None, validation_alias=_alias("OMOIDE_LLM_MODEL", "MODEL_NAME"))
    llm_provider: str | None = Field(
        None, validation_alias=_alias("OMOIDE_LLM_PROVIDER", "MODEL_PROVIDER")
    )

    search_recipe: str = "hybrid"
    max_body_bytes: int = Field(1_048_576, ge=1024)
    max_text_chars: int = Field(100_000, ge=1)
    workers: int = Field(1, ge=0, le=32, description="Background job worker threads.")
    log_level: str = "INFO"

    @field_validator("tenant_keys", mode="before")
    @classmethod
    def _parse_tenant_keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"OMOIDE_TENANT_KEYS is not valid JSON: {exc}") from exc
        return value

    @property
    def db_path(self) -> Path:
        """The SQLite file: ``DB_URL`` (``sqlite:///path``) or ``<data_dir>/omoide.db``."""
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


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_settings(home: Path | None = None, **overrides: Any) -> Settings:
    """Build Settings from env and the .env files (``~/.omoide/.env`` wins over ``./.env``)."""
    home_env = (home or Path.home()) / ".omoide" / ".env"
    env_files = [p for p in (Path(".env"), home_env) if p.is_file()]
    return Settings(_env_file=env_files or None, **overrides)  # type: ignore[call-arg]
