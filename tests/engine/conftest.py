"""The engine tier: this repository's ``langgraph.json`` on a real multi-process LangGraph Server.

Two ``langgraph-api`` processes (``langhost serve``, the ``langgraph-runtime-pg`` runtime: see
``engine_setup.py``) share one PostgreSQL database and one Redis, serve the repository's ``langgraph.json`` from
the project root, and are driven with ``langgraph_sdk``. Side effects are counted by the demo MCP server itself
(``DEMO_EVENTS_FILE``, one JSON line per tool event with the server's pid).

Running it
    ``python -m pytest -m engine tests/engine -q`` (what ``.ci/run`` does), or set ``LANGGRAPH_MCP_ENGINE=1`` to
    run it with any other selection; a plain ``pytest`` skips it. It needs the Debian packages ``postgresql`` and
    ``redis-server`` and the runtime's venv (installed on first use, about a minute cold, nothing warm). A part
    that is missing skips the tier locally, saying which, and FAILS it when ``LANGGRAPH_MCP_REQUIRE_ENGINE=1``
    (``.ci/run`` sets it), so a broken setup never passes CI by skipping.

Every process the tier starts (PostgreSQL unless CI's, Redis, the API processes and their MCP servers) it stops.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from tests.engine import engine_setup
from tests.support import pg_cluster

HERE = Path(__file__).resolve().parent
ENABLE_ENV = "LANGGRAPH_MCP_ENGINE"
REQUIRE_ENV = "LANGGRAPH_MCP_REQUIRE_ENGINE"


def _selected(config: pytest.Config) -> bool:
    if os.environ.get(ENABLE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
        return True
    markexpr = str(config.getoption("markexpr", "") or "")
    return "engine" in markexpr and "not engine" not in markexpr


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    selected = _selected(config)
    skip = pytest.mark.skip(reason=f"engine tier: run with `-m engine` or {ENABLE_ENV}=1")
    for item in items:
        if HERE not in Path(str(item.fspath)).resolve().parents:
            continue
        item.add_marker(pytest.mark.engine)
        item.add_marker(pytest.mark.slow)
        if not selected:
            item.add_marker(skip)


def unavailable(reason: str) -> NoReturn:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"engine tier required ({REQUIRE_ENV}=1) but unavailable: {reason}", pytrace=False)
    pytest.skip(f"engine tier skipped: {reason}")


@pytest.fixture(scope="session")
def engine_venv() -> Path:
    """The runtime's venv (``langhost``, ``langgraph-runtime-pg``, this checkout), installed if needed."""
    try:
        return engine_setup.install()
    except (engine_setup.EngineUnavailable, OSError) as exc:
        unavailable(str(exc))


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """A fresh database for the runtime (its tables and the checkpoints), on CI's server or a throwaway cluster."""
    import psycopg

    server = os.environ.get(pg_cluster.DSN_ENV)
    root = None
    if not server:
        try:
            root, server = pg_cluster.start()
        except pg_cluster.PgUnavailable as exc:
            unavailable(str(exc))
    name = f"lgmcp_engine_{os.getpid()}"
    try:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
        yield server.rsplit("/", 1)[0] + f"/{name}"
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        if root is not None:
            pg_cluster.stop(root)


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        engine_setup.redis_binary()
    except engine_setup.EngineUnavailable as exc:
        unavailable(str(exc))
    with engine_setup.redis_server(tmp_path_factory.mktemp("redis")) as uri:
        yield uri
