"""Responses bounded in size (issue 36, findings 4 and 10): a page sent whole is refused with
413 naming ``OMOIDE_MAX_RESPONSE_BYTES`` past the limit, the CSV message export streams (the
limit does not apply, its rows arrive in order across many pages), and its cells never start
a spreadsheet formula."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

from tests.compat.conftest import StartServer

TENANT = {"user_id": "u", "scope_id": "s"}
START = datetime(2026, 1, 1, tzinfo=UTC)
LIMIT = 4096


def _turns(count: int, text: str = "turn {i:04d} " + "x" * 60) -> list[dict[str, str]]:
    return [
        {
            "role": "user",
            "content": text.format(i=i),
            "timestamp": (START + timedelta(seconds=i)).isoformat(),
        }
        for i in range(count)
    ]


def test_a_page_past_the_byte_limit_is_refused_naming_it(start_server: StartServer) -> None:
    server = start_server(max_response_bytes=LIMIT)
    server.engine.add(_turns(120), **TENANT, session_id="s1", infer=False)
    with server.http() as http:
        small = http.get("/v1/memories", params=TENANT | {"limit": 5})
        assert small.status_code == 200 and len(small.json()["items"]) == 5
        # read a part at a time, refused before the whole page is in memory
        big = http.get("/v1/memories", params=TENANT | {"limit": 120})
        assert big.status_code == 422, big.status_code
        assert "OMOIDE_MAX_RESPONSE_BYTES" in big.json()["detail"]
        # any other route's whole response is refused before it is sent
        episodes = http.get("/v1/sessions/s1/episodes", params=TENANT)
        assert episodes.status_code == 413, episodes.status_code
        assert "OMOIDE_MAX_RESPONSE_BYTES" in episodes.json()["detail"]
        assert episodes.json()["error"]["code"] == "response_too_large"
        assert http.get("/health").status_code == 200


def test_the_csv_export_streams_past_the_limit_in_order(start_server: StartServer) -> None:
    server = start_server(max_response_bytes=LIMIT)
    server.engine.add(_turns(450), **TENANT, session_id="s1", infer=False)
    with server.http() as http:
        whole = http.get("/admin/messages/export", params=TENANT)
        oldest = http.get("/admin/messages/export", params=TENANT | {"limit": 301})
    assert whole.status_code == 200 and len(whole.content) > LIMIT
    rows = list(csv.reader(io.StringIO(whole.text)))[1:]
    assert [r[6][:9] for r in rows] == [f"turn {i:04d}" for i in range(450)]
    rows = list(csv.reader(io.StringIO(oldest.text)))[1:]
    assert [r[6][:9] for r in rows] == [f"turn {i:04d}" for i in range(301)]


def test_csv_cells_never_start_a_formula(start_server: StartServer) -> None:
    server = start_server()
    hostile = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "plain"]
    messages = [
        {"role": "user", "content": text, "timestamp": (START + timedelta(seconds=i)).isoformat()}
        for i, text in enumerate(hostile)
    ]
    server.engine.add(messages, **TENANT, session_id="=cmd|' /C calc'!A0", infer=False)
    with server.http() as http:
        export = http.get("/admin/messages/export", params=TENANT)
    rows = list(csv.reader(io.StringIO(export.text)))[1:]
    assert [r[6] for r in rows] == ["'" + t for t in hostile[:-1]] + ["plain"]
    for row in rows:
        assert not [cell for cell in row if cell[:1] in ("=", "+", "-", "@", "\t", "\r")], row
