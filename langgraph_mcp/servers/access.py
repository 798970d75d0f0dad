"""``ServerAccess``: the internal half of an ``McpServers`` — its parts, and where a call goes — not user API.

The tool node, the approval gate, the approval middleware and the LangChain tools need more than a user does. They
get the parts ``McpServers`` is built of (:func:`~langgraph_mcp.servers.mcp_servers.server_access` hands them out)
and use each for what it does: :attr:`~ServerAccess.connections` (this run's connection to a server, its paused
rounds, its credentials, sign-ins), :attr:`~ServerAccess.listings`, :attr:`~ServerAccess.names` (a name's owner),
:attr:`~ServerAccess.interceptors`. What ``ServerAccess`` does itself is what no part can do alone: where one call
goes (:meth:`~ServerAccess.target` for the tool node, asked once per call, and :meth:`~ServerAccess.call_target`),
what a server's status is, and running a coroutine for sync callers. ``McpServers``' public surface stays what a
user calls. The key decisions are signed with is the approval side's (:mod:`langgraph_mcp.approval.oversight`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from langgraph_mcp.calls.call import CallTarget
from langgraph_mcp.calls.interceptors import ToolCallInterceptor
from langgraph_mcp.calls.observers import server_metadata
from langgraph_mcp.catalog import McpTool, ToolResolution
from langgraph_mcp.config import McpServersConfig, OutputRouting
from langgraph_mcp.connection.owner import ClientOwner
from langgraph_mcp.credentials import is_per_run
from langgraph_mcp.errors import CredentialError, ServersClosedError
from langgraph_mcp.servers.connections import LiveConnections
from langgraph_mcp.servers.listings import Listing, ListingCache
from langgraph_mcp.servers.names import NameResolver
from langgraph_mcp.servers.status import ServerStatus, status_of
from langgraph_mcp.servers.sync import SyncBridge

T = TypeVar("T")

_NOTHING_TO_HOLD = contextlib.nullcontext()


class ServerAccess:
    """The parts of one ``McpServers``, and what takes more than one of them: where a call goes (per run), a
    server's status, the sync bridge."""

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
        """Per loop and credential identity: connections, paused rounds, credentials and sign-ins."""
        self.listings = listings
        self.names = names
        """Which server publishes a name (fails closed)."""
        self.sync = sync
        self.interceptors = interceptors
        """Wrap every tool call, the first outermost (see :mod:`langgraph_mcp.calls.interceptors`)."""
        self._routing = {name: config.routing_for(name) for name in config.servers}
        """Where each server's tool output goes, read once from the config (as its catalog is)."""
        self._per_run = bool(interceptors) or any(is_per_run(spec) for spec in config.servers.values())
        """Whether any call can have per-run credentials (a server's, or an interceptor's headers)."""
        self._targets: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, bool], CallTarget]
        ] = weakref.WeakKeyDictionary()
        """Per loop, the call targets of fixed-credential servers (see :meth:`_target`)."""

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

    # ------------------------------------------------------------------------------------------- per call

    @contextlib.asynccontextmanager
    async def target(self, published_name: str) -> AsyncIterator[tuple[ToolResolution, CallTarget | None]]:
        """The tool node's one question per call: who publishes ``published_name`` (candidates listed as needed,
        see :mod:`.names`) and, when one tool does, where a call to it goes in the current run.

        The target is checked: it carries the listing its tool was found in, and is not sent once that listing is
        no longer fresh (:meth:`~langgraph_mcp.calls.call.CallTarget.listed_now`, asked right before every send).
        While the block runs (one attempt at one call: its listing, proof and send), no per-run identity's
        connection it resolves is closed as idle or over the cap (see :meth:`.connections.LiveConnections.holding`).
        """
        with self.connections.holding() if self._per_run else _NOTHING_TO_HOLD:
            found = await self.names.resolve_listed(published_name)
            tools = found.resolution.tools
            target = None
            if len(tools) == 1:
                target = self._target(tools[0], found.listing_of(tools[0]), checked=True)
            yield found.resolution, target

    def call_target(self, tool: McpTool) -> CallTarget:
        """Where a call to ``tool`` goes in the current run, not checked against a listing (``McpServers.call_tool``
        and the LangChain tools, which send what they were given)."""
        return self._target(tool, None, checked=False)

    def _target(self, tool: McpTool, listing: Listing | None, *, checked: bool) -> CallTarget:
        """A call target (see :mod:`langgraph_mcp.calls.call`), resolved once.

        With fixed credentials a target's connection, paused rounds and identity are this loop's for good, so it is
        kept per loop and handed out again for the same tool found in the same listing."""
        if self.connections.closed:
            raise ServersClosedError()
        loop = asyncio.get_running_loop()
        kept = self._targets.get(loop)
        key = (tool.published_name, checked)
        if kept is not None:
            target = kept.get(key)
            if target is not None and target.tool is tool and target.listing is listing:
                return target
        target = self.connections.call_target(
            tool, self._routing_for(tool.server), listing=listing, checked=checked
        )
        if not target.identity.per_run:
            if kept is None:
                kept = self._targets[loop] = {}
            kept[key] = target
        return target

    def _routing_for(self, server: str) -> OutputRouting:
        routing = self._routing.get(server)
        return routing if routing is not None else self.config.routing_for(server)

    # ------------------------------------------------------------------------------------------- per server

    def status(self, server: str) -> ServerStatus:
        """``McpServers.server_status``: what is known about ``server`` in this loop."""
        report = self.listings.report
        owner = self._owner(server)
        return status_of(server, owner, report.failed_servers.get(server), self.listings.cached(server))

    def run_metadata(self, server: str) -> dict[str, Any]:
        """What a LangChain tool's run says about ``server`` before its call has a target
        (:func:`~langgraph_mcp.calls.observers.server_metadata`)."""
        owner = self._owner(server)
        return server_metadata(
            self.connections.spec(server).transport, owner.protocol_version if owner is not None else None
        )

    def _owner(self, server: str) -> ClientOwner | None:
        """The owner of this loop's connection to ``server`` for this run (``None``: no loop, no credentials)."""
        try:
            return self.connections.connection(server).owner
        except (RuntimeError, CredentialError):
            return None
