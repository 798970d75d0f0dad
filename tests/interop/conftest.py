"""The interop tier: our stack against real, unmodified third-party MCP servers from npm and PyPI.

Servers (pinned in ``servers_install.py``): ``@modelcontextprotocol/server-filesystem`` and ``server-memory``
(TypeScript SDK, handshake era), ``mcp-server-time`` / ``mcp-server-git`` 2026.10.19 (mcp 2.3: 2026-07-28 by
default, the handshake when forced) and the same at 2026.8.18 (mcp 1.30: handshake only).

Running it
    ``python -m pytest -m interop tests/interop -q`` (what ``.ci/run`` does), or set
    ``LANGGRAPH_MCP_INTEROP=1`` to run it with any other selection. A plain ``pytest`` skips every test here:
    the tier needs node/npm and the registries on a cold cache, and takes well under a minute on a warm one.

The cache
    The first run installs the servers into ``.cache/interop`` at the repository root (or
    ``$LANGGRAPH_MCP_INTEROP_CACHE``): about a minute cold, nothing warm.
    ``python tests/interop/servers_install.py`` pre-warms it. If the install fails the tier is skipped
    locally, but it FAILS when ``CI`` is set, so a broken install can never pass CI by skipping.

Isolation
    Every server works in a per-test temporary directory (filesystem sandbox, memory JSONL file, throwaway git
    repository); nothing outside ``tmp_path`` is written. Servers talk to us over stdio only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from servers_install import Installed, InstallError, install

HERE = Path(__file__).resolve().parent
ENABLE_ENV = "LANGGRAPH_MCP_INTEROP"


def _interop_selected(config: pytest.Config) -> bool:
    if os.environ.get(ENABLE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
        return True
    markexpr = str(config.getoption("markexpr", "") or "")
    return "interop" in markexpr and "not interop" not in markexpr


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    selected = _interop_selected(config)
    skip = pytest.mark.skip(
        reason=f"interop tier: run with `-m interop` or {ENABLE_ENV}=1 (needs node/npm and a server cache)"
    )
    for item in items:
        if HERE not in Path(str(item.fspath)).resolve().parents:
            continue
        item.add_marker(pytest.mark.interop)
        if not selected:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def installed() -> Installed:
    """The pinned servers, installed into the cache if needed. Fails (not skips) under CI."""
    try:
        result = install()
    except (InstallError, OSError) as exc:
        message = f"interop servers could not be installed: {exc}"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    if result.installed_now:
        sys.stderr.write(
            f"\n[interop] installed {', '.join(result.installed_now)} into {result.cache} "
            f"in {result.seconds:.1f}s\n"
        )
    return result


# ------------------------------------------------------------------------------------------- server specs
# Each factory returns one server's config entry (the dict shape McpServers accepts); keyword arguments are
# merged in (mode=..., roots=..., ...).

SpecFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """The filesystem server's allowed directory (resolved: the server reports real paths)."""
    path = (tmp_path / "sandbox").resolve()
    path.mkdir()
    return path


@pytest.fixture
def filesystem_spec(installed: Installed, sandbox: Path) -> SpecFactory:
    def make(**options: Any) -> dict[str, Any]:
        return {"command": installed.node, "args": [installed.filesystem_js, str(sandbox)], **options}

    return make


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    return tmp_path / "memory.jsonl"


@pytest.fixture
def memory_spec(installed: Installed, memory_file: Path) -> SpecFactory:
    def make(**options: Any) -> dict[str, Any]:
        return {
            "command": installed.node,
            "args": [installed.memory_js],
            "env": {"MEMORY_FILE_PATH": str(memory_file)},
            # server-memory reads, changes and rewrites one JSONL file per write with no lock: two concurrent
            # writes lose one of them (seen: a create next to a delete). Its calls must run one at a time.
            "exclusive_tools": "all",
            **options,
        }

    return make


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL
    ).stdout


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A throwaway repository with one commit (``README.md``) on ``main``."""
    repo = (tmp_path / "repo").resolve()
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "interop@example.invalid")
    _git(repo, "config", "user.name", "Interop Test")
    _git(repo, "config", "commit.gpgsign", "false")
    (repo / "README.md").write_text("hello\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "initial")
    return repo


@pytest.fixture
def git() -> Callable[..., str]:
    """``git(repo, *args)`` → stdout, for checking what the git server did."""
    return _git


@pytest.fixture
def time_spec(installed: Installed) -> Callable[..., dict[str, Any]]:
    """``time_spec(build="latest"|"old", **options)``."""

    def make(build: str = "latest", **options: Any) -> dict[str, Any]:
        servers = installed.latest if build == "latest" else installed.old
        return {"command": servers.time_command, "args": ["--local-timezone", "UTC"], **options}

    return make


@pytest.fixture
def git_spec(installed: Installed, git_repo: Path) -> Callable[..., dict[str, Any]]:
    """``git_spec(build="latest"|"old", **options)``, serving :func:`git_repo`."""

    def make(build: str = "latest", **options: Any) -> dict[str, Any]:
        servers = installed.latest if build == "latest" else installed.old
        return {"command": servers.git_command, "args": ["--repository", str(git_repo)], **options}

    return make
