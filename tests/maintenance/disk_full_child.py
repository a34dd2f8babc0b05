"""Child process for test_health.py: run inside a private mount namespace with a tiny tmpfs at
``argv[1]``, serve the API over a database there, add memories until one is refused, and print
the refusing reply (status and JSON body) and the number of memories stored."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.serve.app import create_app
from tests.api.conftest import make_settings


def main(folder: str) -> None:
    with Memory(Path(folder) / "full.db", embedder=HashEmbedder(), workers=0) as memory:
        app = create_app(make_settings(), memory=memory)
        with TestClient(app, base_url="http://127.0.0.1") as http:
            for i in range(100_000):
                body = {"text": f"note {i} " + "tea " * 1000, "user_id": "alice"}
                reply = http.post("/v1/memories", json=body)
                if reply.status_code != 201:
                    break
            stored = memory.get_all(user_id="alice").total
        refused = {"status": reply.status_code, "body": reply.json(), "added": i}
        sys.stdout.write(json.dumps(refused) + "\n" + json.dumps({"stored": stored}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
