"""``McpServers``: many MCP connections with one lifecycle, the tool catalog, and routing a published name to a server.

Event loops: an ``mcp.Client`` can only be used from the loop it was entered in, so ``McpServers`` keeps **one
connection per server per event loop**, started lazily on first use in that loop. Synchronous callers (e.g. a graph
run with ``graph.invoke``) go through a private background loop owned by this object. The catalog (tool listings)
is shared by all loops.

Credentials: a server whose headers depend on the run (:mod:`langgraph_mcp.credentials`) gets one connection, one
tool listing and one set of paused calls **per credential identity** (per loop), picked from the running graph's
config on every call and lookup; idle identities are closed and the live ones capped
(:mod:`langgraph_mcp.identities`). A server with fixed credentials keeps its single connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

import mcp.types as types
from langchain_core.tools import BaseTool

from langgraph_mcp import resources
from langgraph_mcp.catalog import (
    CatalogReport,
    McpTool,
    ServerCatalog,
    ToolResolution,
    check_collisions,
    close_matches,
    sanitize_name,
)
from langgraph_mcp.config import McpServersConfig, OutputRouting, ServerSpec
from langgraph_mcp.connection import ServerConnection, era_of
from langgraph_mcp.credentials import (
    RUN_CONFIG,
    Identity,
)
from langgraph_mcp.elicitation.paused import PausedRounds
from langgraph_mcp.errors import (
    ConfigError,
    CredentialError,
    LangGraphMcpError,
    ServerDiscoveryError,
)
from langgraph_mcp.interceptors import ToolCallInterceptor, as_call_result, call_intercepted
from langgraph_mcp.live_connections import ConnectionKey, LiveConnections
from langgraph_mcp.resources import ResourceCache, ResourceRef
from langgraph_mcp.sync_bridge import SyncBridge, refuse_inside_loop
from langgraph_mcp.tool_listing import Listing, describe_failure, fetch_listing
from langgraph_mcp.tools import LangChainTools

if TYPE_CHECKING:
    from langchain_core.documents.base import Blob
    from langchain_core.messages import BaseMessage

T = TypeVar("T")
CacheMode: TypeAlias = Literal["use", "refresh", "bypass"]
ConnectionErrorPolicy: TypeAlias = Literal["raise", "ignore"] | Callable[[str, BaseException], None]


class McpServers:
    """Connections to a set of MCP servers, their tool catalog, and calls by published tool name.

    Use as ``async with McpServers(config) as servers:`` or just call it: connections start lazily in the
    running event loop, and ``await servers.aclose()`` (or ``servers.close()`` from sync code) ends them all.
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
        """``interceptors`` wrap every tool call, the first outermost (see :mod:`langgraph_mcp.interceptors`).

        Per-run credentials (see :mod:`langgraph_mcp.credentials`) get a connection and a catalog per identity;
        an identity unused for ``identity_idle_timeout`` seconds is closed, and at most ``max_identities`` stay
        live per event loop (least recently used closed first).
        """
        self.config = McpServersConfig.load(config)
        if identity_idle_timeout <= 0 or max_identities < 1:
            raise ConfigError("identity_idle_timeout must be > 0 and max_identities >= 1")
        self.interceptors: Sequence[ToolCallInterceptor] = tuple(interceptors)
        self.identity_idle_timeout = identity_idle_timeout
        self.max_identities = max_identities
        if not (on_connection_error in ("raise", "ignore") or callable(on_connection_error)):
            raise ConfigError("on_connection_error must be 'raise', 'ignore' or a callable(server, error)")
        self.on_connection_error = on_connection_error
        self.report = CatalogReport()
        self._listings: dict[ConnectionKey, Listing] = {}
        self._catalogs: dict[str, ServerCatalog] = {}
        self._langchain_tools = LangChainTools(self)
        self._resource_cache = ResourceCache()
        self._list_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._connections = LiveConnections(
            self.spec,
            idle_timeout=identity_idle_timeout,
            max_identities=max_identities,
            on_tools_changed=self._invalidate,
            on_retire=self._forget,
        )
        self._sync = SyncBridge()

    # ------------------------------------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> McpServers:
        await self.list_tools()
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

    def routing_for(self, server: str) -> OutputRouting:
        return self.config.routing_for(server)

    # ------------------------------------------------------------------------------------------- connections

    def identity(self, server: str) -> Identity:
        """The credentials a call to ``server`` is sent with in the current run (see :mod:`.credentials`).

        Raises :class:`~langgraph_mcp.credentials.CredentialError` when the run lacks a ``configurable`` value
        the server's headers need."""
        return self._connections.identity(server)

    def call_headers(self, server: str) -> dict[str, str]:
        """The HTTP headers a call to ``server`` is sent with in the current run (empty for stdio/in-process)."""
        return dict(self.identity(server).headers or {})

    def using(self, server: str) -> contextlib.AbstractContextManager[None]:
        """Hold the current run's connection to ``server`` while the block runs: no idle close under it, and the
        server's log messages go to this context's :data:`~langgraph_mcp.server_logs.LOG_SINK`."""
        return self._connections.using(server)

    def live_identities(self, server: str | None = None) -> int:
        """How many per-run identities have a live connection in this event loop (optionally for one server)."""
        return self._connections.live_identities(server)

    def connection(self, server: str) -> ServerConnection:
        """This event loop's connection to ``server`` for the current run's credentials (started on first use)."""
        return self._connections.connection(server)

    def paused_rounds(self, server: str) -> PausedRounds:
        """The paused rounds kept for this event loop's connection to ``server`` (see :mod:`.elicitation.paused`)."""
        return self._connections.paused_rounds(server)

    async def aclose(self) -> None:
        """Close every connection: this loop's, the private sync loop's, and other running loops'."""
        await self._connections.aclose()
        self._sync.close()

    def close(self) -> None:
        """Synchronous :meth:`aclose` for code that has no event loop running."""
        refuse_inside_loop("close()", "await servers.aclose()")
        asyncio.run(self.aclose())

    def run_sync(
        self, make: Callable[[], Coroutine[Any, Any, T]], *, context: contextvars.Context | None = None
    ) -> T:
        """Run an async operation from synchronous code on this object's private event loop.

        ``context`` (default: a copy of the caller's) is the context the coroutine runs in, so LangGraph's
        ``interrupt()``, config and stream writer work inside it.
        """
        return self._sync.run(make, context=context)

    # ------------------------------------------------------------------------------------------- catalog

    def _invalidate(self, server: str) -> None:
        for key in [k for k in self._listings if k[0] == server]:
            del self._listings[key]

    def _forget(self, key: ConnectionKey) -> None:
        """What was kept for a retired identity's connection goes with it."""
        self._listings.pop(key, None)
        self._resource_cache.drop((key[1], key[0]))

    async def list_tools(
        self,
        servers: Sequence[str] | None = None,
        cache_mode: CacheMode = "use",
        *,
        config: Mapping[str, Any] | None = None,
    ) -> list[McpTool]:
        """List the tools of ``servers`` (default: all), per the connection-error policy.

        ``cache_mode``: ``use`` serves a fresh cached listing, ``refresh`` always asks the servers and stores the
        answer, ``bypass`` asks without touching the cache. ``config`` is the run config whose credentials list
        (default: the running graph's; needed outside a run when headers use ``${configurable:...}``).
        """
        if config is not None:
            token = RUN_CONFIG.set(config)
            try:
                return await self.list_tools(servers, cache_mode)
            finally:
                RUN_CONFIG.reset(token)
        names = list(servers) if servers is not None else self.names
        for name in names:
            self.spec(name)
        results = await asyncio.gather(
            *(self._listing(name, cache_mode) for name in names), return_exceptions=True
        )
        tools: list[McpTool] = []
        for name, result in zip(names, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                self._handle_failure(name, result)
                continue
            self.report.failed_servers.pop(name, None)
            tools.extend(result.tools)
        self.report.skipped = [s for listing in self._current_listings() for s in listing.skipped]
        check_collisions(tools)
        return tools

    def _handle_failure(self, server: str, error: Exception) -> None:
        self.report.failed_servers[server] = error
        policy = self.on_connection_error
        if policy == "raise":
            if isinstance(error, LangGraphMcpError):
                raise error
            raise ServerDiscoveryError(server, f"listing tools failed: {error!r}") from error
        if callable(policy):
            policy(server, error)

    async def _listing(self, server: str, cache_mode: CacheMode) -> Listing:
        key = self._connections.key(server)
        cached = self._listings.get(key)
        if cache_mode == "use" and cached is not None and cached.fresh:
            return cached
        listing = await fetch_listing(self.connection(server), self._catalog(server))
        if cache_mode != "bypass":
            self._listings[key] = listing
        return listing

    def _catalog(self, server: str) -> ServerCatalog:
        catalog = self._catalogs.get(server)
        if catalog is None:
            spec = self.spec(server)
            catalog = ServerCatalog(
                server,
                prefix=spec.prefix,
                separator=self.config.separator,
                invalid_names=self.config.invalid_names,
                trusted=spec.trust_annotations,
            )
            self._catalogs[server] = catalog
        return catalog

    def cached_tool(self, published_name: str) -> McpTool | None:
        """The listed tool with this published name, from the cache only (no I/O).

        Raises :class:`~langgraph_mcp.errors.ToolNameCollisionError` when two cached listings publish it.
        """
        found = [t for listing in self._current_listings() if (t := listing.by_name.get(published_name))]
        if len(found) > 1:
            check_collisions(found)
        return found[0] if found else None

    def cached_tools(self) -> list[McpTool]:
        return [tool for listing in self._current_listings() for tool in listing.tools]

    def _current_listings(self) -> list[Listing]:
        """The cached listings made with the current run's credentials, one per server that has one."""
        listings = []
        for server in self.names:
            listing = self._listings.get(self._connections.key_or_none(server))  # type: ignore[arg-type]
            if listing is not None:
                listings.append(listing)
        return listings

    def candidate_servers(self, published_name: str) -> list[str]:
        """The configured servers that could publish ``published_name``.

        A server with ``prefix=False`` may publish any name; a prefixed one only names that start with its
        prefix (as listed, or as the opt-in sanitiser would rewrite it). Only a name no candidate's current
        listing contains, with every candidate listed, provably belongs to no MCP server.
        """
        separator = self.config.separator
        out: list[str] = []
        for server, spec in self.config.servers.items():
            prefix = f"{server}{separator}"
            sanitized = sanitize_name(prefix)[: min(len(prefix), 40)]
            if not spec.prefix or published_name.startswith((prefix, sanitized)):
                out.append(server)
        return out

    async def resolve_tool(self, published_name: str) -> ToolResolution:
        """Who publishes ``published_name``: the matching tools of every candidate server, and the candidates
        whose listing is missing, failed or stale and could not be refreshed (they can't be ruled out).

        Lists (or re-lists) candidates as needed; never raises for a server that fails to list (it is named
        in ``unknown``). A lookup cut short by anything but the caller's own cancellation counts as a failure.
        """
        candidates = self.candidate_servers(published_name)
        unknown: dict[str, str] = {}

        def to_list() -> list[str]:  # stale candidates, and servers never listed (for "did you mean")
            return [
                s
                for s in self.names
                if (s in candidates and not self._fresh(s))
                or self._connections.key_or_none(s) not in self._listings
            ]

        if to_list():
            loop = asyncio.get_running_loop()
            lock = self._list_locks.setdefault(loop, asyncio.Lock())
            async with lock:
                if stale := to_list():
                    failures = await self._list_quietly(stale)
                    unknown = {s: describe_failure(e) for s, e in failures.items() if s in candidates}
        for server in candidates:
            if server not in unknown and not self._fresh(server):
                unknown[server] = "its tools are not listed"
        tools = tuple(
            tool
            for server in candidates
            if server not in unknown
            and (tool := self._listings[self._connections.key(server)].by_name.get(published_name))
        )
        return ToolResolution(
            published_name,
            tools,
            unknown,
            [] if tools else close_matches(published_name, self.cached_tools()),
        )

    def cached_resolution(self, published_name: str) -> ToolResolution | None:
        """:meth:`resolve_tool` from the cache alone, or ``None`` when a candidate server would have to be listed."""
        candidates = self.candidate_servers(published_name)
        if not all(self._fresh(s) for s in candidates):
            return None
        tools = tuple(
            t
            for s in candidates
            if (t := self._listings[self._connections.key(s)].by_name.get(published_name))
        )
        return ToolResolution(
            published_name, tools, {}, [] if tools else close_matches(published_name, self.cached_tools())
        )

    def _fresh(self, server: str) -> bool:
        listing = self._listings.get(self._connections.key_or_none(server))  # type: ignore[arg-type]
        return listing is not None and listing.fresh

    async def get_tool(self, published_name: str) -> McpTool:
        """The tool published as ``published_name``, listing servers if needed (fails closed).

        Raises :class:`~langgraph_mcp.errors.ToolNameCollisionError` when two servers publish the name,
        :class:`~langgraph_mcp.errors.ToolOwnerUnknownError` when no listed server publishes it but a server
        that could was not listed, and ``ToolNotFoundError`` only when no configured server publishes it.
        """
        return (await self.resolve_tool(published_name)).tool()

    async def _list_quietly(self, servers: list[str]) -> dict[str, BaseException]:
        """List servers for a lookup: a broken server must not hide another server's tools. Returns failures.

        A listing cancelled while this task was not itself being cancelled (a cut response surfacing as
        ``CancelledError``) is a failure like any other; the caller's own cancellation propagates.
        """
        results = await asyncio.gather(*(self._listing(s, "use") for s in servers), return_exceptions=True)
        failures: dict[str, BaseException] = {}
        for server, result in zip(servers, results, strict=True):
            if isinstance(result, asyncio.CancelledError):
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise result
            elif isinstance(result, BaseException) and not isinstance(result, Exception):
                raise result
            if isinstance(result, CredentialError):  # a fault of this run, not of the server: not reported
                failures[server] = result
            elif isinstance(result, BaseException):
                self.report.failed_servers[server] = result
                failures[server] = result
            else:
                self.report.failed_servers.pop(server, None)
        return failures

    def server_status(self, server: str) -> dict[str, Any]:
        """What is known about ``server`` in this loop: connection state, era, server info, last error.

        ``state`` is ``idle`` (not started), ``connected``, ``reconnecting`` (an outage with restarts left),
        ``down`` (waiting out its reconnect backoff: calls fail fast until ``next_attempt_in`` seconds pass) or
        ``closed``; ``failures`` counts failed attempts in the current outage, ``starts`` every (re)start.
        """
        try:
            conn: ServerConnection | None = self.connection(server)
        except (RuntimeError, CredentialError):
            conn = None
        error = self.report.failed_servers.get(server)
        if error is None and conn is not None and conn.backoff.in_outage:
            error = conn.last_error
        return {
            "server": server,
            "state": conn.state if conn else "closed",
            "protocol_version": conn.protocol_version if conn else None,
            "era": era_of(conn.protocol_version) if conn else None,
            "server_info": conn.server_info.name if conn and conn.server_info else None,
            "error": str(error) if error else None,
            "starts": conn.starts if conn else 0,
            "failures": conn.backoff.failures if conn else 0,
            "next_attempt_in": round(conn.backoff.wait_remaining(), 3)
            if conn and conn.backoff.in_outage
            else None,
            "tools": len(listing.tools)
            if (listing := self._listings.get(self._connections.key_or_none(server))) is not None  # type: ignore[arg-type]
            else None,
        }

    # ------------------------------------------------------------------------------------------- calls

    async def call_tool(
        self,
        published_name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
    ) -> types.CallToolResult:
        """Call a tool by published name and return the server's ``CallToolResult``.

        Transport failures of read-only or idempotent tools are retried (``retries`` per server). A tool that asks
        for input can't be answered here: use :class:`~langgraph_mcp.McpToolNode` in a graph for that.
        """
        tool = await self.get_tool(published_name)
        outcome = await call_intercepted(
            self, tool, dict(arguments or {}), tool_call_id="", asker=None, progress=progress
        )
        return as_call_result(outcome)

    async def get_tools(
        self, servers: Sequence[str] | None = None, *, config: Mapping[str, Any] | None = None
    ) -> list[BaseTool]:
        """LangChain ``StructuredTool``s for ``create_agent`` / ``ToolNode`` (see :mod:`langgraph_mcp.tools`).

        A tool listed unchanged since the last call is the same object as last time; a changed one is new.
        ``config``: as for :meth:`list_tools`. Each call the tools make uses the credentials of the run it is in.
        """
        return self._langchain_tools.convert(await self.list_tools(servers, config=config))

    # ------------------------------------------------------------------------------------------- resources, prompts

    async def list_resources(self, server: str, cache_mode: CacheMode = "use") -> list[types.Resource]:
        """Every resource ``server`` lists (all pages); cached while the server's ttl hint allows."""
        with self.using(server):
            return await resources.list_resources(
                self.connection(server), self._resource_cache, self.identity(server).key, cache_mode
            )

    async def list_resource_templates(
        self, server: str, cache_mode: CacheMode = "use"
    ) -> list[types.ResourceTemplate]:
        """Every resource template ``server`` lists; read one by filling in its ``uri_template``."""
        with self.using(server):
            return await resources.list_resource_templates(
                self.connection(server), self._resource_cache, self.identity(server).key, cache_mode
            )

    async def read_resource(self, server: str, uri: ResourceRef, cache_mode: CacheMode = "use") -> list[Blob]:
        """Read a resource into ``Blob``s (``uri`` and ``server`` in their metadata). ``uri`` may also be a
        ``resource_link`` from a tool result (an mcp ``ResourceLink`` or the ToolMessage's file block)."""
        with self.using(server):
            return await resources.read_resource(
                self.connection(server), self._resource_cache, uri, self.identity(server).key, cache_mode
            )

    async def list_prompts(self, server: str, cache_mode: CacheMode = "use") -> list[types.Prompt]:
        """Every prompt ``server`` lists (all pages), with its declared arguments."""
        with self.using(server):
            return await resources.list_prompts(
                self.connection(server), self._resource_cache, self.identity(server).key, cache_mode
            )

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, Any] | None = None
    ) -> list[BaseMessage]:
        """Render prompt ``name`` of ``server`` into LangChain messages (user → Human, assistant → AI)."""
        with self.using(server):
            return await resources.get_prompt(self.connection(server), name, arguments)
