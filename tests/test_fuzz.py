"""A bounded schemathesis run against a real server's live OpenAPI: no 5xx on any operation.

Every operation of /v1 and of the three compatibility interfaces, with the key (the routes run)
and without it (401 everywhere but ``/`` and ``/health``). The phases are schemathesis's
examples, coverage (boundary values: empty strings, huge integers, wrong types, missing fields)
and fuzzing, capped per operation so the run takes a minute or two on 2 busy cores. The seed is
fixed so CI is reproducible; set ``OMOIDE_FUZZ_SEED`` to explore others, and
``OMOIDE_FUZZ_EXAMPLES`` for a longer run. A failure prints schemathesis's report with a curl
line for each failing request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from omoide import Memory
from omoide.embed import HashEmbedder
from tests.api.conftest import KEY, running

CONFIG = Path(__file__).with_name("fuzz") / "schemathesis.toml"
SEED = os.environ.get("OMOIDE_FUZZ_SEED", "1")
EXAMPLES = os.environ.get("OMOIDE_FUZZ_EXAMPLES", "5")
ALL = "examples,coverage,fuzzing"
ST = "from schemathesis.cli import schemathesis; schemathesis()"


def _schemathesis(
    location: str, url: str, report: Path, *, key: str | None, examples: str, phases: str
) -> dict[str, Any]:
    command = [sys.executable, "-c", ST, "--config-file", str(CONFIG), "run", location]
    command += [f"--url={url}"]
    command += ["-H", f"Authorization: Bearer {key}"] if key else []
    command += [
        "--checks=not_a_server_error",
        f"--phases={phases}",
        f"--max-examples={examples}",
        f"--seed={SEED}",
        "--workers=1",
        "--generation-database=none",
        "--request-timeout=60",
        "--no-color",
        "--report=json",
        f"--report-json-path={report}",
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=900, check=False, cwd=report.parent
    )
    assert report.exists(), (
        f"schemathesis did not run:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    result: dict[str, Any] = json.loads(report.read_text())
    problems = result["failures"] or result["errors"] or result["exit_code"] != 0
    assert not problems, f"{result['failures']} {result['errors']}\n{done.stdout[-12000:]}"
    return result


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_no_operation_answers_a_server_error(tmp_path: Path) -> None:
    engine = Memory(tmp_path / "fuzz.db", embedder=HashEmbedder(), workers=1)
    with running(tmp_path / "fuzz.db", HashEmbedder(), engine=engine, api_key=KEY) as server:
        live = f"{server.url}/openapi.json"
        with_key = _schemathesis(
            live, server.url, tmp_path / "key.json", key=KEY, examples=EXAMPLES, phases=ALL
        )
        # Without a key /openapi.json is a 401 too: the same document, read with the key.
        document = tmp_path / "openapi.json"
        with server.http(KEY) as http:
            document.write_text(http.get("/openapi.json").text)
        # The key is checked before anything else: boundary values add nothing here.
        without = _schemathesis(
            str(document),
            server.url,
            tmp_path / "nokey.json",
            key=None,
            examples="3",
            phases="examples,fuzzing",
        )
    for result in (with_key, without):
        operations = result["operations"]
        assert operations["tested"] == operations["total"] > 70, operations
        assert result["test_cases"]["generated"] > 2 * operations["total"]
    sys.stderr.write(
        f"fuzz: {with_key['test_cases']['generated']} cases with a key, "
        f"{without['test_cases']['generated']} without, over "
        f"{with_key['operations']['total']} operations\n"
    )
