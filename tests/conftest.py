"""Shared pytest fixtures: the anyio backend, and ``McpServers`` that are closed when the test ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack

import pytest

from tests.helpers import OpenServers, OpenServersSync


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
