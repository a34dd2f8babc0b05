"""Settings: OMOIDE_* names and JiuwenMemory aliases, .env precedence, empty values, errors,
the groups and the flat names."""

from __future__ import annotations

import ast
from functools import reduce
from pathlib import Path
from typing import Any

import pytest

from omoide.config import (
    SETTINGS,
    KnowledgeConfig,
    Settings,
    all_env_names,
    env_names,
    load_settings,
)
from omoide.errors import InvalidInput

PACKAGE = Path(__file__).parents[1] / "omoide"


def value(settings: Settings, name: str) -> Any:
    """The setting of flat name ``name`` (``port``) in its group (``settings.server.port``)."""
    return reduce(getattr, SETTINGS[name].path, settings)


ALL_NAMES = sorted(all_env_names())


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean environment: no omoide variable set, cwd and home empty dirs in tmp_path."""
    for name in ALL_NAMES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    cwd = tmp_path / "project"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    (tmp_path / "home" / ".omoide").mkdir(parents=True)
    return tmp_path / "home"


def _write(path: Path, **values: str) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))


def test_defaults(home: Path) -> None:
    settings = load_settings(home=home)
    assert (settings.server.host, settings.server.port, settings.server.api_key) == (
        "127.0.0.1",
        8000,
        None,
    )
    assert settings.store.db_path == Path("~/.omoide/omoide.db").expanduser()
    assert settings.server.tenant_keys == {}


def test_process_env_beats_home_env_beats_cwd_env(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(Path(".env"), PORT="1111", MEMORY_API_KEY="cwd-key", OMOIDE_LOG_LEVEL="DEBUG")
    _write(home / ".omoide" / ".env", PORT="2222", MEMORY_API_KEY="home-key")
    monkeypatch.setenv("PORT", "3333")
    settings = load_settings(home=home)
    assert settings.server.port == 3333  # process environment
    assert settings.server.api_key is not None
    assert settings.server.api_key.get_secret_value() == "home-key"  # ~/.omoide/.env over ./.env
    assert settings.server.log_level == "DEBUG"  # only in ./.env


def test_cwd_env_is_used_without_a_home_env(home: Path) -> None:
    _write(Path(".env"), IP="localhost", PORT="9000")
    settings = load_settings(home=home)
    assert (settings.server.host, settings.server.port) == ("localhost", 9000)


@pytest.mark.parametrize("where", ["process", "home", "cwd"])
def test_an_empty_value_means_not_set(
    home: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    empty = {"MEMORY_DATA_DIR": "", "MEMORY_API_KEY": "", "PORT": "", "DB_URL": ""}
    if where == "process":
        for name, value in empty.items():
            monkeypatch.setenv(name, value)
    else:
        _write(home / ".omoide" / ".env" if where == "home" else Path(".env"), **empty)
    settings = load_settings(home=home)
    assert settings.store.data_dir == Path("~/.omoide")  # not the working directory
    assert settings.store.db_path == Path("~/.omoide/omoide.db").expanduser()
    assert settings.server.api_key is None and settings.server.port == 8000


def test_an_empty_home_value_does_not_hide_the_cwd_value(home: Path) -> None:
    _write(Path(".env"), MEMORY_DATA_DIR="/srv/omoide")
    _write(home / ".omoide" / ".env", MEMORY_DATA_DIR="")
    assert load_settings(home=home).store.data_dir == Path("/srv/omoide")


ALIASES = {
    "IP": ("host", "0.0.0.0"),
    "PORT": ("port", 8123),
    "MEMORY_API_KEY": ("api_key", "k"),
    "MEMORY_DATA_DIR": ("data_dir", Path("/data")),
    "MODEL_PROVIDER": ("llm_provider", "openai"),
    "MODEL_NAME": ("llm_model", "gpt-x"),
    "API_KEY": ("llm_api_key", "llm-k"),
    "API_BASE": ("llm_base_url", "http://llm:8000/v1"),
    "EMBED_MODEL_NAME": ("embed_model", "bge-small"),
    "EMBED_API_KEY": ("embed_api_key", "emb-k"),
    "EMBED_API_BASE": ("embed_api_base", "http://emb:8000/v1"),
    "DB_URL": ("db_url", "sqlite:////data/m.db"),
}


@pytest.mark.parametrize("alias", list(ALIASES))
def test_jiuwen_aliases(home: Path, monkeypatch: pytest.MonkeyPatch, alias: str) -> None:
    field, expected = ALIASES[alias]
    monkeypatch.setenv(alias, str(expected))
    got = value(load_settings(home=home), field)
    got = got.get_secret_value() if hasattr(got, "get_secret_value") else got
    assert got == expected
    assert env_names(field)[0] == f"OMOIDE_{field.upper()}"


def test_the_omoide_name_wins_over_the_alias(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "1")
    monkeypatch.setenv("OMOIDE_PORT", "2")
    assert load_settings(home=home).server.port == 2


def test_tenant_keys_are_json(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = '{"k1": {"user_id": "alice"}, "k2": {"user_id": "b", "scope_id": "s"}}'
    monkeypatch.setenv("OMOIDE_TENANT_KEYS", keys)
    keys = load_settings(home=home).server.tenant_keys
    assert (keys["k1"].user_id, keys["k1"].scope_id) == ("alice", None)
    assert (keys["k2"].user_id, keys["k2"].scope_id) == ("b", "s")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("PORT", "abc", "invalid setting PORT: Input should be a valid integer"),
        ("OMOIDE_PORT", "-1", "invalid setting OMOIDE_PORT"),
        ("OMOIDE_EMBEDDER", "magic", "invalid setting OMOIDE_EMBEDDER"),
        ("OMOIDE_TENANT_KEYS", '{"secret-k": 5', "invalid setting OMOIDE_TENANT_KEYS: not valid"),
        # The dict key is the secret: the place is named without it (issue 15, point 6).
        ("OMOIDE_TENANT_KEYS", '{"secret-k": {}}', "OMOIDE_TENANT_KEYS (at <key>.user_id)"),
    ],
)
def test_invalid_values_name_the_variable(
    home: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(InvalidInput) as raised:
        load_settings(home=home)
    assert message in str(raised.value)
    if name == "OMOIDE_TENANT_KEYS":
        assert "got" not in str(raised.value)  # a secret is never echoed
        assert "secret-k" not in str(raised.value)


def test_an_invalid_value_in_a_dotenv_file_names_the_variable(home: Path) -> None:
    _write(home / ".omoide" / ".env", IP="127.0.0.1", PORT="http")
    with pytest.raises(InvalidInput, match="invalid setting PORT"):
        load_settings(home=home)


def test_a_dotenv_file_that_is_not_utf8_is_named(home: Path) -> None:
    # python-dotenv's UnicodeDecodeError was a traceback from every command and the server.
    env = home / ".omoide" / ".env"
    env.parent.mkdir(parents=True, exist_ok=True)
    env.write_bytes(b"PORT=8080\n\xff\xfeIP=1\n")
    with pytest.raises(InvalidInput, match=r"\.omoide/\.env is not UTF-8 text"):
        load_settings(home=home)


@pytest.mark.parametrize(
    ("host", "key", "refused"),
    [
        ("127.0.0.1", None, False),
        ("localhost", None, False),
        ("::1", None, False),
        ("127.0.0.2", None, False),
        ("0.0.0.0", None, True),
        ("192.168.1.10", None, True),
        ("example.com", None, True),
        ("0.0.0.0", "secret", False),
    ],
)
def test_check_exposure(host: str, key: str | None, refused: bool) -> None:
    settings = Settings(host=host, api_key=key, tenant_keys={})
    if refused:
        with pytest.raises(InvalidInput, match="MEMORY_API_KEY"):
            settings.server.check_exposure()
    else:
        settings.server.check_exposure()


def test_every_setting_sits_in_one_group_under_its_flat_name() -> None:
    """The groups hold every setting once, and ``SETTINGS`` names each by its OMOIDE_ name."""
    paths = [s.path for s in SETTINGS.values()]
    assert len(paths) == len(set(paths))
    assert {p[0] for p in paths} == set(Settings.model_fields)
    for name, setting in SETTINGS.items():
        assert setting.env[0] == f"OMOIDE_{name.upper()}"
    assert isinstance(Settings().knowledge, KnowledgeConfig)  # the engine's object itself


def test_flat_keywords_and_environment_names_reach_their_groups(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMOIDE_CHUNK_TOKEN_SIZE", "77")
    monkeypatch.setenv("EMBED_MODEL_NAME", "bge-small")
    monkeypatch.setenv("OMOIDE_JOB_LEASE_S", "30")
    settings = load_settings(home=home, port=9001, llm_base_url="http://llm/v1", chunk_lookback=1)
    assert settings.server.port == 9001
    assert settings.llm.base_url == "http://llm/v1" and settings.llm.enabled
    assert settings.knowledge.chunks.chunk_estimated_token_size == 77
    assert settings.knowledge.chunks.lookback_start_turn == 1
    assert settings.embed.model == "bge-small"
    assert settings.jobs.lease_s == 30
    # what was set, and only that, is marked set (nexus-memory-service asks about the port)
    assert settings.server.model_fields_set == {"port"}


def test_a_flat_keyword_wins_over_the_environment(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMOIDE_CONTEXT_RECENT_TURNS", "9")
    monkeypatch.setenv("PORT", "1")
    settings = load_settings(home=home, context_recent_turns=3, port=2)
    assert (settings.knowledge.recent_turns, settings.server.port) == (3, 2)
    assert load_settings(home=home).knowledge.recent_turns == 9


def test_updated_changes_settings_by_flat_name() -> None:
    settings = Settings(host="0.0.0.0", api_key="k")
    changed = settings.updated(port=3002, chunk_max_messages=2, compat_nexus=False)
    assert (changed.server.port, changed.server.host) == (3002, "0.0.0.0")
    assert changed.knowledge.chunks.max_messages_between_chunks == 2
    assert changed.compat.nexus is False
    assert (settings.server.port, settings.compat.nexus) == (8000, True)  # a copy
    with pytest.raises(KeyError):
        settings.updated(no_such_setting=1)


@pytest.mark.parametrize(
    ("raw", "threshold"), [("off", None), ("OFF ", None), ("1234", 1234), ("many", 50_000)]
)
def test_the_ann_threshold_is_a_setting(
    home: Path, monkeypatch: pytest.MonkeyPatch, raw: str, threshold: int | None
) -> None:
    """A number, ``off``, or (as before it was a setting) anything else: the default."""
    monkeypatch.setenv("OMOIDE_ANN_THRESHOLD", raw)
    monkeypatch.setenv("OMOIDE_ANN_EF", "64")
    settings = load_settings(home=home)
    assert settings.store.ann_threshold == threshold
    assert settings.store.ann_ef == 64


def test_an_invalid_knowledge_value_names_the_variable(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMOIDE_CHUNK_MAX_MESSAGES", "0")
    with pytest.raises(InvalidInput, match="invalid setting OMOIDE_CHUNK_MAX_MESSAGES"):
        load_settings(home=home)


def _reads_environment(tree: ast.AST) -> bool:
    """Whether a module reads ``os.environ`` / ``os.getenv``; ``os.environ.setdefault(...)``
    (a library's own variables, set before it loads) writes and does not count."""
    writes = {
        id(node.func.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "setdefault"
    }
    names = ("environ", "getenv")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in names and id(node) not in writes:
            return True
        imported = isinstance(node, ast.ImportFrom) and node.module == "os"
        if imported and any(alias.name in names for alias in node.names):  # type: ignore[attr-defined]
            return True
    return False


def test_no_module_but_config_reads_the_environment() -> None:
    readers = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        if _reads_environment(tree):
            readers.append(str(path.relative_to(PACKAGE)))
    assert readers == ["config.py"]


def test_every_environment_name_is_documented() -> None:
    page = (PACKAGE.parent / "docs" / "configuration.md").read_text()
    missing = [name for name in sorted(all_env_names()) if f"`{name}`" not in page]
    assert missing == []
