"""``McpServers``: many MCP connections with one lifecycle, the tool catalog, and routing a published name to a server.

``McpServers`` is the public facade; each job lives in a part it owns and wires together:

- :mod:`~langgraph_mcp.servers.connections` — which connection a call uses: **one per server per event loop** (an
  ``mcp.Client`` can only be used from the loop it was entered in), and for a server whose headers depend on the
  run (:mod:`langgraph_mcp.credentials`) one per credential identity, with its paused rounds; idle identities are
  closed and the live ones capped (:mod:`langgraph_mcp.servers.connections`).
- :mod:`~langgraph_mcp.servers.listings` — tool listings per (server, identity), shared by all loops; fetching one
  listing is :mod:`~langgraph_mcp.servers.listings`. :mod:`~langgraph_mcp.servers.names` — which server publishes a
  name (fails closed).
- :mod:`~langgraph_mcp.servers.sync` — the private background loop synchronous callers (``graph.invoke``) go through.
- :mod:`~langgraph_mcp.servers.resources` (resources and prompts), :mod:`~langgraph_mcp.calls.interceptors` (the call path),
  :mod:`~langgraph_mcp.calls.tools` (LangChain tools).
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import mcp.types as types
from langchain_core.tools import BaseTool

from langgraph_mcp.calls.driver import run_call
from langgraph_mcp.calls.interceptors import ToolCallInterceptor, as_call_result, call_intercepted
from langgraph_mcp.calls.tools import LangChainTools
from langgraph_mcp.catalog import McpTool, ToolResolution
from langgraph_mcp.config import McpServersConfig, ServerSpec
from langgraph_mcp.connection.connection import ProgressCallback
from langgraph_mcp.connection.owner import ListKind
from langgraph_mcp.credentials import current_config, is_per_run
from langgraph_mcp.errors import AuthorizationRequiredError, ConfigError, SignInRequiredError
from langgraph_mcp.servers import resources
from langgraph_mcp.servers.access import ServerAccess
from langgraph_mcp.servers.connections import ConnectionKey, LiveConnections
from langgraph_mcp.servers.identities import run_config
from langgraph_mcp.servers.listings import CacheMode as CacheMode
from langgraph_mcp.servers.listings import ConnectionErrorPolicy as ConnectionErrorPolicy
from langgraph_mcp.servers.listings import ListingCache
from langgraph_mcp.servers.names import NameResolver
from langgraph_mcp.servers.resources import ResourceCache, ResourceRef
from langgraph_mcp.servers.status import ServerStatus
from langgraph_mcp.servers.sync import SyncBridge, close_from_sync

if TYPE_CHECKING:
    from langchain_core.documents.base import Blob
    from langchain_core.messages import BaseMessage

T = TypeVar("T")


class McpServers:
    """Connections to a set of MCP servers, their tool catalog, and calls by published tool name.

    Use as ``async with McpServers(config) as servers:`` or just call it: connections start lazily in the
    running event loop, and ``await servers.aclose()`` (or ``servers.close()`` from sync code) ends them all.
    What the package's own nodes use of it besides is its internal half, :class:`~langgraph_mcp.servers.access.ServerAccess`.
    """

    def __init__(
        self,
        config: McpServersConfig | Mapping[str, Any] | str | Path,
        *,
        on_connection_error: ConnectionErrorPolicy = "raise",
        interceptors: Sequence[ToolCallInterceptor] = (),
        identity_idle_timeout: float = 300.0,
        max_identities: int = 100,
    ) -> None:
        """``interceptors`` wrap every tool call, the first outermost (see :mod:`langgraph_mcp.calls.interceptors`).

        Per-run credentials (see :mod:`langgraph_mcp.credentials`) get a connection and a catalog per identity;
        an identity unused for ``identity_idle_timeout`` seconds is closed, and at most ``max_identities`` stay
        live per event loop (least recently used closed first).
        """
        self.config = McpServersConfig.load(config)
        connections = LiveConnections(
            self.spec,
            idle_timeout=identity_idle_timeout,
            max_identities=max_identities,
            on_list_changed=self._list_changed,
            on_retire=self._forget,
        )
        self._listings = ListingCache(self.config, connections, on_connection_error)
        self.report = self._listings.report
        self._access = ServerAccess(
            self.config,
            connections,
            self._listings,
            NameResolver(self.config, self._listings),
            SyncBridge(),
            tuple(interceptors),
        )
        self._langchain_tools = LangChainTools(self._access)
        self._resource_cache = ResourceCache()

    # ------------------------------------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> McpServers:
        """List every server that can be listed here. Outside a run, a server whose credentials come from the run
        (``${configurable:...}`` headers, a ``credentials`` callable, per-user sign-in) is not: it is listed per
        identity on its first use inside a run."""
        in_run = current_config() is not None
        names = [name for name, spec in self.config.servers.items() if in_run or not is_per_run(spec)]
        if names:
            await self.list_tools(names)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def names(self) -> list[str]:
        return list(self.config.servers)

    def spec(self, server: str) -> ServerSpec:
        try:
            return self.config.servers[server]
        except KeyError:
            raise ConfigError(
                f"no MCP server named {server!r}; configured: {', '.join(self.names)}"
            ) from None

    async def complete_sign_in(
        self, server: str, callback_url: str, *, config: Mapping[str, Any] | None = None
    ) -> None:
        """Outside a graph: finish the sign-in an :class:`~langgraph_mcp.errors.AuthorizationRequiredError` asked
        for, with the URL the browser was sent to (checked against that sign-in), for ``config``'s principal
        (default: the running graph's). The next call or listing exchanges the code; nothing is stored before."""
        with run_config(config):
            await self._access.connections.identities.complete(server, callback_url)

    async def aclose(self) -> None:
        """Close every connection: this loop's, the private sync loop's, and other running loops'."""
        await self._access.connections.aclose()
        self._access.sync.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` (or :meth:`close`) ran; a closed ``McpServers`` can't be used again."""
        return self._access.connections.closed

    def close(self) -> None:
        """Synchronous :meth:`aclose`.

        Works from a thread whose event loop is running (a notebook cell) too, unless that loop holds
        connections of this object: only it can close them, and this call would be blocking it - then it raises
        :class:`~langgraph_mcp.errors.EventLoopError` (``await servers.aclose()`` there instead).
        """
        close_from_sync(self.aclose, self._access.connections.held_by)

    def run_sync(
        self, make: Callable[[], Coroutine[Any, Any, T]], *, context: contextvars.Context | None = None
    ) -> T:
        """Run an async operation from synchronous code on this object's private event loop.

        ``context`` (default: a copy of the caller's) is the context the coroutine runs in, so LangGraph's
        ``interrupt()``, config and stream writer work inside it.
        """
        return self._access.run_sync(make, context=context)

    # ------------------------------------------------------------------------------------------- catalog

    @property
    def on_connection_error(self) -> ConnectionErrorPolicy:
        """What a failed listing does in :meth:`list_tools`: ``raise``, ``ignore`` or call ``(server, error)``."""
        return self._listings.on_connection_error

    @on_connection_error.setter
    def on_connection_error(self, policy: ConnectionErrorPolicy) -> None:
        self._listings.on_connection_error = policy

    def _list_changed(self, server: str, kind: ListKind) -> None:
        """``server`` said its tools, resources or prompts changed: what was kept of that listing goes."""
        if kind == "tools":
            self._listings.invalidate(server)
        else:
            self._resource_cache.list_changed(server, kind)

    def _forget(self, key: ConnectionKey) -> None:
        """What was kept for a retired identity's connection goes with it."""
        self._listings.forget(key)
        self._resource_cache.drop((key[1], key[0]))

    async def list_tools(
        self,
        servers: Sequence[str] | None = None,
        cache_mode: CacheMode = "use",
        *,
        config: Mapping[str, Any] | None = None,
        include_app_only: bool = False,
    ) -> list[McpTool]:
        """List the tools of ``servers`` (default: all) a model may be offered (MCP Apps tools for their app only,
        without ``"model"`` in ``_meta.ui.visibility``, only with ``include_app_only``; they still resolve for a call).
        ``cache_mode``: ``use`` serves a fresh cached listing, ``refresh`` always asks the servers and stores the
        answer, ``bypass`` asks without touching the cache. ``config`` is the run config whose credentials list
        (default: the running graph's; needed outside a run when headers use ``${configurable:...}``).
        """
        with run_config(config):
            self._access.ensure_open()
            names = list(servers) if servers is not None else self.names
            for name in names:
                self.spec(name)
            tools = await _saying_how_to_sign_in(self._listings.list_tools(names, cache_mode))
        return tools if include_app_only else [t for t in tools if t.for_model]

    def cached_tool(self, published_name: str) -> McpTool | None:
        """The listed tool with this published name, from the cache only (no I/O).

        Raises :class:`~langgraph_mcp.errors.ToolNameCollisionError` when two cached listings publish it.
        """
        return self._listings.cached_tool(published_name)

    def cached_tools(self) -> list[McpTool]:
        return self._listings.cached_tools()

    async def resolve_tool(self, published_name: str) -> ToolResolution:
        """Who publishes ``published_name``: the matching tools of every candidate server, and the candidates
        whose listing is missing, failed or stale and could not be refreshed (they can't be ruled out).

        Lists (or re-lists) candidates as needed; never raises for a server that fails to list (it is named
        in ``unknown``). A lookup cut short by anything but the caller's own cancellation counts as a failure.
        """
        return await self._access.names.resolve(published_name)

    async def get_tool(self, published_name: str) -> McpTool:
        """The tool published as ``published_name``, listing servers if needed (fails closed).

        Raises :class:`~langgraph_mcp.errors.ToolNameCollisionError` when two servers publish the name,
        ``ToolOwnerUnknownError`` while a server that could publish it is not listed (even if another lists it:
        nobody is asked here), and ``ToolNotFoundError`` only when no configured server publishes it.
        """
        return (await self.resolve_tool(published_name)).sole_tool()

    def server_status(self, server: str) -> ServerStatus:
        """What is known about ``server`` in this loop: connection state, era, server info, last error.

        ``state`` is ``idle`` (not started), ``connected``, ``reconnecting`` (an outage with restarts left),
        ``down`` (waiting out its reconnect backoff: calls fail fast until ``next_attempt_in`` seconds pass) or
        ``closed``; ``failures`` counts failed attempts in the current outage, ``starts`` every (re)start.
        """
        return self._access.status(server)

    # ------------------------------------------------------------------------------------------- calls

    async def call_tool(
        self,
        published_name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> types.CallToolResult:
        """Call a tool by published name and return the server's ``CallToolResult``.

        Transport failures of read-only or idempotent tools are retried (``retries`` per server). A tool that asks
        for input can't be answered here: use :class:`~langgraph_mcp.McpToolNode` in a graph for that.
        """
        tool = (await self._access.names.resolve(published_name)).sole_tool()
        target, args = self._access.call_target(tool), dict(arguments or {})
        if not self._access.interceptors:  # the driver's result as it is: no outcome to convert
            return await run_call(target, args, tool_call_id="", asker=None, progress=progress)
        outcome = await call_intercepted(
            self._access.interceptors, target, args, tool_call_id="", asker=None, progress=progress
        )
        return as_call_result(outcome)

    async def get_tools(
        self, servers: Sequence[str] | None = None, *, config: Mapping[str, Any] | None = None
    ) -> list[BaseTool]:
        """LangChain ``StructuredTool``s for ``create_agent`` / ``ToolNode`` (see :mod:`langgraph_mcp.calls.tools`).

        A tool listed unchanged since the last call is the same object as last time; a changed one is new.
        ``config``: as for :meth:`list_tools`. Each call the tools make uses the credentials of the run it is in.
        """
        return self._langchain_tools.convert(await self.list_tools(servers, config=config))

    # ------------------------------------------------------------------------------------------- resources, prompts

    async def list_resources(self, server: str, cache_mode: CacheMode = "use") -> list[types.Resource]:
        """Every resource ``server`` lists (all pages); cached while the server's ttl hint allows."""
        return await resources.list_resources(
            self._access.connections, self._resource_cache, server, cache_mode
        )

    async def list_resource_templates(
        self, server: str, cache_mode: CacheMode = "use"
    ) -> list[types.ResourceTemplate]:
        """Every resource template ``server`` lists; read one by filling in its ``uri_template``."""
        return await resources.list_resource_templates(
            self._access.connections, self._resource_cache, server, cache_mode
        )

    async def read_resource(self, server: str, uri: ResourceRef, cache_mode: CacheMode = "use") -> list[Blob]:
        """Read a resource into ``Blob``s (``uri`` and ``server`` in their metadata). ``uri`` may also be a
        ``resource_link`` from a tool result (an mcp ``ResourceLink`` or the ToolMessage's file block)."""
        return await resources.read_resource(
            self._access.connections, self._resource_cache, server, uri, cache_mode
        )

    async def list_prompts(self, server: str, cache_mode: CacheMode = "use") -> list[types.Prompt]:
        """Every prompt ``server`` lists (all pages), with its declared arguments."""
        return await resources.list_prompts(
            self._access.connections, self._resource_cache, server, cache_mode
        )

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, Any] | None = None
    ) -> list[BaseMessage]:
        """Render prompt ``name`` of ``server`` into LangChain messages (user → Human, assistant → AI)."""
        return await resources.get_prompt(self._access.connections, server, name, arguments)


def server_access(servers: McpServers) -> ServerAccess:
    """The package's own way into ``servers`` (the tool node, the gate, the middleware): its parts, and where a call
    goes. Not user API."""
    return servers._access


async def _saying_how_to_sign_in(listing: Awaitable[list[McpTool]]) -> list[McpTool]:
    """A listing of :meth:`McpServers.list_tools`, which cannot pause: a sign-in it needs is a
    :class:`~langgraph_mcp.errors.SignInRequiredError`, which says how to sign in."""
    try:
        return await listing
    except SignInRequiredError:
        raise
    except AuthorizationRequiredError as needed:
        raise SignInRequiredError.of(needed) from needed
