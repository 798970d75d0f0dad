"""Tool listings: one server's tools/list (every page) and the listings cached per connection key.

Listing one server's tools: every page of ``tools/list`` within the caps, each tool parsed on its own.

The tool listings of every server, cached per connection key: when to (re-)list, what failed, what was skipped.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, TypeAlias

import mcp.types as types
import pydantic
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from langgraph_mcp import _compat
from langgraph_mcp.catalog import CatalogReport, McpTool, ServerCatalog, SkippedTool, check_collisions
from langgraph_mcp.config import McpServersConfig, ServerSpec
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.errors import (
    ConfigError,
    CredentialError,
    LangGraphMcpError,
    ServerConnectionError,
    ServerDiscoveryError,
    ServerError,
    ServersClosedError,
    ServerUnavailableError,
)
from langgraph_mcp.servers.connections import ConnectionKey, LiveConnections


class _Page(NamedTuple):
    result: types.ListToolsResult
    unparseable: list[tuple[str, str]]
    """(tool name, why) for listed tools that are not even valid ``mcp.types.Tool``s."""


async def _lenient_page(client: Any, cursor: str | None, error: pydantic.ValidationError) -> _Page:
    """Fetch one ``tools/list`` page without the SDK's whole-page validation; parse each tool on its own.

    The SDK has no public unvalidated request (see :mod:`langgraph_mcp._compat`); where this mcp release lacks
    the internals, the original validation error stands.
    """
    session = client.session
    params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
    request = types.ListToolsRequest(params=params).model_dump(by_alias=True, mode="json", exclude_none=True)
    raw = await _compat.send_unvalidated(session, request["method"], request.get("params"))
    if raw is None:
        raise error
    entries = raw.get("tools") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        raise error
    tools: list[types.Tool] = []
    unparseable: list[tuple[str, str]] = []
    for index, entry in enumerate(entries):
        try:
            tools.append(types.Tool.model_validate(entry, by_name=False))
        except pydantic.ValidationError as exc:
            name = entry.get("name") if isinstance(entry, dict) else None
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'tool'}: {e['msg']}" for e in exc.errors()
            )
            label = str(name) if name is not None else f"#{index}"
            unparseable.append((label, f"not a valid MCP tool ({problems})"))
    next_cursor = raw.get("nextCursor")
    ttl_ms = raw.get("ttlMs")
    result = types.ListToolsResult(
        tools=tools,
        next_cursor=next_cursor if isinstance(next_cursor, str) else None,
        ttl_ms=ttl_ms if isinstance(ttl_ms, int) and ttl_ms > 0 and not _is_legacy_client(client) else 0,
    )
    # Let the session learn the output schemas it checks call results against (else its first call to one of
    # these tools re-lists, and fails the same validation).
    _compat.absorb_tool_listing(session, result, complete=cursor is None and result.next_cursor is None)
    return _Page(result, unparseable)


def _check_pagination(
    server: str, spec: ServerSpec, cursor: str, seen: set[str], pages: int, tools: int
) -> None:
    """A ``tools/list`` that would go on forever fails with what it did, instead of a fake name collision."""
    if cursor in seen:
        raise ServerDiscoveryError(
            server,
            f"tools/list pagination repeated the cursor {cursor:.80} after {pages} pages; the server's "
            "nextCursor never ends the listing",
        )
    if pages >= spec.max_list_pages:
        raise ServerDiscoveryError(
            server,
            f"tools/list returned more than {spec.max_list_pages} pages (max_list_pages); the server's "
            "nextCursor never ends the listing, or raise max_list_pages",
        )
    if tools > spec.max_tools:
        raise ServerDiscoveryError(
            server,
            f"tools/list returned more than {spec.max_tools} tools (max_tools) over {pages} pages; "
            "raise max_tools if the catalog is really that large",
        )


def describe_failure(error: BaseException) -> str:
    """Why a server could not be ruled out as a tool's owner, for :class:`~langgraph_mcp.catalog.ToolResolution`."""
    if isinstance(error, asyncio.CancelledError):
        return "listing its tools was cut short (CancelledError: the response may have been cut)"
    return f"listing its tools failed ({type(error).__name__}: {error})"


def _is_legacy_client(client: Any) -> bool:
    return client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS


class Listing:
    """One server's tools as listed with one credential identity, and how long the listing stays fresh.

    A listing follows the life of what it listed: it is stale once its ``ttlMs`` hint (or, without one, the
    server's ``listing_max_age``) runs out, and as soon as the connection it was made on starts a new process
    or session (a restarted stdio server, an HTTP server that dropped the session): the tools may be a new
    version's. A server that is down keeps its listing until it comes back (calls fail with why it is down);
    the tool node checks again right before it sends (``CallTarget.listed_now``, on the listing its tool was
    found in). Re-listing costs one
    ``tools/list`` request (one per page).
    """

    def __init__(
        self,
        tools: list[McpTool],
        skipped: list[SkippedTool],
        ttl_ms: int,
        *,
        conn: ServerConnection | None = None,
        max_age: float | None = None,
    ) -> None:
        self.tools = tools
        self.by_name = {tool.published_name: tool for tool in tools}
        self.skipped = skipped
        # ttlMs > 0 is the server's freshness hint; without one the listing stays for max_age (HTTP: a
        # 2026-07-28 server has no session, so nothing else tells that it was redeployed), else until a
        # tools-changed notification, a refresh, or the end of the connection's process or session.
        lifetime = ttl_ms / 1000 if ttl_ms > 0 else max_age
        self.expires = time.monotonic() + lifetime if lifetime is not None else float("inf")
        self._conn = conn
        self.generation = conn.owner.sessions if conn is not None else 0
        """The connection's session (process or HTTP session) the tools were listed in."""

        self.dropped = False
        """Dropped from the cache (the server said its tools changed, a newer listing replaced it, its identity was
        retired): a call resolved from it is no longer sent on its word."""

    @property
    def fresh(self) -> bool:
        if self.dropped:
            return False
        conn = self._conn
        if conn is not None and conn.owner.sessions != self.generation:  # a new process or session since
            return False
        return time.monotonic() < self.expires


async def fetch_listing(conn: ServerConnection, catalog: ServerCatalog) -> Listing:
    """List one server's tools over ``conn`` and build its tools (:class:`~langgraph_mcp.catalog.McpTool`).

    A connection lost under ``tools/list`` (read-only) is retried up to the server's ``retries``.
    """
    server, spec = conn.name, conn.spec
    try:
        await conn.owner.client()
    except ServerConnectionError as exc:
        raise ServerDiscoveryError(server, exc.detail) from exc
    attempts = 0
    while True:
        try:
            raw, skipped, ttl_ms = await _list_pages(conn)
            break
        except ServerDiscoveryError as exc:
            # tools/list is read-only: a connection lost under it is retried like a read-only call.
            lost = isinstance(exc.__cause__, ServerConnectionError)
            if not lost or isinstance(exc.__cause__, ServerUnavailableError) or attempts >= spec.retries:
                raise
            attempts += 1
    tools, unusable = catalog.build(raw)
    skipped.extend(unusable)
    max_age = spec.listing_expiry()
    return Listing(tools, skipped, ttl_ms, conn=conn, max_age=max_age)


async def _list_pages(conn: ServerConnection) -> tuple[list[types.Tool], list[SkippedTool], int]:
    """Every page of one server's ``tools/list``, within the discovery timeout and the pagination caps."""
    server, spec = conn.name, conn.spec
    raw: list[types.Tool] = []
    skipped: list[SkippedTool] = []
    cursor: str | None = None
    seen: set[str] = set()
    ttl_ms = 0
    deadline = time.monotonic() + spec.connect_timeout
    for pages in itertools.count(1):
        remaining = max(0.1, deadline - time.monotonic())

        async def page(client: Any, cursor: str | None = cursor) -> _Page:
            try:
                result: types.ListToolsResult = await client.list_tools(cursor=cursor, cache_mode="bypass")
            except pydantic.ValidationError as exc:
                # The SDK validates the whole page against the wire schema, so one malformed tool would
                # hide every tool of the server: re-read the page unvalidated, judge each tool on its own.
                return await _lenient_page(client, cursor, exc)
            return _Page(result, [])

        try:
            result, unparseable = await conn.request(page, timeout=remaining, what="tools/list")
        except TimeoutError:
            raise ServerDiscoveryError(
                server,
                f"tools/list did not answer within the discovery timeout ({spec.connect_timeout:g}s)",
            ) from None
        except ServerError as exc:
            raise ServerDiscoveryError(server, exc.detail) from exc
        except Exception as exc:
            if spec.mode != "modern":
                raise ServerDiscoveryError(server, f"tools/list failed ({exc!r:.300})") from exc
            raise ServerDiscoveryError(
                server,
                f"tools/list failed ({exc!r:.300}); the server may not speak 2026-07-28: "
                "use mode='auto' (or 'legacy') for it",
            ) from exc
        raw.extend(result.tools)
        skipped.extend(SkippedTool(server, name, why) for name, why in unparseable)
        ttl_ms = ttl_ms or result.ttl_ms
        cursor = result.next_cursor
        if cursor is None:
            break
        _check_pagination(server, spec, cursor, seen, pages, len(raw))
        seen.add(cursor)
    return raw, skipped, ttl_ms


CacheMode: TypeAlias = Literal["use", "refresh", "bypass"]
ConnectionErrorPolicy: TypeAlias = Literal["raise", "ignore"] | Callable[[str, BaseException], None]
_NO_CREDENTIALS = "no credentials"
"""The identity part of a failure's key when the run's credentials could not be resolved."""


class ListingCache:
    """One :class:`~langgraph_mcp.servers.listings.Listing` per connection key (server, credential identity).

    A listing stays until its ``ttlMs`` hint runs out, the server says its tools changed (:meth:`invalidate`) or
    its identity is retired (:meth:`forget`). Lookups use the listing made with the current run's credentials.
    """

    def __init__(
        self,
        config: McpServersConfig,
        connections: LiveConnections,
        on_connection_error: ConnectionErrorPolicy,
    ) -> None:
        if not (on_connection_error in ("raise", "ignore") or callable(on_connection_error)):
            raise ConfigError("on_connection_error must be 'raise', 'ignore' or a callable(server, error)")
        self._config = config
        self._connections = connections
        self.on_connection_error = on_connection_error
        self._listings: dict[ConnectionKey, Listing] = {}
        # The error of each identity's last failed listing: one user's failure never shows in (or is cleared by)
        # another user's report. A run whose credentials can't be resolved is its own identity here.
        self._failures: dict[ConnectionKey, BaseException] = {}
        self.report = CatalogReport(skips=self._current_skips, failures=self._current_failures)
        self._catalogs: dict[str, ServerCatalog] = {}
        self.version = 0
        """Changes whenever a listing is stored, invalidated or forgotten (what was resolved from it may differ)."""

    @property
    def closed(self) -> bool:
        """Whether the ``McpServers`` was closed (nothing is listed or resolved any more)."""
        return self._connections.closed

    def invalidate(self, server: str) -> None:
        """Drop every identity's listing of ``server`` (it said its tools changed)."""
        self.version += 1
        for key in [k for k in self._listings if k[0] == server]:
            self._listings.pop(key).dropped = True

    def forget(self, key: ConnectionKey) -> None:
        self.version += 1
        listing = self._listings.pop(key, None)
        if listing is not None:
            listing.dropped = True
        self._failures.pop(key, None)

    def _failure_key(self, server: str) -> ConnectionKey:
        return self._connections.key_or_none(server) or (server, _NO_CREDENTIALS)

    def _failed(self, server: str, error: BaseException) -> None:
        self._failures[self._failure_key(server)] = error

    def _listed(self, server: str) -> None:
        self._failures.pop(self._failure_key(server), None)

    def _current_failures(self) -> dict[str, BaseException]:
        """The servers whose last listing with the current run's credentials failed, with the error."""
        return {
            server: error
            for server in self._config.servers
            if (error := self._failures.get(self._failure_key(server))) is not None
        }

    async def list_tools(self, names: Sequence[str], cache_mode: CacheMode) -> list[McpTool]:
        """The tools of ``names``, per the connection-error policy; raises on a name collision."""
        results = await asyncio.gather(
            *(self.listing(name, cache_mode) for name in names), return_exceptions=True
        )
        tools: list[McpTool] = []
        for name, result in zip(names, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                self._handle_failure(name, result)
                continue
            self._listed(name)
            tools.extend(result.tools)
        check_collisions(tools)
        return tools

    def _handle_failure(self, server: str, error: Exception) -> None:
        self._failed(server, error)
        policy = self.on_connection_error
        if policy == "raise":
            if isinstance(error, LangGraphMcpError):
                raise error
            raise ServerDiscoveryError(server, f"listing tools failed: {error!r}") from error
        if callable(policy):
            policy(server, error)

    async def listing(self, server: str, cache_mode: CacheMode) -> Listing:
        key = self._connections.key(server)
        cached = self._listings.get(key)
        if cache_mode == "use" and cached is not None and cached.fresh:
            return cached
        with self._connections.holding():  # a per-run identity's connection is not closed while it is listed
            listing = await fetch_listing(self._connections.connection(server), self._catalog(server))
        if cache_mode != "bypass":
            self.version += 1
            if cached is not None and cached is not listing:
                cached.dropped = True
            self._listings[key] = listing
        return listing

    async def list_quietly(self, servers: list[str]) -> dict[str, BaseException]:
        """List servers for a lookup: a broken server must not hide another server's tools. Returns failures.

        A listing cancelled while this task was not itself being cancelled (a cut response surfacing as
        ``CancelledError``) is a failure like any other; the caller's own cancellation propagates.
        """
        results = await asyncio.gather(*(self.listing(s, "use") for s in servers), return_exceptions=True)
        failures: dict[str, BaseException] = {}
        for server, result in zip(servers, results, strict=True):
            if isinstance(result, asyncio.CancelledError):
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise result
            elif isinstance(result, BaseException) and not isinstance(result, Exception):
                raise result
            if isinstance(result, ServersClosedError):  # the program's mistake, not the server's failure
                raise result
            if isinstance(result, CredentialError):  # a fault of this run, not of the server: not reported
                failures[server] = result
            elif isinstance(result, BaseException):
                self._failed(server, result)
                failures[server] = result
            else:
                self._listed(server)
        return failures

    def _catalog(self, server: str) -> ServerCatalog:
        catalog = self._catalogs.get(server)
        if catalog is None:
            spec = self._connections.spec(server)
            catalog = ServerCatalog(
                server,
                prefix=spec.prefix,
                separator=self._config.separator,
                invalid_names=self._config.invalid_names,
                trusted=spec.trust_annotations,
            )
            self._catalogs[server] = catalog
        return catalog

    # ------------------------------------------------------------------------------------------- cache only

    def cached(self, server: str) -> Listing | None:
        """``server``'s listing made with the current run's credentials, fresh or not; ``None`` if there is none."""
        return self._listings.get(self._connections.key_or_none(server))  # type: ignore[arg-type]

    def fresh(self, server: str) -> bool:
        listing = self.cached(server)
        return listing is not None and listing.fresh

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

    def _current_skips(self) -> list[SkippedTool]:
        return [skip for listing in self._current_listings() for skip in listing.skipped]

    def _current_listings(self) -> list[Listing]:
        """The cached listings made with the current run's credentials, one per server that has one."""
        return [listing for server in self._config.servers if (listing := self.cached(server)) is not None]
