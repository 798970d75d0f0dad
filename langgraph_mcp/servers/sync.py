"""Sync callers: the package's private background loop and the bridge onto it.

A private event loop on a daemon thread, for synchronous callers: ``McpServers``' sync API and the CLI.

MCP connections (and an async checkpointer) are bound to the event loop that opened them, so code with no loop
running — a synchronous ``graph.invoke``, the CLI, whose prompts block the main thread so that Ctrl-C stops right
at a prompt — runs its coroutines on one long-lived loop owned by a background thread.
:meth:`BackgroundLoop.run` blocks until the coroutine is done; Ctrl-C while waiting cancels it (waiting briefly for
it to unwind) and re-raises ``KeyboardInterrupt`` in the caller.

The sync bridge of ``McpServers``: its private background loop, started on first use, and the loop-thread guard.

Blocking a thread whose own event loop is running (a Jupyter cell: ``graph.invoke`` without ``await``) is fine
for work on the private loop: it never waits for the caller's loop (connections, locks and paused calls are kept
per loop). The two cases that would deadlock raise :class:`~langgraph_mcp.errors.EventLoopError` instead: a
synchronous call from the private loop's own thread (it would wait for itself), and ``close()`` from a loop that
still holds connections (only that loop can close them, and the call would be blocking it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from langgraph_mcp.errors import EventLoopError

T = TypeVar("T")


_UNWIND_TIMEOUT = 10.0
"""Seconds to wait, after Ctrl-C, for the cancelled coroutine to unwind (and, on close, for the thread)."""


class BackgroundLoop:
    """Runs coroutines on one event loop owned by a daemon thread; :meth:`run` blocks until each finishes."""

    def __init__(self, name: str = "langgraph-mcp-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(
        self,
        coro: Coroutine[Any, Any, T] | Callable[[], Coroutine[Any, Any, T]],
        *,
        context: contextvars.Context | None = None,
    ) -> T:
        """Run ``coro`` (or the coroutine a factory makes, on the loop's thread) and return its result.

        ``context`` is the context the task runs in (default: a copy of the caller's), so LangGraph's
        ``interrupt()``, config and stream writer work inside it.
        """
        done: concurrent.futures.Future[T] = concurrent.futures.Future()
        holder: list[asyncio.Task[T]] = []

        def start() -> None:
            try:
                made = coro if isinstance(coro, Coroutine) else coro()
                task = self.loop.create_task(made, context=context)
            except BaseException as exc:
                done.set_exception(exc)
                return

            def finish(t: asyncio.Task[T]) -> None:
                if t.cancelled():
                    done.cancel()
                elif (error := t.exception()) is not None:
                    done.set_exception(error)
                else:
                    done.set_result(t.result())

            task.add_done_callback(finish)
            holder.append(task)

        try:
            # Inside the try: the coroutine may already run (and Ctrl-C arrive) before this call returns.
            self.loop.call_soon_threadsafe(start)
            return done.result()
        except KeyboardInterrupt:
            self.loop.call_soon_threadsafe(lambda: holder and holder[0].cancel())
            with contextlib.suppress(BaseException):
                done.result(timeout=_UNWIND_TIMEOUT)
            raise

    def in_loop_thread(self) -> bool:
        """Whether the caller runs on this loop's own thread (where :meth:`run` would wait for itself)."""
        return threading.current_thread() is self._thread

    def close(self) -> None:
        """Stop the loop and its thread (run cleanup coroutines with :meth:`run` first)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is self._thread:
            return  # stopping from inside: the loop ends when this callback returns
        self._thread.join(timeout=_UNWIND_TIMEOUT)
        if not self._thread.is_alive():
            with contextlib.suppress(RuntimeError):
                self.loop.close()


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def run_in_new_thread(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run(make())`` on a short-lived thread: for a caller whose own thread already runs a loop."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def main() -> None:
        try:
            outcome.append(asyncio.run(make()))
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=main, name="langgraph-mcp-close", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


def close_from_sync(
    aclose: Callable[[], Coroutine[Any, Any, None]], holds: Callable[[asyncio.AbstractEventLoop], bool]
) -> None:
    """Run ``aclose()`` to its end from synchronous code: here, or on a short-lived thread when this thread runs a
    loop; raises :class:`~langgraph_mcp.errors.EventLoopError` when that loop ``holds`` connections (only it can
    close them, and this call would be blocking it)."""
    loop = running_loop()
    if loop is None:
        asyncio.run(aclose())
        return
    if holds(loop):
        raise EventLoopError(
            "close() on McpServers was called from a thread whose running event loop holds some of its "
            "connections; only that loop can close them and close() would block it: await servers.aclose() "
            "there instead"
        )
    run_in_new_thread(aclose)


class SyncBridge:
    """One :class:`~langgraph_mcp.servers.sync.BackgroundLoop`, started by the first synchronous call."""

    def __init__(self, name: str = "langgraph-mcp-sync") -> None:
        self._name = name
        self._portal: BackgroundLoop | None = None
        self._lock = threading.Lock()

    def run(
        self, make: Callable[[], Coroutine[Any, Any, T]], *, context: contextvars.Context | None = None
    ) -> T:
        """Run ``make()`` on the background loop in ``context`` (default: a copy of the caller's).

        Works from a thread whose own loop is running (a notebook cell), which it blocks meanwhile; raises
        :class:`~langgraph_mcp.errors.EventLoopError` from the background loop's own thread.
        """
        portal = self._loop()
        if portal.in_loop_thread():
            raise EventLoopError(
                "a synchronous call on McpServers was made from inside a synchronous call of the same McpServers "
                "(its background loop's own thread: a sync interceptor or callback calling back), which would "
                "wait for itself forever; make that code async and await the call"
            )
        ctx = context if context is not None else contextvars.copy_context()
        return portal.run(make, context=ctx)

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
