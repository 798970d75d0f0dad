"""The engine tier's parts: a LangGraph Server runtime on PostgreSQL + Redis, in a venv of its own.

The runtime
    ``langgraph-api`` needs a runtime package for its storage and queue. LangChain's own PostgreSQL runtime
    ships only inside LangSmith Deployment's images (licensed); the one installable from PyPI today is the
    third-party ``langgraph-runtime-pg`` (MIT, ``LANGGRAPH_RUNTIME_EDITION=pg``) with its CLI ``langhost``
    (``langhost serve`` = ``langgraph-api``'s ``run_server`` with the pg edition, ``--database-uri`` and
    ``--redis-uri``). It pins an older ``langgraph-api`` and ``langgraph-checkpoint-postgres`` than this project's
    dev environment, so it lives in a venv of its own, with this repository's dependencies (not the repository:
    nothing is built in the checkout). The API processes import the checkout under test through ``PYTHONPATH``,
    and so does the demo server they start (``langgraph_mcp/examples/studio_servers.py``): one venv serves any
    checkout.

The cache
    ``$LANGGRAPH_MCP_ENGINE_CACHE`` or ``~/.cache/langgraph-mcp-engine``: the venv ``venv/`` and a marker naming
    the pins and a hash of ``pyproject.toml``; a matching marker means nothing is installed again. Pre-warm
    it with ``python tests/engine/engine_setup.py`` (what ``.ci/run`` does before the tier).

Only ``pip`` is used, against the registry this machine is set up for.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_ENV = "LANGGRAPH_MCP_ENGINE_CACHE"
PINS = {"langhost": "0.11.1.post1", "langgraph-runtime-pg": "0.11.1.post1"}
"""The runtime (pinned here, nowhere else); it pins ``langgraph-api==0.11.1`` and
``langgraph-checkpoint-postgres==3.1.0`` itself."""
MARKER = ".langgraph-mcp-engine.json"
INSTALL_TIMEOUT = 900


class EngineUnavailable(RuntimeError):
    """A part of the tier cannot be set up here (the message says which and why)."""


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "langgraph-mcp-engine")


def _wanted() -> dict[str, str]:
    pyproject = hashlib.sha256((REPO_ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    return {**PINS, "pyproject": pyproject}


@contextlib.contextmanager
def _locked(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _pip(venv: Path, *args: str) -> None:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise EngineUnavailable(
            f"pip install {' '.join(args)} failed:\n{(done.stderr or done.stdout)[-2000:]}"
        )


def install(*, force: bool = False) -> Path:
    """The runtime's venv (installed when missing or stale); returns the venv's directory."""
    cache = cache_dir()
    venv = cache / "venv"
    wanted = _wanted()
    with _locked(cache):
        marker = venv / MARKER
        have = json.loads(marker.read_text()) if marker.exists() and not force else {}
        if have == wanted and (venv / "bin" / "langhost").exists():
            return venv
        if force or any(have.get(name) != pin for name, pin in PINS.items()):
            shutil.rmtree(venv, ignore_errors=True)
            made = subprocess.run(
                [sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, check=False
            )
            if made.returncode != 0:
                raise EngineUnavailable(f"python -m venv failed: {made.stderr.strip()}")
            _pip(venv, *(f"{name}=={pin}" for name, pin in PINS.items()))
        # The project's dependencies only (not the project: nothing is built in the checkout); the checkout itself
        # is imported through PYTHONPATH.
        _pip(venv, *tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
        marker.write_text(json.dumps(wanted))
    return venv


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def redis_binary() -> str:
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    if found is None:
        raise EngineUnavailable("redis-server not found: install the Debian package `redis-server`")
    return found


@contextlib.contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A throwaway Redis on a free loopback port, no persistence; yields its URI and stops it on exit."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    with (workdir / "redis.log").open("wb") as log:
        process = subprocess.Popen([*argv, "--dir", str(workdir)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not _redis_pong(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise EngineUnavailable(
                    f"redis-server did not start: {(workdir / 'redis.log').read_text()[-800:]}"
                )
            time.sleep(0.1)  # polling another process's port, not synchronizing tasks
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _redis_pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


if __name__ == "__main__":
    started = time.monotonic()
    try:
        where = install(force="--force" in sys.argv[1:])
    except EngineUnavailable as exc:
        sys.exit(f"engine tier setup FAILED: {exc}")
    print(
        f"engine runtime ({', '.join(f'{k}=={v}' for k, v in PINS.items())}) in {where} ({time.monotonic() - started:.1f}s)"
    )
