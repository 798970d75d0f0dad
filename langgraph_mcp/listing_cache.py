"""The tool listings of every server, cached per connection key: when to (re-)list, what failed, what was skipped."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Literal, TypeAlias

from langgraph_mcp.catalog import CatalogReport, McpTool, ServerCatalog, SkippedTool, check_collisions
from langgraph_mcp.config import McpServersConfig
from langgraph_mcp.errors import CredentialError, LangGraphMcpError, ServerDiscoveryError
from langgraph_mcp.live_connections import ConnectionKey, LiveConnections
from langgraph_mcp.tool_listing import Listing, fetch_listing

CacheMode: TypeAlias = Literal["use", "refresh", "bypass"]
ConnectionErrorPolicy: TypeAlias = Literal["raise", "ignore"] | Callable[[str, BaseException], None]
_NO_CREDENTIALS = "no credentials"
"""The identity part of a failure's key when the run's credentials could not be resolved."""


class ListingCache:
    """One :class:`~langgraph_mcp.tool_listing.Listing` per connection key (server, credential identity).

    A listing stays until its ``ttlMs`` hint runs out, the server says its tools changed (:meth:`invalidate`) or
    its identity is retired (:meth:`forget`). Lookups use the listing made with the current run's credentials.
    """

    def __init__(
        self,
        config: McpServersConfig,
        connections: LiveConnections,
        on_connection_error: ConnectionErrorPolicy,
    ) -> None:
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

    def invalidate(self, server: str) -> None:
        """Drop every identity's listing of ``server`` (it said its tools changed)."""
        self.version += 1
        for key in [k for k in self._listings if k[0] == server]:
            del self._listings[key]

    def forget(self, key: ConnectionKey) -> None:
        self.version += 1
        self._listings.pop(key, None)
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
        listing = await fetch_listing(self._connections.connection(server), self._catalog(server))
        if cache_mode != "bypass":
            self.version += 1
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
