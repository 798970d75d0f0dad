"""Requests run as jobs of a connection's owner task, each of which a bad server message can fail at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from mcp import Client

from langgraph_mcp.connection.calls import call_context
from langgraph_mcp.connection.failures import FailureReader, describe_error, unwrap_for_caller
from langgraph_mcp.connection.owner import ClientOwner
from langgraph_mcp.connection.timers import EventDeadlines, deadline
from langgraph_mcp.errors import CallNotSentError, RequestTimeoutError

T = TypeVar("T")


class RequestJobs:
    """The in-flight registry of one connection, and one request run as an owner job within a timeout.

    Calls started elsewhere (``LegacyCalls.start_call``) register here too with :meth:`track`, so that
    :meth:`fail_all` reaches every request in flight; a call awaited in its caller's task under the connection's
    timer (``EventDeadlines.cancel_after``) is reached through that timer, which knows it already."""

    def __init__(
        self, name: str, owner: ClientOwner, failures: FailureReader, deadlines: EventDeadlines
    ) -> None:
        self.name = name
        self._owner = owner
        self._failures = failures
        self._deadlines = deadlines
        # Requests in flight, each with the way to fail it at once (a bad message from the server).
        self._in_flight: dict[object, Callable[[BaseException], None]] = {}

    def track(self, fail: Callable[[BaseException], None]) -> object:
        """Register a request in flight with the way to fail it; returns the key to :meth:`untrack` it with."""
        key = object()
        self._in_flight[key] = fail
        return key

    def untrack(self, key: object) -> None:
        self._in_flight.pop(key, None)

    def fail_all(self, error: BaseException) -> None:
        for fail in list(self._in_flight.values()):
            fail(error)
        self._deadlines.fail_blocks(error)

    async def run(
        self, make: Callable[[Client], Awaitable[T]], *, timeout: float, what: str = "a request"
    ) -> T:
        """Run one request as a job of the owner task; a finite timeout always applies.

        A transport failure is always a :class:`ServerConnectionError` for the caller, never a cancellation.
        """
        client = await self._owner.client()
        tg = self._owner.task_group
        if tg is None or client is not self._owner.current:  # the connection died in between
            raise CallNotSentError(
                self.name, f"connection lost before {what} ({describe_error(self._owner.last_error)})"
            )
        loop = asyncio.get_running_loop()
        outcome: asyncio.Future[T] = loop.create_future()
        scope = anyio.CancelScope()

        async def job() -> None:
            with scope:
                try:
                    value = await make(client)
                except asyncio.CancelledError:
                    if not outcome.done():
                        outcome.cancel()
                    raise
                except BaseException as exc:
                    if not outcome.done():
                        outcome.set_exception(unwrap_for_caller(exc))
                else:
                    if not outcome.done():
                        outcome.set_result(value)

        def fail(error: BaseException) -> None:
            if not outcome.done():
                outcome.set_exception(error)
            scope.cancel()

        key = self.track(fail)
        # In a fresh context, not a copy of the caller's: the request's own timers (the SDK's, httpx's) would keep
        # a copy of the caller's graph run alive, in the loop's heap, until their deadlines (see call_tasks).
        call_context().run(tg.start_soon, job)
        try:
            async with deadline(timeout):  # no timer left holding the caller's graph run (see deadlines)
                await asyncio.wait([outcome])
        except TimeoutError:
            pass
        finally:
            self.untrack(key)
        if not outcome.done():
            scope.cancel()
            # Nobody waits for the cancelled job's outcome any more; don't let asyncio log it as never retrieved.
            outcome.add_done_callback(lambda f: f.cancelled() or f.exception())
            raise RequestTimeoutError(self.name, what, timeout)
        if outcome.cancelled():  # the job was cancelled by the connection's task group, not by this caller
            raise await self._failures.transport_failed(what, client)
        try:
            return outcome.result()
        except Exception as exc:
            error = self._failures.read(exc, client, what=what, tool=None)
            if error is exc:
                raise
            raise error from exc
