"""Shared pytest fixtures (the anyio backend, ``McpServers`` closed when the test ends, the checkpointer) and the
``slow`` set.

The README's fast subset is ``pytest -m "not slow"``: every test except those marked ``slow`` by hand and the
modules in :data:`SLOW_MODULES` (whole tiers that start many processes, kill servers, or run programs and
notebooks end to end).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_mcp.policy.binding import machine_key
from tests.support.checkpointers import (
    DEFAULT_KIND,
    KINDS,
    kinds_from_option,
    open_checkpointer,
    open_sync_checkpointer,
)
from tests.support.helpers import OpenServers, OpenServersSync

# This machine's approval key (langgraph_mcp.policy.binding.machine_key) is kept in a data directory of the test
# run, shared by the processes the tests start, never in the user's own; a test that needs another machine's key
# sets LANGGRAPH_MCP_DATA_DIR itself (or a key).
if not os.environ.get("LANGGRAPH_MCP_DATA_DIR"):
    _DATA_DIR = tempfile.mkdtemp(prefix="langgraph-mcp-tests-")
    os.environ["LANGGRAPH_MCP_DATA_DIR"] = _DATA_DIR
    atexit.register(shutil.rmtree, _DATA_DIR, True)
machine_key()  # made now, outside any event loop (on one it is only read: the package was imported before)

# A test run started with SIGINT ignored (a background job, nohup, some CI runners) passes that on to every
# process it starts, and Ctrl-C tests (the CLI under a terminal, the background loop) then wait forever.
# With a handler installed here, this process gets KeyboardInterrupt and its children start with the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


SLOW_MODULES = frozenset(
    {
        "test_cli.py",
        "test_cli_hints.py",
        "test_cli_policy.py",
        "test_cli_terminal.py",
        "test_failed_start.py",
        "test_fault_matrix.py",
        "test_faults.py",
        "test_http_request_faults.py",
        "test_load.py",
        "test_mcp_tasks.py",
        "test_multiworker.py",
        "test_node_durable.py",
        "test_notebooks.py",
        "test_oauth.py",
        "test_readme.py",
        "test_reconnect.py",
        "test_studio.py",
    }
)
"""Test modules that are slow as a whole: ``pytest -m "not slow"`` leaves them out."""


CHECKPOINTER_FIXTURES = ("checkpointer", "sync_checkpointer")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--checkpointers",
        default=DEFAULT_KIND,
        help=f"the checkpointer kinds a test using the checkpointer fixture runs on: 'all' or a comma-separated "
        f"list of {', '.join(KINDS)} (default: {DEFAULT_KIND})",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``--checkpointers`` naming several kinds runs each test that takes a checkpointer once per kind."""
    kinds = kinds_from_option(metafunc.config.getoption("--checkpointers"))
    chosen = {arg for mark in metafunc.definition.iter_markers("parametrize") for arg in _argnames(mark)}
    for name in CHECKPOINTER_FIXTURES:
        if name in metafunc.fixturenames and name not in chosen and len(kinds) > 1:
            metafunc.parametrize(name, kinds, indirect=True)


def _argnames(mark: pytest.Mark) -> list[str]:
    names = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
    return [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)


def _kind(request: pytest.FixtureRequest) -> str:
    if hasattr(request, "param"):
        return str(request.param)
    return kinds_from_option(request.config.getoption("--checkpointers"))[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_MODULES or "interop" in item.path.parts:
            item.add_marker(pytest.mark.slow)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(name in params for name in CHECKPOINTER_FIXTURES):
            item.add_marker(pytest.mark.checkpointer_kinds)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def open_servers() -> AsyncIterator[OpenServers]:
    """:class:`OpenServers` for an async (anyio) test; closes in the test's own event loop."""
    async with AsyncExitStack() as stack:
        yield OpenServers(stack)


@pytest.fixture
def open_servers_sync() -> Iterator[OpenServersSync]:
    """:class:`OpenServersSync` for a synchronous test."""
    with ExitStack() as stack:
        yield OpenServersSync(stack)


@pytest.fixture
async def checkpointer(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """A checkpointer for an async graph: one of ``KINDS`` (tests/support/checkpointers.py), ``strict`` by default.

    The ``strict`` one fails the test when anything saved in a checkpoint does not come back as itself.
    """
    path = tmp_path_factory.mktemp("checkpointer") / "checkpoints.sqlite"  # not the test's own tmp_path
    async with open_checkpointer(_kind(request), path) as saver:
        yield saver


@pytest.fixture
def sync_checkpointer(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BaseCheckpointSaver[Any]]:
    """:func:`checkpointer` for a graph run with ``invoke``/``stream`` (``sqlite`` is the sync ``SqliteSaver``)."""
    path = tmp_path_factory.mktemp("checkpointer") / "checkpoints.sqlite"
    with open_sync_checkpointer(_kind(request), path) as saver:
        yield saver
