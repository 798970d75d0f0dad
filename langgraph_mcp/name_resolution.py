"""Which server publishes a tool name: the candidate servers, listed as needed, and the ones that can't be ruled out."""

from __future__ import annotations

import asyncio
import weakref

from langgraph_mcp.catalog import McpTool, ToolResolution, close_matches, sanitize_name
from langgraph_mcp.config import McpServersConfig
from langgraph_mcp.listing_cache import ListingCache
from langgraph_mcp.tool_listing import describe_failure


class NameResolver:
    """Resolves published names against a :class:`~langgraph_mcp.listing_cache.ListingCache` (fails closed)."""

    def __init__(self, config: McpServersConfig, listings: ListingCache) -> None:
        self._config = config
        self._listings = listings
        self._list_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def candidate_servers(self, published_name: str) -> list[str]:
        """The configured servers that could publish ``published_name``.

        A server with ``prefix=False`` may publish any name; a prefixed one only names that start with its
        prefix (as listed, or as the opt-in sanitiser would rewrite it). Only a name no candidate's current
        listing contains, with every candidate listed, provably belongs to no MCP server.
        """
        separator = self._config.separator
        out: list[str] = []
        for server, spec in self._config.servers.items():
            prefix = f"{server}{separator}"
            sanitized = sanitize_name(prefix)[: min(len(prefix), 40)]
            if not spec.prefix or published_name.startswith((prefix, sanitized)):
                out.append(server)
        return out

    async def resolve(self, published_name: str) -> ToolResolution:
        """Who publishes ``published_name``: the matching tools of every candidate server, and the candidates
        whose listing is missing, failed or stale and could not be refreshed (they can't be ruled out).

        Lists (or re-lists) candidates as needed; never raises for a server that fails to list (it is named
        in ``unknown``). A lookup cut short by anything but the caller's own cancellation counts as a failure.
        """
        listings = self._listings
        candidates = self.candidate_servers(published_name)
        unknown: dict[str, str] = {}

        def to_list() -> list[str]:  # stale candidates, and servers never listed (for "did you mean")
            return [
                s
                for s in self._config.servers
                if (s in candidates and not listings.fresh(s)) or listings.cached(s) is None
            ]

        if to_list():
            loop = asyncio.get_running_loop()
            lock = self._list_locks.setdefault(loop, asyncio.Lock())
            async with lock:
                if stale := to_list():
                    failures = await listings.list_quietly(stale)
                    unknown = {s: describe_failure(e) for s, e in failures.items() if s in candidates}
        for server in candidates:
            if server not in unknown and not listings.fresh(server):
                unknown[server] = "its tools are not listed"
        return self._resolution(published_name, [s for s in candidates if s not in unknown], unknown)

    def cached_resolution(self, published_name: str) -> ToolResolution | None:
        """:meth:`resolve` from the cache alone, or ``None`` when a candidate server would have to be listed."""
        candidates = self.candidate_servers(published_name)
        if not all(self._listings.fresh(s) for s in candidates):
            return None
        return self._resolution(published_name, candidates, {})

    def _resolution(self, published_name: str, listed: list[str], unknown: dict[str, str]) -> ToolResolution:
        """The resolution over ``listed`` (servers with a fresh listing for this run)."""
        tools: tuple[McpTool, ...] = tuple(
            tool
            for server in listed
            if (listing := self._listings.cached(server)) is not None
            and (tool := listing.by_name.get(published_name))
        )
        return ToolResolution(
            published_name,
            tools,
            unknown,
            [] if tools else close_matches(published_name, self._listings.cached_tools()),
        )
