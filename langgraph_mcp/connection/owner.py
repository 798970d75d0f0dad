"""Keeps one live ``mcp.Client`` for one server: starts it on first use, restarts it with backoff, stops it.

Why an owner task: anyio requires a ``Client`` to be entered and exited by the same task, and any exception that
leaves ``async with Client`` comes out wrapped in an ``ExceptionGroup`` — which would turn a LangGraph interrupt
into a crash. So no caller ever runs inside the ``async with``: the owner task enters it and runs a task group whose
jobs (the connection's requests) belong to it, not to their callers. :class:`ClientOwner` decides when to start
that task (on first use), restarts it after a death (the backoff is :mod:`~langgraph_mcp.connection.backoff`'s) and
stops it for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
import anyio.abc
import mcp.types as types
from mcp import Client
from mcp.client.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from langgraph_mcp.config import ServerSpec
from langgraph_mcp.connection.backoff import ReconnectBackoff
from langgraph_mcp.connection.calls import CallTasks
from langgraph_mcp.connection.failures import describe_error, flatten_exception
from langgraph_mcp.connection.oauth import RefreshFirst
from langgraph_mcp.connection.timers import deadline
from langgraph_mcp.connection.watch import TransportWatch, watched
from langgraph_mcp.errors import (
    AuthorizationRequiredError,
    InvalidResponseError,
    ServerConnectionError,
    ServerUnavailableError,
)
from langgraph_mcp.transports.base import StartNotes

logger = logging.getLogger("langgraph_mcp.connection")

# How long stopping waits for the owner task (which stops the server process) to finish.
OWNER_STOP_SECONDS = 10.0

ListKind = Literal["tools", "resources", "prompts"]
"""Which of its listings a server said changed (``notifications/<kind>/list_changed``, or a listen event)."""
ListChanged = Callable[[str, ListKind], None]
"""Called with (server, kind) when a server says one of its listings changed."""


ConnectionState = Literal["idle", "connected", "reconnecting", "down", "closed"]


class ClientOwner:
    """The client of one server (one per event loop), held by its owner task: started by the first caller that needs
    it (:meth:`client`), restarted after a death (up to ``restart_attempts`` per outage, then one attempt per backoff
    period), stopped for good by :meth:`close`. What the owner task holds (the client, its era, its task group, the
    last error) is read here."""

    def __init__(
        self,
        name: str,
        spec: ServerSpec,
        *,
        options: Callable[[], dict[str, Any]],
        on_invalid: Callable[[Exception], None],
        on_new_session: Callable[[], None],
        on_connected: Callable[[Client], Awaitable[None]],
        on_list_changed: ListChanged | None = None,
    ) -> None:
        self.name = name
        self.spec = spec
        self._options = options
        """The callbacks and options the connection gives every ``Client`` it starts."""
        self._on_invalid = on_invalid
        self._on_new_session = on_new_session
        self._on_connected = on_connected
        self._on_list_changed = on_list_changed
        # Plain attributes, not properties: every call reads them (a property is a call into this module).
        self.current: Client | None = None
        """The live client, or ``None`` (not started, dead, or stopped); set with :meth:`_hold`."""
        self.is_legacy = False
        """The live client negotiated a 2025-11-25-or-earlier version (``False`` without a live client)."""
        self._task_group: anyio.abc.TaskGroup | None = None
        self._call_tasks: CallTasks | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._ready: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._starts = 0
        self._watch: TransportWatch | None = None
        self._notes: StartNotes | None = None
        self._start_lock = asyncio.Lock()
        self.sessions = 0
        """How many times this connection came up: each is a new server process (stdio) or session (HTTP), whose
        tools may differ from the last one's (a listing is only good for the session it was made in). An attribute:
        every call reads it (a listing's freshness)."""
        self._connected_once = False
        self.backoff = ReconnectBackoff(
            spec.restart_attempts, spec.reconnect_backoff, spec.reconnect_backoff_max
        )
        """When the next (re)connect may run, and how many this outage has used."""
        self.closed = False
        self.served = False
        """The current session answered a legacy call. A legacy HTTP session forgotten before that is the mark of a
        load balancer without session affinity (see :meth:`forgot_session`)."""
        self._unpinned = False
        """The last session was forgotten before it answered a call (see :meth:`forgot_session`)."""

    @property
    def task_group(self) -> anyio.abc.TaskGroup | None:
        """The owner's task group: jobs started in it run in the task that holds the client."""
        return self._task_group

    @property
    def call_tasks(self) -> CallTasks | None:
        """The live session's legacy call tasks (ended with the task group), or ``None``."""
        return self._call_tasks

    def note_error(self, error: BaseException) -> None:
        """Remember ``error`` as the last thing that went wrong (for status and the next error message)."""
        self._error = error

    async def wait_stopped(self, timeout: float = OWNER_STOP_SECONDS) -> None:
        await self._wait_owner(timeout)

    def spawn(self, coro: Awaitable[None]) -> None:
        """Run ``coro`` as a background job of the owner task (cancelled with the connection)."""
        tg = self._task_group

        async def run() -> None:
            await coro

        if tg is not None:
            tg.start_soon(run)
        else:
            asyncio.get_running_loop().create_task(run())

    @property
    def started(self) -> bool:
        return self.current is not None

    async def transport_ended(self) -> None:
        """Return once the current transport has reported the server gone (at once if there is none)."""
        if self._watch is not None:
            await self._watch.wait_ended()

    @property
    def protocol_version(self) -> str | None:
        return self.current.protocol_version if self.current is not None else None

    @property
    def server_info(self) -> types.Implementation | None:
        return self.current.server_info if self.current is not None else None

    @property
    def starts(self) -> int:
        """How many times this connection was (re)started."""
        return self._starts

    @property
    def last_error(self) -> BaseException | None:
        return self._error

    def _hold(self, client: Client | None) -> None:
        """``client`` is the live client now (``None``: there is none); its era goes with it."""
        self.current = client
        self.is_legacy = client is not None and client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS

    async def _start(self) -> None:
        # A dead connection's owner may still be shutting its server down: let it finish first, so two owners
        # never share this object's state (the old one's cleanup would clear the new client) and no process leaks.
        await self._wait_owner()
        self._starts += 1
        self._on_new_session()
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._error = None
        self._watch = TransportWatch(self.name, self._on_invalid)
        # A fresh context, not a copy of the first caller's: the owner and every task of its client live as long as
        # the connection and must not keep that caller's context (a graph run, its config) alive.
        self._owner = asyncio.get_running_loop().create_task(
            self._own(), name=f"mcp-owner:{self.name}", context=contextvars.Context()
        )
        try:
            # Not wait_for (one more task, and a timer holding a copy of this caller's context - its graph run -
            # in the loop's heap for connect_timeout even once connected): a deadline in an empty context.
            async with deadline(self.spec.connect_timeout):
                await self._ready.wait()
        except TimeoutError:
            self._stop.set()
            # The owner is still in the handshake, where its stop event can't reach it: cancel it, so the failed
            # start leaves no task, server process or pipe behind (and doesn't wait OWNER_STOP_SECONDS for them).
            self._owner.cancel()
            await self._wait_owner()
            error = self._error
            detail = f"did not connect within {self.spec.connect_timeout:g}s"
            if isinstance(error, InvalidResponseError):
                detail += f" ({error.detail})"
            self._error = ServerConnectionError(self.name, detail)
            raise self._error from None
        if self.current is None:
            cause = self._error
            await self._wait_owner()
            if isinstance(cause, AuthorizationRequiredError):
                # Not an outage: nothing is wrong with the server, a person has to sign in. No backoff, so the
                # start after the sign-in goes ahead at once.
                raise cause
            if isinstance(cause, RefreshFirst):  # the tokens are marked expired: this start refreshes them
                await self._start()
                return
            failure = ServerConnectionError(
                self.name,
                f"could not connect: {describe_error(cause)}"
                + (self._notes.explain() if self._notes is not None else ""),
            )
            self._error = failure
            raise failure from cause

    async def _own(self) -> None:
        assert self._stop is not None and self._ready is not None and self._watch is not None
        notes = self._notes = self.spec.start_notes(self.name)
        try:
            async with contextlib.AsyncExitStack() as held:
                client = await self._enter_client(held, notes)
                tg = await held.enter_async_context(anyio.create_task_group())
                if self.spec.mode == "modern" and client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
                    raise ServerConnectionError(
                        self.name,
                        f"negotiated {client.protocol_version}, but mode='modern' requires 2026-07-28; "
                        "use mode='auto' or 'legacy' for this server",
                    )
                await self._on_connected(client)
                calls = CallTasks()
                tg.start_soon(calls.hold)
                self._hold(client)
                self._task_group = tg
                self._call_tasks = calls
                if self._on_list_changed is not None and (kinds := _announced_changes(client)):
                    tg.start_soon(_watch_list_changes, self.name, client, kinds, self._on_list_changed)
                self._ready.set()
                await self._stop.wait()
                tg.cancel_scope.cancel()
        except BaseException as exc:  # the owner must never crash the loop; the error is reported to callers
            stopping = _process_stopping(exc)
            if stopping is not None:
                # KeyboardInterrupt, SystemExit: not a connection failure to report but the process stopping. Raised
                # bare: asyncio stops the loop for these exact types, not for a group holding one.
                raise stopping from None
            leaf = flatten_exception(exc)
            if self._error is None or not isinstance(leaf, asyncio.CancelledError):
                self._error = leaf
            if not isinstance(leaf, asyncio.CancelledError):
                logger.debug("MCP server %r connection ended: %r", self.name, leaf)
            task = asyncio.current_task()
            if isinstance(leaf, asyncio.CancelledError) and task is not None and task.cancelling():
                raise  # the owner task itself is being cancelled (loop shutdown): never swallow that
        finally:
            if self._owner is asyncio.current_task():  # never clear a newer owner's state
                self._hold(None)
                self._task_group = None
                self._call_tasks = None
                self._ready.set()
            notes.close()

    async def _enter_client(self, held: contextlib.AsyncExitStack, notes: StartNotes) -> Client:
        """Enter the client into ``held``. An extension (MCP Tasks) is advertised only to a server that offers it:
        where another client costs no second server process (HTTP, SSE, in-process), a first client discovers
        without extensions, and only a 2026-07-28 server whose capabilities list one gets a client that advertises
        it, adopting the first one's discovery (no second ``server/discover``). A stdio server would start twice:
        it is told of every extension at once."""
        spec = self.spec
        common: dict[str, Any] = {
            # "modern" still probes (server/discover) rather than pinning the version: the probe waits for the
            # server to be up within connect_timeout and brings its real capabilities; legacy-only is refused.
            "mode": "auto" if spec.mode == "modern" else spec.mode,
            "client_info": types.Implementation(name="langgraph-mcp", version="0.1.0"),
            **self._options(),
        }
        extensions = common.pop("extensions", None) or []
        if extensions and spec.each_client_starts_a_server:
            common["extensions"] = extensions
        if not extensions or spec.each_client_starts_a_server:
            return await held.enter_async_context(self._make_client(notes, common))
        async with contextlib.AsyncExitStack() as probing:
            first = await probing.enter_async_context(self._make_client(notes, common))
            offered = getattr(first.server_capabilities, "extensions", None) or {}
            wanted = [extension for extension in extensions if extension.identifier in offered]
            if first.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS or not wanted:
                await held.enter_async_context(probing.pop_all())  # it is the client: nothing to advertise
                return first
            adopted = {"mode": first.protocol_version, "prior_discover": first.session.discover_result}
        self._watch = TransportWatch(
            self.name, self._on_invalid
        )  # the first client's transport ended, not this one's
        return await held.enter_async_context(
            self._make_client(notes, {**common, **adopted, "extensions": wanted})
        )

    def _make_client(self, notes: StartNotes, common: dict[str, Any]) -> Client:
        watch = self._watch
        assert watch is not None
        return self.spec.open_client(notes, lambda streams: watched(streams, watch), common)

    async def _wait_owner(self, timeout: float = OWNER_STOP_SECONDS) -> None:
        """Wait (bounded) for the owner task to finish; a cancellation of *this* caller still propagates."""
        owner = self._owner
        if owner is None or owner.done():
            return
        try:
            async with deadline(timeout):  # no timer left holding this caller's context (see deadlines)
                await asyncio.wait([owner])
        except TimeoutError:
            logger.warning("MCP server %r: its connection did not stop within %gs", self.name, timeout)

    @property
    def alive(self) -> bool:
        """Connected, and the transport has not reported the server gone."""
        return self.current is not None and not self._transport_ended()

    def _transport_ended(self) -> bool:
        return self._watch is not None and self._watch.ended

    @property
    def state(self) -> ConnectionState:
        """``idle`` (never started), ``connected``, ``reconnecting`` (an outage with restarts left), ``down``
        (restarts used up: waiting out the backoff), or ``closed``."""
        if self.closed:
            return "closed"
        if self.alive:
            return "connected"
        if self.backoff.in_outage:
            return "down" if self.backoff.exhausted or not self._connected_once else "reconnecting"
        return "idle"

    async def client(self, within: float | None = None) -> Client:
        """The live client, starting or restarting the connection as needed (bounded attempts, with backoff).

        A reconnect already scheduled ``within`` seconds from now (default: the server's ``tool_timeout``, the
        caller's own deadline) is waited for, and the caller fails only if that attempt fails; one scheduled later
        fails at once (:class:`ServerUnavailableError`, "next attempt in N s")."""
        client = self.current
        if client is not None and not self._transport_ended():
            return client
        starts = self._starts
        async with self._start_lock:
            if self.current is not None and self._transport_ended():
                # The server went away between calls (e.g. the stdio process died): restart before sending, so
                # even a non-idempotent call is safe — it was never delivered to the dead server.
                self.mark_dead(ServerConnectionError(self.name, "the server closed the connection"))
                await self._wait_owner()
            if self.current is not None:
                return self.current
            if self.closed:
                raise ServerConnectionError(self.name, "the connection was closed (aclose() was called)")
            if self._starts != starts and self.backoff.in_outage:
                # An attempt ran while this caller waited for it (behind the one that made it), and failed.
                raise ServerConnectionError(
                    self.name, f"the reconnect attempt failed ({describe_error(self._error)})"
                )
            await self._connect(self.spec.tool_timeout if within is None else within)
            if self.current is None:  # it died again right after connecting
                raise ServerConnectionError(
                    self.name, f"connection lost at once ({describe_error(self._error)})"
                )
            return self.current

    async def _connect(self, within: float) -> None:
        """Start the connection. Within an outage of a connection that was up, restart up to ``restart_attempts``
        times, each after its backoff delay; past that (or for a server that never came up) one attempt per backoff
        period: a caller waits for the next one if it is due ``within`` seconds, else fails fast."""
        backoff = self.backoff
        if self._unpinned and (retry_in := backoff.wait_remaining()) > 0:
            raise self._unavailable(retry_in)  # at once, naming why: a new session would be forgotten again
        while True:
            if backoff.in_outage and (backoff.exhausted or not self._connected_once):
                if (retry_in := backoff.wait_remaining()) > within:
                    raise self._unavailable(retry_in)
                await asyncio.sleep(retry_in)  # the scheduled attempt; if it fails, so does this caller
            elif backoff.in_outage:
                await asyncio.sleep(backoff.wait_remaining())
            try:
                await self._start()
            except ServerConnectionError as exc:
                backoff.failed()
                if backoff.exhausted or not self._connected_once:
                    if self._connected_once:
                        raise ServerConnectionError(
                            self.name,
                            f"gave up after {backoff.attempts} restart attempts; last error: {exc.detail}",
                        ) from exc.__cause__
                    raise
                continue
            if not self._unpinned:
                # Else the last session was forgotten before it answered a call: the outage (and its backoff) goes
                # on until a session answers one, so a proxy without session affinity gets no session per call.
                backoff.succeeded()
            self.served = False
            self._connected_once = True
            self.sessions += 1
            return

    def _unavailable(self, retry_in: float) -> ServerUnavailableError:
        why = describe_error(self._error)
        if self._connected_once and not self._unpinned:
            what = f"gave up after {self.backoff.attempts} restart attempts (last error: {why})"
        else:
            what = why
        return ServerUnavailableError(
            self.name, f"unavailable: {what}; next attempt in {retry_in:.1f}s", retry_in=retry_in
        )

    def session_served(self) -> None:
        """The current session answered a call: it is pinned where it lives, and any outage is over."""
        if not self.served:
            self.served = True
            self._unpinned = False
            self.backoff.succeeded()

    def forgot_session(self, error: BaseException, client: Client | None = None) -> None:
        """The server no longer knows the current legacy HTTP session: stop the owner, so the next request
        re-initializes. A session that had not answered a call (:attr:`served`) keeps the outage going: until a
        session answers one, a new one starts only once the backoff has passed, and calls before that fail at once
        with ``error``."""
        if self.current is None or (client is not None and client is not self.current):
            return
        self._unpinned = not self.served
        self.mark_dead(error, client)

    def mark_dead(self, error: BaseException, client: Client | None = None) -> None:
        """The transport failed: stop the owner so the next call reconnects (once per death).

        ``client``: the client the failure was seen on; a late failure of an older client is ignored.
        """
        if self.current is None or (client is not None and client is not self.current):
            return
        self._error = error
        self.backoff.failed()
        if self._stop is not None:
            self._stop.set()
        self._hold(None)

    async def close(self) -> None:
        """Stop for good: cancel every job of the owner's task group, exit the client, stop the subprocess."""
        self.closed = True
        if self._stop is not None:
            self._stop.set()
        await self._wait_owner()


async def _watch_list_changes(
    server: str, client: Client, kinds: set[ListKind], on_list_changed: ListChanged
) -> None:
    """2026-07-28 servers announce listing changes only on a ``subscriptions/listen`` stream."""
    try:
        async with client.listen(
            tools_list_changed="tools" in kinds,
            resources_list_changed="resources" in kinds,
            prompts_list_changed="prompts" in kinds,
        ) as subscription:
            async for event in subscription:
                kind = _LISTEN_EVENTS.get(type(event))
                if kind is not None:
                    on_list_changed(server, kind)
    except Exception as exc:  # a lost or refused subscription only costs freshness, never a call
        logger.debug("MCP server %r: list-change subscription ended: %r", server, exc)


def _process_stopping(exc: BaseException) -> BaseException | None:
    """The ``KeyboardInterrupt``, ``SystemExit`` (any ``BaseException`` that is neither an ``Exception`` nor a
    cancellation) in ``exc`` or its (nested) group, or ``None``."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _process_stopping(inner)) is not None:
                return found
        return None
    return None if isinstance(exc, Exception | asyncio.CancelledError) else exc


_LISTEN_EVENTS: dict[type, ListKind] = {
    ToolsListChanged: "tools",
    ResourcesListChanged: "resources",
    PromptsListChanged: "prompts",
}


def _announced_changes(client: Client) -> set[ListKind]:
    """The listings a 2026-07-28 server says it announces changes of (its ``listChanged`` capabilities)."""
    if client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
        return set()  # legacy servers push notifications/<kind>/list_changed to the message handler
    caps = client.server_capabilities
    if caps is None:
        return set()
    kinds: set[ListKind] = set()
    if caps.tools and caps.tools.list_changed:
        kinds.add("tools")
    if caps.resources and caps.resources.list_changed:
        kinds.add("resources")
    if caps.prompts and caps.prompts.list_changed:
        kinds.add("prompts")
    return kinds
