"""A private event loop on a background thread, so prompts can run on the main thread.

Prompts must block the main thread (so Ctrl-C raises ``KeyboardInterrupt`` right at the prompt), while MCP
connections and the async checkpointer need one long-lived event loop: connections are bound to the loop they
were opened in. The graph runs on this loop; the main thread waits for each run and answers interrupts in
between.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["BackgroundLoop"]


class BackgroundLoop:
    """Runs coroutines on one event loop owned by a daemon thread; :meth:`run` blocks until each finishes."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="langgraph-mcp-cli", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and return its result.

        Ctrl-C while waiting cancels the coroutine (waiting briefly for it to unwind) and re-raises
        ``KeyboardInterrupt`` on the main thread.
        """
        done = threading.Event()
        holder: list[asyncio.Task[T]] = []

        def start() -> None:
            task = self.loop.create_task(coro)
            task.add_done_callback(lambda _: done.set())
            holder.append(task)

        self.loop.call_soon_threadsafe(start)
        try:
            done.wait()
        except KeyboardInterrupt:
            self.loop.call_soon_threadsafe(lambda: holder and holder[0].cancel())
            done.wait(10)
            raise
        return holder[0].result()

    def close(self) -> None:
        """Stop the loop and its thread (run cleanup coroutines with :meth:`run` first)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        with contextlib.suppress(RuntimeError):
            self.loop.close()
