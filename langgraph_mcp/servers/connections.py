"""Which live connection a call uses: one per server, per event loop, per credential identity, with idle sweeping.

An ``mcp.Client`` can only be used from the loop it was entered in, so every event loop gets its own connections,
started lazily on first use. A server whose headers depend on the run (:mod:`langgraph_mcp.servers.identities`)
gets one connection and one set of paused rounds per identity; a server with fixed credentials keeps one.

Only identities whose credentials came from the run (``Identity.per_run``) are tracked (:class:`IdentityPool`): a
tracked identity may be closed when nothing holds it (no call in flight, no paused call kept for it) and it was
last used ``idle_timeout`` seconds ago, or earlier, least recently used first, when more than ``max_identities``
are live.

A call holds what it uses from its first use on: inside :meth:`LiveConnections.holding` (the tool node's attempt at
one call, or one listing), every per-run identity's connection the block resolves is leased until the block ends —
through the listing, a re-listing, the proof and the send — so it is never closed between being resolved and being
used.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import TypeAlias

from langgraph_mcp.calls.call import CallTarget, ToolListing
from langgraph_mcp.calls.paused import PausedRounds
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.config import OutputRouting, ServerSpec
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.connection.logs import LOG_SINK
from langgraph_mcp.connection.owner import ListChanged
from langgraph_mcp.credentials import Identity
from langgraph_mcp.errors import ConfigError, CredentialError, ServersClosedError
from langgraph_mcp.servers.identities import Identities


@dataclass
class _Use:
    last_used: float
    active: int = 0


class IdentityPool:
    """Use counts and recency of the live per-run identities of one event loop."""

    def __init__(self, idle_timeout: float, max_identities: int, clock: Callable[[], float] = time.monotonic):
        self.idle_timeout = idle_timeout
        self.max_identities = max_identities
        self._clock = clock
        self._uses: OrderedDict[Hashable, _Use] = OrderedDict()

    def __len__(self) -> int:
        return len(self._uses)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._uses

    def touch(self, key: Hashable) -> None:
        """``key`` was just used (most recent now)."""
        use = self._uses.get(key)
        if use is None:
            self._uses[key] = _Use(self._clock())
        else:
            use.last_used = self._clock()
            self._uses.move_to_end(key)

    def acquire(self, key: Hashable) -> None:
        self.touch(key)
        self._uses[key].active += 1

    def in_use(self, key: Hashable) -> bool:
        """Whether something holds ``key`` now (a call in flight, a block of :meth:`LiveConnections.holding`)."""
        use = self._uses.get(key)
        return use is not None and use.active > 0

    def release(self, key: Hashable) -> None:
        use = self._uses.get(key)
        if use is not None:
            use.active = max(0, use.active - 1)
            use.last_used = self._clock()

    def forget(self, key: Hashable) -> None:
        self._uses.pop(key, None)

    def idle(self, busy: Callable[[Hashable], bool]) -> list[Hashable]:
        """Identities unused for ``idle_timeout`` that nothing holds (``busy`` says whether something else does)."""
        now = self._clock()
        return [
            key
            for key, use in self._uses.items()
            if use.active == 0 and now - use.last_used >= self.idle_timeout and not busy(key)
        ]

    def over_cap(self, busy: Callable[[Hashable], bool], keep: Hashable | None = None) -> list[Hashable]:
        """Least recently used identities to close so that at most ``max_identities`` stay live (never ``keep``,
        never one in use; if every other identity is in use, the cap is exceeded rather than a call broken)."""
        excess = len(self._uses) - self.max_identities
        victims: list[Hashable] = []
        for key, use in self._uses.items():
            if excess <= 0:
                break
            if key == keep or use.active > 0 or busy(key):
                continue
            victims.append(key)
            excess -= 1
        return victims

    def next_due(self, busy: Callable[[Hashable], bool]) -> float | None:
        """Seconds until the next look for idle identities is worth it (``None``: nothing to look for).

        An identity in use is left out (releasing it asks again); one held by something else (``busy``) is looked
        at again after a full ``idle_timeout``."""
        now = self._clock()
        dues = [
            self.idle_timeout if busy(key) else max(0.0, use.last_used + self.idle_timeout - now)
            for key, use in self._uses.items()
            if use.active == 0
        ]
        return min(dues) if dues else None


ConnectionKey: TypeAlias = tuple[str, Hashable]
"""(server, credential identity key): one connection, one catalog."""

_NOTHING_TO_HOLD = contextlib.nullcontext()


class _Hold:
    """The per-run identities one :meth:`LiveConnections.holding` block leased (each once), with their pools."""

    __slots__ = ("done", "leased")

    def __init__(self) -> None:
        self.leased: dict[ConnectionKey, IdentityPool] = {}
        self.done = False
        """The block ended: a task it started that still resolves a connection leases nothing more."""

    def lease(self, pool: IdentityPool, key: ConnectionKey) -> bool:
        """Hold ``key`` to the end of the block (once); ``False`` once the block ended."""
        if not self.done and key not in self.leased:
            pool.acquire(key)
            self.leased[key] = pool
        return not self.done

    def end(self) -> bool:
        """Release every identity the block held; whether there was any."""
        self.done = True
        for key, pool in self.leased.items():
            pool.release(key)
        return bool(self.leased)


_HOLD: contextvars.ContextVar[_Hold | None] = contextvars.ContextVar("langgraph_mcp_hold", default=None)
"""The :meth:`LiveConnections.holding` block the current context runs in (tasks it starts share it)."""


class LiveConnections:
    """The connections (and their paused rounds) of one ``McpServers``, keyed by loop and credential identity.

    ``spec`` looks a server's configuration up (raising for an unknown name); ``on_list_changed(server, kind)``
    is called when a server says its tools, resources or prompts changed; ``on_retire(key)`` when an idle identity's connection is closed,
    so whatever was kept for that key elsewhere (its listing, its resource cache) goes with it.
    """

    def __init__(
        self,
        spec: Callable[[str], ServerSpec],
        *,
        idle_timeout: float,
        max_identities: int,
        on_list_changed: ListChanged,
        on_retire: Callable[[ConnectionKey], None],
    ) -> None:
        if idle_timeout <= 0 or max_identities < 1:
            raise ConfigError("identity_idle_timeout must be > 0 and max_identities >= 1")
        self.spec = spec
        self._idle_timeout = idle_timeout
        self._max_identities = max_identities
        self._on_list_changed = on_list_changed
        self._on_retire = on_retire
        self.identities = Identities(spec)
        """Which credentials each call is sent with, and the OAuth sign-ins."""
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, IdentityPool] = (
            weakref.WeakKeyDictionary()
        )
        self._sweeps: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.TimerHandle] = (
            weakref.WeakKeyDictionary()
        )
        self._closing: set[asyncio.Task[None]] = set()
        self._loops: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[ConnectionKey, ServerConnection]
        ] = weakref.WeakKeyDictionary()
        self._paused: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[ConnectionKey, PausedRounds]
        ] = weakref.WeakKeyDictionary()
        self.closed = False
        """Whether :meth:`aclose` ran: nothing may be used any more (an attribute: every call reads it)."""
        self.clock: Callable[[], float] = time.monotonic
        """The clock idle identities are judged by (set before first use: a test's clock)."""

    def held_by(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether ``loop`` holds connections (or connections being closed): only it can close them."""
        return bool(self._loops.get(loop)) or any(t.get_loop() is loop for t in self._closing)

    # ------------------------------------------------------------------------------------------- identities

    def identity(self, server: str) -> Identity:
        """The credentials a call to ``server`` is sent with in the current run (see :class:`Identities`)."""
        return self.identities.identity(server)

    def key(self, server: str) -> ConnectionKey:
        return server, self.identity(server).key

    def key_or_none(self, server: str) -> ConnectionKey | None:
        """The current run's key for ``server``; ``None`` when its credentials can't be resolved in this run."""
        try:
            return self.key(server)
        except CredentialError:
            return None

    @contextlib.contextmanager
    def using(self, server: str) -> Iterator[None]:
        """Hold the current run's connection to ``server`` while the block runs: no idle close under it, and the
        server's log messages go to this context's :data:`~langgraph_mcp.connection.logs.LOG_SINK`."""
        sink = LOG_SINK.get()
        with self.holding(), self.connection(server).logs.listening(sink) if sink else _NOTHING_TO_HOLD:
            yield

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """While the block runs, every per-run identity's connection it resolves (listing, re-listing, the call's
        target, the send) stays open: neither the idle sweep nor the cap closes it. Released however the block
        ends (a result, an error, an interrupt, a cancellation); a block inside another one is part of it."""
        outer = _HOLD.get()
        if outer is not None and not outer.done:
            yield
            return
        hold = _Hold()
        token = _HOLD.set(hold)
        try:
            yield
        finally:
            _HOLD.reset(token)
            if hold.end():
                self._schedule_sweep()

    def live_identities(self, server: str | None = None) -> int:
        """How many per-run identities have a live connection in this event loop (optionally for one server)."""
        pool, connections = (
            self._pools.get(asyncio.get_running_loop()),
            self._loops.get(asyncio.get_running_loop(), {}),
        )
        return sum(1 for key in connections if pool and key in pool and (server is None or key[0] == server))

    # ------------------------------------------------------------------------------------------- connections

    def connection(self, server: str) -> ServerConnection:
        """This event loop's connection to ``server`` for the current run's credentials (started on first use)."""
        return self._connection(server, self.identity(server))

    def _connection(self, server: str, identity: Identity) -> ServerConnection:
        if self.closed:
            raise ServersClosedError()
        key: ConnectionKey = (server, identity.key)
        loop = asyncio.get_running_loop()
        connections = self._loops.get(loop)
        if connections is None:
            connections = {}
            self._loops[loop] = connections
        conn = connections.get(key)
        if conn is None:
            spec = self.spec(server)
            conn = ServerConnection(
                server,
                identity.apply(spec) if identity.per_run else spec,
                on_list_changed=self._on_list_changed,
            )
            connections[key] = conn
        if identity.per_run:
            pool, hold = self._pool(), _HOLD.get()
            if hold is None or not hold.lease(pool, key):  # else held from this first use on (see holding)
                pool.touch(key)
            for victim in pool.over_cap(self._busy, keep=key):
                self._retire(loop, victim)
            self._schedule_sweep()
        return conn

    def paused_rounds(self, server: str) -> PausedRounds:
        """The paused rounds kept for this event loop's connection to ``server`` (see :mod:`.elicitation.paused`)."""
        identity = self.identity(server)
        return self._paused_on((server, identity.key), self._connection(server, identity))

    def _paused_on(self, key: ConnectionKey, conn: ServerConnection) -> PausedRounds:
        rounds = self._paused.setdefault(asyncio.get_running_loop(), {})
        paused = rounds.get(key)
        if paused is None or paused.connection is not conn:
            paused = rounds[key] = PausedRounds(conn)
        return paused

    def call_target(
        self,
        tool: McpTool,
        routing: OutputRouting,
        *,
        listing: ToolListing | None = None,
        checked: bool = False,
        headers: dict[str, str] | None = None,
    ) -> CallTarget:
        """Where a call to ``tool`` goes in the current run (see :mod:`langgraph_mcp.calls.call`): its identity,
        connection and paused rounds, resolved once; ``headers`` override the run's (an interceptor's)."""
        server = tool.server
        identity = self.identities.identity(server, headers)
        conn = self._connection(server, identity)
        key: ConnectionKey = (server, identity.key)
        return CallTarget(
            tool,
            conn,
            self._paused_on(key, conn),
            identity,
            routing,
            lambda other: self.call_target(tool, routing, listing=listing, checked=checked, headers=other),
            listing,
            checked,
            (lambda: self._leased(key)) if identity.per_run else None,
        )

    @contextlib.contextmanager
    def _leased(self, key: ConnectionKey) -> Iterator[None]:
        pool = self._pool()
        pool.acquire(key)
        try:
            yield
        finally:
            pool.release(key)
            self._schedule_sweep()

    async def aclose(self) -> None:
        """Close every connection: this loop's and other loops' (running ones on their own loop)."""
        self.closed = True
        current = asyncio.get_running_loop()
        for loop, connections in list(self._loops.items()):
            coros = [conn.owner.close() for conn in connections.values()]
            if loop is current:
                await asyncio.gather(*coros, return_exceptions=True)
            elif loop.is_running():
                futures = [asyncio.run_coroutine_threadsafe(c, loop) for c in coros]
                await asyncio.gather(*(asyncio.wrap_future(f) for f in futures), return_exceptions=True)
            else:
                for c in coros:
                    c.close()
        self._loops.clear()
        self._paused.clear()  # their open legacy calls ended with their connections
        for handle in self._sweeps.values():
            handle.cancel()
        self._sweeps.clear()
        self._pools.clear()
        mine = [t for t in self._closing if t.get_loop() is current]  # others finish on their own loops
        if mine:
            await asyncio.gather(*mine, return_exceptions=True)

    # ------------------------------------------------------------------------------------------- idle identities

    def _pool(self) -> IdentityPool:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            pool = self._pools[loop] = IdentityPool(self._idle_timeout, self._max_identities, self.clock)
        return pool

    def _busy(self, key: Hashable) -> bool:
        rounds = self._paused.get(asyncio.get_running_loop(), {}).get(key)  # type: ignore[call-overload]
        return rounds is not None and len(rounds) > 0

    def _schedule_sweep(self) -> None:
        loop = asyncio.get_running_loop()
        if loop in self._sweeps or self.closed:
            return
        due = self._pool().next_due(self._busy)
        if due is not None:
            self._sweeps[loop] = loop.call_later(due + 0.01, self._sweep, loop)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self._sweeps.pop(loop, None)
        pool = self._pools.get(loop)
        if pool is None or self.closed:
            return
        for key in pool.idle(self._busy):
            self._retire(loop, key)
        self._schedule_sweep()

    def _retire(self, loop: asyncio.AbstractEventLoop, key: Hashable) -> None:
        """Close one identity's connection in ``loop`` and forget what was kept for it."""
        server_key: ConnectionKey = key  # type: ignore[assignment]
        pool = self._pools.get(loop)
        if pool is not None:
            pool.forget(key)
        self._paused.get(loop, {}).pop(server_key, None)
        if isinstance(server_key[1], tuple):
            self.identities.forget_sign_in(server_key[1][1])
        self._on_retire(server_key)
        conn = self._loops.get(loop, {}).pop(server_key, None)
        if conn is not None:
            task = loop.create_task(conn.owner.close(), name=f"mcp-retire:{server_key[0]}")
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
