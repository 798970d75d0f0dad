"""``ServerAccess``: what the package's own parts use of an ``McpServers`` — not user API.

The tool node, the approval gate, the approval middleware and the LangChain tools need more than a user does: this
run's connection to a server and its paused rounds, where a call goes (one call target), the credentials it is
sent with, where its output goes, a name's owner from the cache alone, and the key decisions are signed with. They get it here, from the same parts ``McpServers`` is built of
(:func:`~langgraph_mcp.servers.mcp_servers.server_access` hands it out), so ``McpServers``' public surface stays
what a user calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import weakref
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from langgraph_mcp.calls.interceptors import ToolCallInterceptor
from langgraph_mcp.calls.paused import PausedRounds
from langgraph_mcp.calls.target import CallTarget
from langgraph_mcp.catalog import McpTool, ToolResolution
from langgraph_mcp.config import McpServersConfig, OutputRouting
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.connection.owner import ClientOwner
from langgraph_mcp.credentials import Identity, is_per_run
from langgraph_mcp.errors import CredentialError, ServersClosedError
from langgraph_mcp.policy.binding import ApprovalKey, server_identity
from langgraph_mcp.questions.sign_in import SignInResult
from langgraph_mcp.servers.connections import LiveConnections
from langgraph_mcp.servers.listings import ListingCache
from langgraph_mcp.servers.names import NameResolver
from langgraph_mcp.servers.status import ServerStatus, status_of
from langgraph_mcp.servers.sync import SyncBridge

T = TypeVar("T")

_NOTHING_TO_HOLD = contextlib.nullcontext()


class ServerAccess:
    """The internal operations over one ``McpServers``' parts: per run (a call's target, connection, paused
    rounds, identity), per server (routing, identity for decisions, status), per name (owners from the cache)."""

    def __init__(
        self,
        config: McpServersConfig,
        connections: LiveConnections,
        listings: ListingCache,
        names: NameResolver,
        sync: SyncBridge,
        interceptors: Sequence[ToolCallInterceptor],
    ) -> None:
        self.config = config
        self.connections = connections
        self.identities = connections.identities
        self.listings = listings
        self.names = names
        self.sync = sync
        self.interceptors = interceptors
        """Wrap every tool call, the first outermost (see :mod:`langgraph_mcp.calls.interceptors`)."""
        secret = config.approval_key
        self.approval_key = ApprovalKey(secret.get_secret_value() if secret is not None else None)
        """Signs and verifies decisions (see :mod:`langgraph_mcp.policy.binding`)."""
        self._identities: dict[str, str] = {}
        self._routing = {name: config.routing_for(name) for name in config.servers}
        """Where each server's tool output goes, read once from the config (as its catalog is)."""
        self._per_run = bool(interceptors) or any(is_per_run(spec) for spec in config.servers.values())
        """Whether any call can have per-run credentials (a server's, or an interceptor's headers)."""
        self._targets: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[int, dict[tuple[str, bool], CallTarget]]
        ] = weakref.WeakKeyDictionary()
        """Per loop, the call targets of fixed-credential servers, with the listing cache's version they hold for."""

    # ------------------------------------------------------------------------------------------- lifecycle

    def ensure_open(self) -> None:
        """Raise :class:`~langgraph_mcp.errors.ServersClosedError` once the ``McpServers`` was closed."""
        if self.connections.closed:
            raise ServersClosedError()

    def run_sync(
        self, make: Callable[[], Coroutine[Any, Any, T]], *, context: contextvars.Context | None = None
    ) -> T:
        """``McpServers.run_sync``: ``make()`` on the private event loop, in ``context`` (default: a copy)."""
        self.ensure_open()
        return self.sync.run(make, context=context)

    # ------------------------------------------------------------------------------------------- per run

    def connection(self, server: str) -> ServerConnection:
        """This event loop's connection to ``server`` for the current run's credentials (started on first use)."""
        return self.connections.connection(server)

    def paused_rounds(self, server: str) -> PausedRounds:
        """The paused rounds kept for this event loop's connection to ``server`` (see :mod:`.calls.paused`)."""
        return self.connections.paused_rounds(server)

    def identity(self, server: str) -> Identity:
        """The credentials a call to ``server`` is sent with in the current run (see :mod:`.credentials`).

        Raises :class:`~langgraph_mcp.errors.CredentialError` when the run lacks a ``configurable`` value the
        server's headers need."""
        return self.connections.identity(server)

    def call_target(self, tool: McpTool, *, checked: bool = False) -> CallTarget:
        """Where a call to ``tool`` goes in the current run, resolved once (see :mod:`langgraph_mcp.calls.target`).

        ``checked`` (the tool node's calls): the call is not sent once the tool is no longer what the run's listing
        it was judged on holds.

        With fixed credentials a target stays the same until a listing is stored, dropped or forgotten (the cache's
        version moves): its connection, paused rounds and identity are this loop's for good, and its listing is
        the one the cache still holds. So it is kept per loop and handed out again while the version holds."""
        loop = asyncio.get_running_loop()
        kept = self._targets.get(loop)
        version = self.listings.version
        if kept is not None and kept[0] == version and not self.connections.closed:
            target = kept[1].get((tool.published_name, checked))
            if target is not None and target.tool is tool:
                return target
        listing = self.listings.cached(tool.server) if checked else None
        target = self.connections.call_target(
            tool, self.routing_for(tool.server), listing=listing, checked=checked
        )
        if not target.identity.per_run:
            if kept is None or kept[0] != version:
                kept = self._targets[loop] = (version, {})
            kept[1][(tool.published_name, checked)] = target
        return target

    def using(self, server: str) -> contextlib.AbstractContextManager[None]:
        """Hold the current run's connection to ``server`` while the block runs: no idle close under it, and the
        server's log messages go to this context's :data:`~langgraph_mcp.connection.logs.LOG_SINK`."""
        return self.connections.using(server)

    def holding(self) -> contextlib.AbstractContextManager[None]:
        """While the block runs (one attempt at one call: its listing, proof and send), no per-run identity's
        connection it resolves is closed as idle or over the cap (see :meth:`.connections.LiveConnections.holding`)."""
        if not self._per_run:
            return _NOTHING_TO_HOLD  # fixed credentials only: no connection is ever closed as idle
        return self.connections.holding()

    def live_identities(self, server: str | None = None) -> int:
        """How many per-run identities have a live connection in this event loop (optionally for one server)."""
        return self.connections.live_identities(server)

    def hand_over_sign_in(self, server: str, result: SignInResult) -> None:
        """The run's principal signed in to ``server`` (a callback already checked against its sign-in): the next
        connection exchanges the code for tokens (see :mod:`langgraph_mcp.connection.oauth`)."""
        self.identities.hand_over(server, result)

    # ------------------------------------------------------------------------------------------- per server

    def routing_for(self, server: str) -> OutputRouting:
        """Where ``server``'s tool output goes (the model, the artifact, both)."""
        routing = self._routing.get(server)
        return routing if routing is not None else self.config.routing_for(server)

    def use_approval_key(self, key: ApprovalKey) -> None:
        """Sign and verify with ``key`` from now on (``Oversight(approval_key=...)``); identities are keyed by it."""
        self.approval_key = key
        self._identities.clear()

    def server_identity(self, server: str) -> str:
        """``server``'s name and where it is reached: what a decision about one of its calls is bound to."""
        identity = self._identities.get(server)
        if identity is None:
            spec = self.connections.spec(server)
            identity = self._identities[server] = server_identity(server, spec, self.approval_key)
        return identity

    def status(self, server: str) -> ServerStatus:
        """``McpServers.server_status``: what is known about ``server`` in this loop."""
        try:
            owner: ClientOwner | None = self.connection(server).owner
        except (RuntimeError, CredentialError):
            owner = None
        report = self.listings.report
        return status_of(server, owner, report.failed_servers.get(server), self.listings.cached(server))

    def run_metadata(self, server: str) -> dict[str, Any]:
        """What a call's tool run says about ``server`` (see :mod:`langgraph_mcp.calls.observers`): its transport and,
        once connected in this loop, the negotiated protocol version and its era."""
        status = self.status(server)
        return {
            "mcp_transport": self.connections.spec(server).transport,
            "mcp_era": status.era,
            "mcp_protocol_version": status.protocol_version,
        }

    # ------------------------------------------------------------------------------------------- per name

    async def resolve_tool(self, published_name: str) -> ToolResolution:
        """``McpServers.resolve_tool``: who publishes ``published_name`` (lists candidates as needed)."""
        self.ensure_open()
        return await self.names.resolve(published_name)

    def cached_resolution(self, published_name: str) -> ToolResolution | None:
        """:meth:`resolve_tool` from the cache alone, or ``None`` when a candidate server would have to be listed."""
        self.ensure_open()
        return self.names.cached_resolution(published_name)

    def candidate_servers(self, published_name: str) -> list[str]:
        """The configured servers that could publish ``published_name``.

        A server with ``prefix=False`` may publish any name; a prefixed one only names that start with its
        prefix (as listed, or as the opt-in sanitiser would rewrite it). Only a name no candidate's current
        listing contains, with every candidate listed, provably belongs to no MCP server.
        """
        return self.names.candidate_servers(published_name)
