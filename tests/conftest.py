"""Shared pytest fixtures: the anyio backend, and ``McpServers`` that are closed when the test ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, AsyncExitStack, ExitStack
from typing import Any, TypeVar

import pytest

from langgraph_mcp import McpServers

T = TypeVar("T")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class OpenServers:
    """``open_servers(config, **kwargs)`` makes an ``McpServers`` that is closed when the test ends, pass or fail.

    ``await open_servers.enter(cm)`` enters an async context manager for the rest of the test (a live HTTP
    server: ``tests.helpers.demo_entry("http", era)``, ``http_demo_server()``); everything unwinds last-in
    first-out, so the ``McpServers`` made after it are closed before it stops (a server waiting for its
    clients to hang up would otherwise wait forever).
    """

    def __init__(self, stack: AsyncExitStack) -> None:
        self._stack = stack

    def __call__(self, config: Any, **kwargs: Any) -> McpServers:
        servers = McpServers(config, **kwargs)
        self._stack.push_async_callback(servers.aclose)
        return servers

    async def enter(self, context: AbstractAsyncContextManager[T]) -> T:
        return await self._stack.enter_async_context(context)


class OpenServersSync:
    """:class:`OpenServers` for synchronous tests: ``close()`` at the end, ``enter`` takes a sync context manager."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack

    def __call__(self, config: Any, **kwargs: Any) -> McpServers:
        servers = McpServers(config, **kwargs)
        self._stack.callback(servers.close)
        return servers

    def enter(self, context: AbstractContextManager[T]) -> T:
        return self._stack.enter_context(context)


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
