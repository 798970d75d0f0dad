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

import asyncio
import contextlib
import contextvars
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import mcp.types as types
from langchain_core.tools import BaseTool

from langgraph_mcp.calls.interceptors import ToolCallInterceptor, as_call_result, call_intercepted
from langgraph_mcp.calls.paused import PausedRounds
from langgraph_mcp.calls.target import CallTarget
from langgraph_mcp.calls.tools import LangChainTools
from langgraph_mcp.catalog import McpTool, ToolResolution
from langgraph_mcp.config import McpServersConfig, OutputRouting, ServerSpec
from langgraph_mcp.connection.connection import ProgressCallback, ServerConnection
from langgraph_mcp.connection.owner import ListKind
from langgraph_mcp.credentials import CALL_HEADERS, RUN_CONFIG, Identity, current_config, is_per_run
from langgraph_mcp.errors import AnswerError, ConfigError, CredentialError, EventLoopError, ServersClosedError
from langgraph_mcp.humans.binding import ApprovalKey, server_identity
from langgraph_mcp.humans.sign_in import SignInResult, check_sign_in_answer, sign_in_result
from langgraph_mcp.servers import resources
from langgraph_mcp.servers.connections import ConnectionKey, LiveConnections
from langgraph_mcp.servers.listings import CacheMode as CacheMode
from langgraph_mcp.servers.listings import ConnectionErrorPolicy as ConnectionErrorPolicy
from langgraph_mcp.servers.listings import ListingCache
from langgraph_mcp.servers.names import NameResolver
from langgraph_mcp.servers.resources import ResourceCache, ResourceRef
from langgraph_mcp.servers.status import ServerStatus, status_of
from langgraph_mcp.servers.sync import SyncBridge, run_in_new_thread, running_loop

if TYPE_CHECKING:
    from langchain_core.documents.base import Blob
    from langchain_core.messages import BaseMessage

T = TypeVar("T")


class McpServers:
    """Connections to a set of MCP servers, their tool catalog, and calls by published tool name.

    Use as ``async with McpServers(config) as servers:`` or just call it: connections start lazily in the
    running event loop, and ``await servers.aclose()`` (or ``servers.close()`` from sync code) ends them all.

    Why this class is longer than ~250 lines: it is the public facade, one job — wiring its parts (see the module
    docstring) and keeping one lifecycle over them. Nearly every method is a documented one-line delegation that
    is public API (the graph nodes, the gate, the CLI and users call it); the few with a body of their own
    (``list_tools``' run config, ``server_status``, the resource and prompt methods) join two parts for one call.
    Splitting it further would only move docstrings.
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
        if identity_idle_timeout <= 0 or max_identities < 1:
            raise ConfigError("identity_idle_timeout must be > 0 and max_identities >= 1")
        self.interceptors: Sequence[ToolCallInterceptor] = tuple(interceptors)
        self.identity_idle_timeout = identity_idle_timeout
        self.max_identities = max_identities
        if not (on_connection_error in ("raise", "ignore") or callable(on_connection_error)):
            raise ConfigError("on_connection_error must be 'raise', 'ignore' or a callable(server, error)")
        self._connections = LiveConnections(
            self.spec,
            idle_timeout=identity_idle_timeout,
            max_identities=max_identities,
            on_list_changed=self._list_changed,
            on_retire=self._forget,
        )
        self._sync = SyncBridge()
        self._listings = ListingCache(self.config, self._connections, on_connection_error)
        self._names = NameResolver(self.config, self._listings)
        self.report = self._listings.report
        self._langchain_tools = LangChainTools(self)
        self._resource_cache = ResourceCache()
        secret = self.config.approval_key
        self.approval_key = ApprovalKey(secret.get_secret_value() if secret is not None else None)
        self._identities: dict[str, str] = {}
        """Signs and verifies decisions (see :mod:`langgraph_mcp.humans.binding`)."""

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

    def routing_for(self, server: str) -> OutputRouting:
        return self.config.routing_for(server)

    def server_identity(self, server: str) -> str:
        """``server``'s name and where it is reached: what a decision about one of its calls is bound to."""
        identity = self._identities.get(server)
        if identity is None:
            identity = self._identities[server] = server_identity(server, self.spec(server))
        return identity

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
        server's log messages go to this context's :data:`~langgraph_mcp.connection.logs.LOG_SINK`."""
        return self._connections.using(server)

    # ------------------------------------------------------------------------------------------- OAuth sign-in

    def hand_over_sign_in(self, server: str, result: SignInResult) -> None:
        """The run's principal signed in to ``server`` (a callback already checked against its sign-in): the next
        connection exchanges the code for tokens (see :mod:`langgraph_mcp.connection.oauth`)."""
        provider = self._connections.sign_in(server)
        if provider is None:
            raise ConfigError(f"MCP server {server!r} has no 'oauth' config: nothing to sign in to")
        if result.code is None:
            raise AnswerError("the callback URL carries no code")
        provider.complete(result.code, result.state, result.iss)

    async def complete_sign_in(
        self, server: str, callback_url: str, *, config: Mapping[str, Any] | None = None
    ) -> None:
        """Outside a graph: finish the sign-in an :class:`~langgraph_mcp.errors.AuthorizationRequiredError` asked
        for, with the URL the browser was sent to (checked against that sign-in), for ``config``'s principal
        (default: the running graph's). The next call or listing exchanges the code; nothing is stored before."""
        if config is not None:
            token = RUN_CONFIG.set(config)
            try:
                return await self.complete_sign_in(server, callback_url)
            finally:
                RUN_CONFIG.reset(token)
        provider = self._connections.sign_in(server)
        if provider is None:
            raise ConfigError(f"MCP server {server!r} has no 'oauth' config: nothing to sign in to")
        pending = await provider.storage.pending()
        if pending is None:
            raise AnswerError(
                f"no sign-in to MCP server {server!r} is in progress for {provider.principal!r}"
            )
        check_sign_in_answer(
            {"authorization_url": pending["authorization_url"]}, {"callback_url": callback_url}
        )
        result = sign_in_result({"callback_url": callback_url})
        if result is None or result.error is not None:
            raise AnswerError(
                f"the authorization server refused the sign-in ({result.error if result else ''})"
            )
        self.hand_over_sign_in(server, result)

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

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` (or :meth:`close`) ran; a closed ``McpServers`` can't be used again."""
        return self._connections.closed

    def ensure_open(self) -> None:
        """Raise :class:`~langgraph_mcp.errors.ServersClosedError` once this ``McpServers`` was closed."""
        if self._connections.closed:
            raise ServersClosedError()

    def close(self) -> None:
        """Synchronous :meth:`aclose`.

        Works from a thread whose event loop is running (a notebook cell) too, unless that loop holds
        connections of this object: only it can close them, and this call would be blocking it - then it raises
        :class:`~langgraph_mcp.errors.EventLoopError` (``await servers.aclose()`` there instead).
        """
        loop = running_loop()
        if loop is None:
            asyncio.run(self.aclose())
            return
        if self._connections.held_by(loop):
            raise EventLoopError(
                "close() on McpServers was called from a thread whose running event loop holds some of its "
                "connections; only that loop can close them and close() would block it: await servers.aclose() "
                "there instead"
            )
        run_in_new_thread(self.aclose)

    def run_sync(
        self, make: Callable[[], Coroutine[Any, Any, T]], *, context: contextvars.Context | None = None
    ) -> T:
        """Run an async operation from synchronous code on this object's private event loop.

        ``context`` (default: a copy of the caller's) is the context the coroutine runs in, so LangGraph's
        ``interrupt()``, config and stream writer work inside it.
        """
        self.ensure_open()
        return self._sync.run(make, context=context)

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
            self._invalidate(server)
        else:
            self._resource_cache.list_changed(server, kind)

    def _invalidate(self, server: str) -> None:
        self._listings.invalidate(server)

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
        self.ensure_open()
        names = list(servers) if servers is not None else self.names
        for name in names:
            self.spec(name)
        return await self._listings.list_tools(names, cache_mode)

    def cached_tool(self, published_name: str) -> McpTool | None:
        """The listed tool with this published name, from the cache only (no I/O).

        Raises :class:`~langgraph_mcp.errors.ToolNameCollisionError` when two cached listings publish it.
        """
        return self._listings.cached_tool(published_name)

    def cached_tools(self) -> list[McpTool]:
        return self._listings.cached_tools()

    def candidate_servers(self, published_name: str) -> list[str]:
        """The configured servers that could publish ``published_name``.

        A server with ``prefix=False`` may publish any name; a prefixed one only names that start with its
        prefix (as listed, or as the opt-in sanitiser would rewrite it). Only a name no candidate's current
        listing contains, with every candidate listed, provably belongs to no MCP server.
        """
        return self._names.candidate_servers(published_name)

    async def resolve_tool(self, published_name: str) -> ToolResolution:
        """Who publishes ``published_name``: the matching tools of every candidate server, and the candidates
        whose listing is missing, failed or stale and could not be refreshed (they can't be ruled out).

        Lists (or re-lists) candidates as needed; never raises for a server that fails to list (it is named
        in ``unknown``). A lookup cut short by anything but the caller's own cancellation counts as a failure.
        """
        self.ensure_open()
        return await self._names.resolve(published_name)

    def cached_resolution(self, published_name: str) -> ToolResolution | None:
        """:meth:`resolve_tool` from the cache alone, or ``None`` when a candidate server would have to be listed."""
        self.ensure_open()
        return self._names.cached_resolution(published_name)

    def call_target(self, tool: McpTool, *, checked: bool = False) -> CallTarget:
        """Where a call to ``tool`` goes in the current run, resolved once (see :mod:`langgraph_mcp.calls.target`).

        ``checked`` (the tool node's calls): the call is not sent once the tool is no longer what the run's listing
        it was judged on holds."""
        listing = self._listings.cached(tool.server) if checked else None
        return self._connections.call_target(
            tool, self.routing_for(tool.server), listing=listing, checked=checked
        )

    def listed_now(self, tool: McpTool) -> bool:
        """Whether ``tool`` is what its server lists right now: the current run's listing of it is fresh (made
        on the live process or session, within its ``ttlMs`` or ``listing_max_age``) and holds this very tool
        (an unchanged descriptor keeps its object; a changed definition is a new one). No I/O."""
        # Read under the run's own credentials: an interceptor's header override (CALL_HEADERS) picks another
        # connection for the send, which has no listing of its own; the tool was resolved and judged under these.
        token = CALL_HEADERS.set(None)
        try:
            listing = self._listings.cached(tool.server)
        finally:
            CALL_HEADERS.reset(token)
        return listing is not None and listing.fresh and listing.by_name.get(tool.published_name) is tool

    async def get_tool(self, published_name: str) -> McpTool:
        """The tool published as ``published_name``, listing servers if needed (fails closed).

        Raises :class:`~langgraph_mcp.errors.ToolNameCollisionError` when two servers publish the name,
        :class:`~langgraph_mcp.errors.ToolOwnerUnknownError` when no listed server publishes it but a server
        that could was not listed, and ``ToolNotFoundError`` only when no configured server publishes it.
        """
        return (await self.resolve_tool(published_name)).tool()

    def server_status(self, server: str) -> ServerStatus:
        """What is known about ``server`` in this loop: connection state, era, server info, last error.

        ``state`` is ``idle`` (not started), ``connected``, ``reconnecting`` (an outage with restarts left),
        ``down`` (waiting out its reconnect backoff: calls fail fast until ``next_attempt_in`` seconds pass) or
        ``closed``; ``failures`` counts failed attempts in the current outage, ``starts`` every (re)start.
        """
        try:
            conn: ServerConnection | None = self.connection(server)
        except (RuntimeError, CredentialError):
            conn = None
        return status_of(server, conn, self.report.failed_servers.get(server), self._listings.cached(server))

    def run_metadata(self, server: str) -> dict[str, Any]:
        """What a call's tool run says about ``server`` (see :mod:`langgraph_mcp.calls.runs`): its transport and,
        once connected in this loop, the negotiated protocol version and its era."""
        status = self.server_status(server)
        return {
            "mcp_transport": self.spec(server).transport,
            "mcp_era": status.era,
            "mcp_protocol_version": status.protocol_version,
        }

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
        self.ensure_open()
        tool = (await self._names.resolve(published_name)).tool()  # get_tool, one await less per call
        outcome = await call_intercepted(
            self.interceptors,
            self.call_target(tool),
            dict(arguments or {}),
            tool_call_id="",
            asker=None,
            progress=progress,
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
