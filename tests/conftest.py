"""Shared pytest fixtures: the anyio backend, and ``McpServers`` that are closed when the test ends."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack

import pytest

from tests.helpers import OpenServers, OpenServersSync

# A test run started with SIGINT ignored (a background job, nohup, some CI runners) passes that on to every
# process it starts, and Ctrl-C tests (the CLI under a terminal, the background loop) then wait forever.
# With a handler installed here, this process gets KeyboardInterrupt and its children start with the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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
