"""Which server publishes a tool name: the candidate servers, listed as needed, and the ones that can't be ruled out.

A resolution comes with the listings it was read from (:class:`Resolved`): the tool node's call target carries the
listing its tool was found in, whose freshness is then the one answer to "is the tool still what its server lists?"
(:meth:`~langgraph_mcp.calls.call.CallTarget.listed_now`), asked again right before every send.

A full resolution is kept per name and reused while it provably still holds — the listing cache is at the same
version (no listing stored, invalidated or forgotten since), every candidate's listing is still fresh, and no
identity can differ (no server has per-run credentials; an interceptor's headers replace the run's only for the call
target, after resolution). Anything else resolves again from scratch, so a stale answer is never served: name
resolution stays fail closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

from langgraph_mcp.catalog import McpTool, ToolResolution, close_matches, sanitize_name
from langgraph_mcp.config import McpServersConfig
from langgraph_mcp.credentials import is_per_run
from langgraph_mcp.errors import AuthorizationRequiredError, ServersClosedError
from langgraph_mcp.servers.listings import Listing, ListingCache, describe_failure

# Names are whatever a model calls, so the per-name memos are bounded (cleared when full).
MAX_REMEMBERED_NAMES = 1024


@dataclass(frozen=True)
class Resolved:
    """A resolution, and the listings it was read from."""

    resolution: ToolResolution
    listings: Mapping[str, Listing]
    """Per server whose listing was read (every candidate not in ``resolution.unknown``), that listing."""
    version: int
    """The listing cache's version it was made at."""

    def listing_of(self, tool: McpTool) -> Listing | None:
        """The listing one of this resolution's tools was found in (whether it still lists the tool, and is fresh,
        is :meth:`~langgraph_mcp.calls.call.CallTarget.listed_now`'s to say, right before the send)."""
        return self.listings.get(tool.server)


class NameResolver:
    """Resolves published names against a :class:`~langgraph_mcp.servers.listings.ListingCache` (fails closed)."""

    def __init__(self, config: McpServersConfig, listings: ListingCache) -> None:
        self._config = config
        self._listings = listings
        self._list_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
            weakref.WeakKeyDictionary()
        )
        """Per loop, one lock per server: concurrent lookups list a server once, and never wait for another's."""
        separator = config.separator
        self._prefixes: list[tuple[str, tuple[str, str] | None]] = []
        """Each server with the name beginnings it may publish (``None``: any name, ``prefix=False``)."""
        for server, spec in config.servers.items():
            prefix = f"{server}{separator}"
            self._prefixes.append(
                (server, (prefix, sanitize_name(prefix)[: min(len(prefix), 40)]) if spec.prefix else None)
            )
        self._fixed_identities = not any(is_per_run(spec) for spec in config.servers.values())
        self._signs_in = {server for server, spec in config.servers.items() if getattr(spec, "oauth", None)}
        """Servers with per-user OAuth: listed only when a name could be theirs (a listing may need a sign-in)."""
        self._candidates: dict[str, tuple[str, ...]] = {}
        self._resolved: dict[str, Resolved] = {}

    def candidate_servers(self, published_name: str) -> list[str]:
        """The configured servers that could publish ``published_name``.

        A server with ``prefix=False`` may publish any name; a prefixed one only names that start with its
        prefix (as listed, or as the opt-in sanitiser would rewrite it). Only a name no candidate's current
        listing contains, with every candidate listed, provably belongs to no MCP server.
        """
        return list(self._candidates_of(published_name))

    def _candidates_of(self, published_name: str) -> tuple[str, ...]:
        candidates = self._candidates.get(published_name)
        if candidates is None:
            candidates = tuple(
                server
                for server, beginnings in self._prefixes
                if beginnings is None or published_name.startswith(beginnings)
            )
            if len(self._candidates) >= MAX_REMEMBERED_NAMES:
                self._candidates.clear()
            self._candidates[published_name] = candidates
        return candidates

    def _still_valid(self, published_name: str) -> Resolved | None:
        """The kept resolution of ``published_name`` if it provably still holds (see the module docstring)."""
        kept = self._resolved.get(published_name)
        if kept is None or kept.version != self._listings.version or not self._fixed_identities:
            return None
        for listing in kept.listings.values():  # a loop, not all(<generator>): read on every call
            if not listing.fresh:
                return None
        return kept

    def _keep(self, published_name: str, candidates: tuple[str, ...], found: Resolved) -> None:
        """Keep a resolution just made with every candidate fresh and every server listed."""
        if found.resolution.unknown or not self._fixed_identities:
            return
        for server in candidates:
            listing = found.listings.get(server)
            if listing is None or not listing.fresh:
                return
        if len(self._resolved) >= MAX_REMEMBERED_NAMES:
            self._resolved.clear()
        self._resolved[published_name] = found

    @contextlib.asynccontextmanager
    async def _listing_locks(self, servers: list[str]) -> AsyncIterator[None]:
        """Hold the listing locks of ``servers`` (in name order, so two lookups never wait on each other)."""
        locks = self._list_locks.setdefault(asyncio.get_running_loop(), {})
        async with contextlib.AsyncExitStack() as stack:
            for server in sorted(servers):
                await stack.enter_async_context(locks.setdefault(server, asyncio.Lock()))
            yield

    async def resolve(self, published_name: str) -> ToolResolution:
        """Who publishes ``published_name``: the matching tools of every candidate server, and the candidates
        whose listing is missing, failed or stale and could not be refreshed (they can't be ruled out).

        Lists (or re-lists) candidates as needed; never raises for a server that fails to list (it is named
        in ``unknown``). A lookup cut short by anything but the caller's own cancellation counts as a failure.
        Raises :class:`~langgraph_mcp.errors.ServersClosedError` once the servers were closed.
        """
        return (await self.resolve_listed(published_name)).resolution

    async def resolve_listed(self, published_name: str) -> Resolved:
        """:meth:`resolve`, with the listings the resolution was read from."""
        if self._listings.closed:
            raise ServersClosedError()
        kept = self._still_valid(published_name)
        if kept is not None:
            return kept
        listings = self._listings
        candidates = self._candidates_of(published_name)
        unknown: dict[str, str] = {}
        sign_in: AuthorizationRequiredError | None = None

        def stale() -> list[str]:  # the candidates that must be listed (again) before the name can be judged
            return [s for s in candidates if not listings.fresh(s)]

        def unlisted() -> list[str]:  # servers never listed: only for "did you mean" hints
            return [
                s
                for s in self._config.servers
                if s not in candidates and listings.cached(s) is None and s not in self._signs_in
            ]

        if stale():
            async with self._listing_locks(stale()):
                if todo := stale():
                    failures = await listings.list_quietly(todo)
                    unknown = {s: describe_failure(e) for s, e in failures.items()}
                    sign_in = next(
                        (e for e in failures.values() if isinstance(e, AuthorizationRequiredError)), None
                    )
        for server in candidates:
            if server not in unknown and not listings.fresh(server):
                unknown[server] = "its tools are not listed"
        found = self._resolution(published_name, [s for s in candidates if s not in unknown], unknown)
        if not found.resolution.tools and unlisted():
            # A name no candidate publishes: list the others only now, for its "did you mean" hints, so a call to
            # one server never waits for servers it does not call to start.
            async with self._listing_locks(unlisted()):
                if todo := unlisted():
                    await listings.list_quietly(todo)
            found = self._resolution(published_name, [s for s in candidates if s not in unknown], unknown)
        if sign_in is not None:
            found = dataclasses.replace(
                found, resolution=dataclasses.replace(found.resolution, sign_in=sign_in)
            )
        if not stale() and not unlisted():  # every server listed, as a kept resolution needs (see _keep)
            self._keep(published_name, candidates, found)
        return found

    def cached_resolution(self, published_name: str) -> ToolResolution | None:
        """:meth:`resolve` from the cache alone, or ``None`` when a candidate server would have to be listed."""
        if self._listings.closed:
            raise ServersClosedError()
        kept = self._still_valid(published_name)
        if kept is not None:
            return kept.resolution
        candidates = self._candidates_of(published_name)
        if not all(self._listings.fresh(s) for s in candidates):
            return None
        return self._resolution(published_name, list(candidates), {}).resolution

    def _resolution(self, published_name: str, listed: list[str], unknown: dict[str, str]) -> Resolved:
        """The resolution over ``listed`` (servers with a fresh listing for this run)."""
        listings = {
            server: listing for server in listed if (listing := self._listings.cached(server)) is not None
        }
        tools: tuple[McpTool, ...] = tuple(
            tool for listing in listings.values() if (tool := listing.by_name.get(published_name))
        )
        resolution = ToolResolution(
            published_name,
            tools,
            unknown,
            [] if tools else close_matches(published_name, self._listings.cached_tools()),
        )
        return Resolved(resolution, listings, self._listings.version)
