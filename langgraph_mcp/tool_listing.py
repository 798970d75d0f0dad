"""Listing one server's tools: every page of ``tools/list`` within the caps, each tool parsed on its own."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any, NamedTuple

import mcp.types as types
import pydantic
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from langgraph_mcp import _compat
from langgraph_mcp.catalog import McpTool, ServerCatalog, SkippedTool
from langgraph_mcp.config import ServerSpec
from langgraph_mcp.connection import ServerConnection
from langgraph_mcp.errors import (
    ServerConnectionError,
    ServerDiscoveryError,
    ServerError,
    ServerUnavailableError,
)


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
    """One server's tools as listed with one credential identity, and how long the listing stays fresh."""

    def __init__(self, tools: list[McpTool], skipped: list[SkippedTool], ttl_ms: int) -> None:
        self.tools = tools
        self.by_name = {tool.published_name: tool for tool in tools}
        self.skipped = skipped
        # ttlMs > 0 is the server's freshness hint; without one the listing stays until a tools-changed
        # notification or an explicit refresh (re-listing before every call would double the traffic).
        self.expires = time.monotonic() + ttl_ms / 1000 if ttl_ms > 0 else float("inf")

    @property
    def fresh(self) -> bool:
        return time.monotonic() < self.expires


async def fetch_listing(conn: ServerConnection, catalog: ServerCatalog) -> Listing:
    """List one server's tools over ``conn`` and build its tools (:class:`~langgraph_mcp.catalog.McpTool`).

    A connection lost under ``tools/list`` (read-only) is retried up to the server's ``retries``.
    """
    server, spec = conn.name, conn.spec
    try:
        await conn.client()
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
    return Listing(tools, skipped, ttl_ms)


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
