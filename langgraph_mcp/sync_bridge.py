"""The sync bridge of ``McpServers``: its private background loop, started on first use, and the loop-thread guard."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from langgraph_mcp.background_loop import BackgroundLoop
from langgraph_mcp.errors import EventLoopError

T = TypeVar("T")


def refuse_inside_loop(what: str, instead: str) -> None:
    """Raise :class:`~langgraph_mcp.errors.EventLoopError` when called from a thread running an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise EventLoopError(
        f"{what} on McpServers was made from a thread that is running an event loop, which it would block; "
        f"{instead}, or run the graph with ainvoke/astream"
    )


class SyncBridge:
    """One :class:`~langgraph_mcp.background_loop.BackgroundLoop`, started by the first synchronous call."""

    def __init__(self, name: str = "langgraph-mcp-sync") -> None:
        self._name = name
        self._portal: BackgroundLoop | None = None
        self._lock = threading.Lock()

    def run(
        self, make: Callable[[], Coroutine[Any, Any, T]], *, context: contextvars.Context | None = None
    ) -> T:
        """Run ``make()`` on the background loop in ``context`` (default: a copy of the caller's)."""
        refuse_inside_loop("a synchronous call", "use the async API (await ...)")
        ctx = context if context is not None else contextvars.copy_context()
        return self._loop().run(make, context=ctx)

    def _loop(self) -> BackgroundLoop:
        with self._lock:
            if self._portal is None:
                self._portal = BackgroundLoop(self._name)
            return self._portal

    def close(self) -> None:
        with self._lock:
            portal, self._portal = self._portal, None
        if portal is not None:
            portal.close()
