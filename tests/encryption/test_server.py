"""A server started with OMOIDE_ENCRYPTION_KEY serves over real HTTP and writes nothing in
plaintext; started with a wrong key (a real ``omoide serve`` process) it refuses with a message
that names the problem and not the key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from omoide import Memory
from omoide.config import load_settings
from omoide.serve.app import create_app
from omoide.store.sqlite import cipher
from tests.api.conftest import LiveServer, make_settings
from tests.api.test_serve import _env
from tests.encryption.conftest import SENTENCE, holds_plaintext

KEY = "server side passphrase"


def test_a_server_with_a_key_serves_over_http_and_stores_nothing_plain(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    settings = make_settings(db_url=f"sqlite:///{db}", embedder="hash", encryption_key=KEY)
    live = LiveServer(create_app(settings)).start()
    try:
        with httpx.Client(base_url=live.url, timeout=60) as http:
            made = http.post("/v1/memories", json={"text": SENTENCE.decode(), "user_id": "al"})
            assert made.status_code == 201, made.text
            found = http.post(
                "/v1/memories/search", json={"query": "violet walrus", "user_id": "al"}
            )
            assert found.status_code == 200, found.text
            assert found.json()["hits"][0]["memory"]["text"] == SENTENCE.decode()
            assert http.get("/health").status_code == 200
        wal = db.with_name(db.name + "-wal")
        assert not holds_plaintext(db) and not holds_plaintext(wal)
    finally:
        live.stop()
    assert cipher.is_encrypted(db) and not holds_plaintext(db)


def test_a_server_with_a_wrong_key_refuses_to_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = _env(tmp_path, OMOIDE_ENCRYPTION_KEY=KEY, PORT="0")
    # the encrypted database where the server looks for it (written here: the processes of
    # this test are the servers that must refuse it)
    settings = load_settings(embedder="hash", encryption_key=KEY, data_dir=data)
    with Memory(data / "omoide.db", settings=settings, workers=0) as made:
        made.add("kept safe")
    for key in ("the wrong passphrase", None):
        values = {"OMOIDE_ENCRYPTION_KEY": key} if key else {}
        run_env = {k: v for k, v in env.items() if k != "OMOIDE_ENCRYPTION_KEY"} | values
        done = subprocess.run(
            [sys.executable, "-m", "omoide", "serve"],
            env=run_env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode != 0
        assert "cannot open" in done.stderr and "OMOIDE_ENCRYPTION_KEY" in done.stderr
        assert "Uvicorn running" not in done.stderr and "Traceback" not in done.stderr
        assert key is None or key not in done.stderr + done.stdout
    assert cipher.is_encrypted(data / "omoide.db")
