"""The legacy call tasks of one client session: each in a fresh, minimal context, all ended with the session.

A legacy ``tools/call`` must be able to outlive the task that started it (a call waiting for a human's answer stays
open, parked, after its graph node was interrupted), so it runs in a task of its own. That task is created in a new
:class:`contextvars.Context` holding only what the call needs — the caller's OpenTelemetry context, so the SDK's
``MCP send`` span keeps its parent — and never a copy of the caller's context: a copy would keep the whole paused
graph run (pregel loop, scratchpad, callbacks) alive for as long as the call stays parked.

The tasks are not children of the owner's task group (starting one there costs several times a plain task), but
they end with it the same way: when the group is cancelled (stop, close, a failed transport), :meth:`CallTasks.hold`
cancels every call task and waits for them, so the client is exited only after its calls have ended.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from typing import Any

import anyio
from opentelemetry import context as otel_context


def call_context() -> contextvars.Context:
    """A fresh context for a call task: empty but for the caller's OpenTelemetry context (when there is one)."""
    context = contextvars.Context()
    trace = otel_context.get_current()
    if trace:  # an empty OTel context is the default: nothing to carry
        context.run(otel_context.attach, trace)
    return context


class CallTasks:
    """The call tasks of one session of a :class:`~langgraph_mcp.connection.owner.ClientOwner`."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self.ended = False
        """The session is over: no call task starts any more."""

    def start(self, coro: Coroutine[Any, Any, None]) -> bool:
        """Run ``coro`` in a task of its own, in a :func:`call_context`; ``False`` (``coro`` closed, never run) once
        the session has ended. The coroutine calls :meth:`finished` with its task as the last thing it does."""
        if self.ended:
            coro.close()
            return False
        # No done callback to forget the task: one more loop callback on every call. A task is cancelled only once
        # it has started (see hold), so its own finally always runs.
        self._tasks.add(asyncio.get_running_loop().create_task(coro, context=call_context()))
        return True

    def finished(self, task: asyncio.Task[None] | None) -> None:
        """A call task is ending (from its own ``finally``)."""
        if task is not None:
            self._tasks.discard(task)

    async def hold(self) -> None:
        """Run for the whole session as a job of the owner's task group; when the group is cancelled, cancel every
        call task and wait for them to end."""
        try:
            await anyio.sleep_forever()
        finally:
            self.ended = True
            with anyio.CancelScope(shield=True):
                # One tick first: a task created but not started yet would be cancelled before its first line,
                # skipping the handlers that report its end; by now every task in the set has started.
                await asyncio.sleep(0)
                tasks = list(self._tasks)
                for task in tasks:
                    task.cancel()
                if tasks:
                    await asyncio.wait(tasks)
