"""Keeps one live ``mcp.Client`` for one server: starts it on first use, restarts it with backoff, stops it.

The owner task itself (entering and holding the client) is :mod:`~langgraph_mcp.connection.owner_task`'s; the
backoff :mod:`~langgraph_mcp.connection.backoff`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mcp import Client

from langgraph_mcp.config import ServerSpec
from langgraph_mcp.connection.backoff import ReconnectBackoff
from langgraph_mcp.connection.failures import describe_error
from langgraph_mcp.connection.owner_task import OWNER_STOP_SECONDS as OWNER_STOP_SECONDS
from langgraph_mcp.connection.owner_task import ListChanged as ListChanged
from langgraph_mcp.connection.owner_task import ListKind as ListKind
from langgraph_mcp.connection.owner_task import OwnerTask
from langgraph_mcp.errors import ServerConnectionError, ServerUnavailableError

ConnectionState = Literal["idle", "connected", "reconnecting", "down", "closed"]


class ClientOwner(OwnerTask):
    """The client of one server (one per event loop): started by the first caller that needs it, restarted after
    a death (up to ``restart_attempts`` per outage, then one attempt per backoff period), stopped for good by
    :meth:`close`. The owner task it runs is :class:`~langgraph_mcp.connection.owner_task.OwnerTask`'s."""

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
        super().__init__(
            name,
            spec,
            options=options,
            on_invalid=on_invalid,
            on_new_session=on_new_session,
            on_connected=on_connected,
            on_list_changed=on_list_changed,
        )
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
