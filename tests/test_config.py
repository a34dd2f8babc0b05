"""Settings: OMOIDE_* names and JiuwenMemory aliases, .env precedence, empty values, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide.config import Settings, env_names, load_settings
from omoide.errors import InvalidInput

ALL_NAMES = sorted({n for field in Settings.model_fields for n in env_names(field)})


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
    assert (load_settings(home=home).host, load_settings(home=home).port) == ("localhost", 9000)


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
    assert load_settings(home=home).data_dir == Path("/srv/omoide")


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
    value = getattr(load_settings(home=home), field)
    value = value.get_secret_value() if hasattr(value, "get_secret_value") else value
    assert value == expected
    assert env_names(field)[0] == f"OMOIDE_{field.upper()}"


def test_the_omoide_name_wins_over_the_alias(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "1")
    monkeypatch.setenv("OMOIDE_PORT", "2")
    assert load_settings(home=home).port == 2


def test_tenant_keys_are_json(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = '{"k1": {"user_id": "alice"}, "k2": {"user_id": "b", "scope_id": "s"}}'
    monkeypatch.setenv("OMOIDE_TENANT_KEYS", keys)
    keys = load_settings(home=home).tenant_keys
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
