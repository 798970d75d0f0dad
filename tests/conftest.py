"""Shared pytest fixtures (the anyio backend, ``McpServers`` closed when the test ends) and the ``slow`` set.

The README's fast subset is ``pytest -m "not slow"``: every test except those marked ``slow`` by hand and the
modules in :data:`SLOW_MODULES` (whole tiers that start many processes, kill servers, or run programs and
notebooks end to end).
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack

import pytest

from tests.support.helpers import OpenServers, OpenServersSync

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_MODULES or "interop" in item.path.parts:
            item.add_marker(pytest.mark.slow)


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
