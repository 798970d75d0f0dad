"""A server's resources and prompts: listings (every page, cached by the server's ttl hint), reads as LangChain
``Blob``s, prompts as LangChain messages.

Both eras go through the same ``mcp.Client`` calls; the SDK's own response cache is bypassed so that freshness is
decided here, in one place, the way the tool catalog decides it: a listing or a read is kept only when the server
gave a ``ttlMs`` hint (2026-07-28 servers can; legacy results never carry one), and only until it expires or the
server says its resources (listings and reads go) or prompts changed.

A ``resource_link`` block in a tool result (an MCP ``ResourceLink``, or the LangChain file block ``results.py``
makes of it) is read by passing it as the ``uri``. Nothing is read implicitly.
"""

from __future__ import annotations

import base64
import contextlib
import time
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping
from typing import Any, Literal, TypeAlias, TypeVar

import mcp.types as types
from langchain_core.documents.base import Blob
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from mcp import Client, MCPError

from langgraph_mcp.calls.results import convert_result
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.errors import LangGraphMcpError, PromptError, ResourceError, ServerError
from langgraph_mcp.servers.connections import LiveConnections

__all__ = [
    "ResourceCache",
    "ResourceRef",
    "get_prompt",
    "link_uri",
    "list_prompts",
    "list_resource_templates",
    "list_resources",
    "read_resource",
    "to_blobs",
    "to_messages",
]

MAX_PAGES = 1000
T = TypeVar("T")
ResourceRef: TypeAlias = str | types.ResourceLink | Mapping[str, Any]
"""A resource to read: its URI, an MCP ``ResourceLink``, or the file block a ``resource_link`` became."""


_STALE_AFTER_CHANGE = {
    "resources": {"resources/list", "resources/templates/list", "resources/read"},
    "prompts": {"prompts/list"},
}
"""What a server's ``resources`` or ``prompts`` list change makes stale, by the method part of a cache key."""


class ResourceCache:
    """Listings and reads kept for as long as the server's ``ttlMs`` hint allows (nothing without a hint), or until
    the server says that listing changed. Keys: ``(identity, server, method[, uri])``."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[float, Any]] = {}

    def get(self, key: Hashable) -> Any | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if time.monotonic() >= expires:
            del self._entries[key]
            return None
        return value

    def put(self, key: Hashable, value: Any, ttl_ms: int | None) -> None:
        if ttl_ms is not None and ttl_ms > 0:
            self._entries[key] = (time.monotonic() + ttl_ms / 1000, value)
        else:
            self._entries.pop(key, None)

    def list_changed(self, server: str, kind: Literal["resources", "prompts"]) -> None:
        """Forget, for every identity, what ``server``'s changed listing made stale: its prompt listing, or its
        resource listings and reads (a resource gone from the list may be gone, so its read is not kept)."""
        stale = _STALE_AFTER_CHANGE[kind]
        for key in [k for k in self._entries if isinstance(k, tuple) and k[1] == server and k[2] in stale]:
            del self._entries[key]

    def drop(self, key_prefix: tuple[Any, ...]) -> None:
        """Forget every entry whose key starts with ``key_prefix`` (e.g. one server's)."""
        size = len(key_prefix)
        for key in [k for k in self._entries if isinstance(k, tuple) and k[:size] == key_prefix]:
            del self._entries[key]


async def _cached(
    cache: ResourceCache,
    key: tuple[Any, ...],
    cache_mode: str,
    fetch: Callable[[], Awaitable[tuple[T, int | None]]],
) -> T:
    if cache_mode == "use":
        hit = cache.get(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
    value, ttl_ms = await fetch()
    if cache_mode != "bypass":
        cache.put(key, value, ttl_ms)
    return value


def _detail(error: BaseException) -> str:
    if isinstance(error, MCPError):
        return f"MCP error {error.code}: {error.message}"
    if isinstance(error, ServerError):
        return error.detail
    if isinstance(error, TimeoutError):
        return str(error) or "timed out"
    if isinstance(error, LangGraphMcpError):
        return str(error)
    return f"{type(error).__name__}: {error}"


async def _request(conn: ServerConnection, make: Callable[[Client], Awaitable[T]]) -> T:
    return await conn.request(make, timeout=conn.spec.tool_timeout)


async def _paged(
    conn: ServerConnection,
    fetch_page: Callable[[Client, str | None], Awaitable[Any]],
    items_of: Callable[[Any], list[T]],
) -> tuple[list[T], int | None]:
    """Every page of a listing, and the first page's ttl hint (``None`` when there is none)."""
    items: list[T] = []
    cursor: str | None = None
    ttl_ms: int | None = None
    for _ in range(MAX_PAGES):
        page = await _request(conn, lambda client, cursor=cursor: fetch_page(client, cursor))  # type: ignore[misc]
        if cursor is None:
            ttl_ms = page.ttl_ms if not conn.owner.is_legacy else None
        items.extend(items_of(page))
        cursor = page.next_cursor
        if cursor is None:
            break
    return items, ttl_ms


async def _listing(
    conn: ServerConnection,
    cache: ResourceCache,
    identity: Hashable,
    what: str,
    cache_mode: str,
    fetch_page: Callable[[Client, str | None], Awaitable[Any]],
    items_of: Callable[[Any], list[T]],
) -> list[T]:
    async def fetch() -> tuple[list[T], int | None]:
        try:
            return await _paged(conn, fetch_page, items_of)
        except Exception as exc:
            detail = f"{what} failed: {_detail(exc)}"
            if what.startswith("prompts"):
                raise PromptError(conn.name, None, detail) from exc
            raise ResourceError(conn.name, None, detail) from exc

    return list(await _cached(cache, (identity, conn.name, what), cache_mode, fetch))


@contextlib.contextmanager
def _held(connections: LiveConnections, server: str) -> Iterator[tuple[ServerConnection, Hashable]]:
    """The current run's connection to ``server`` (held while the block runs) and its credential identity."""
    with connections.using(server):
        yield connections.connection(server), connections.identity(server).key


async def list_resources(
    connections: LiveConnections, cache: ResourceCache, server: str, cache_mode: str = "use"
) -> list[types.Resource]:
    """Every resource the server lists (all pages)."""
    with _held(connections, server) as (conn, identity):
        return await _listing(
            conn,
            cache,
            identity,
            "resources/list",
            cache_mode,
            lambda client, cursor: client.list_resources(cursor=cursor, cache_mode="bypass"),
            lambda page: list(page.resources),
        )


async def list_resource_templates(
    connections: LiveConnections, cache: ResourceCache, server: str, cache_mode: str = "use"
) -> list[types.ResourceTemplate]:
    """Every resource template the server lists (all pages); read one by filling its ``uri_template``."""
    with _held(connections, server) as (conn, identity):
        return await _listing(
            conn,
            cache,
            identity,
            "resources/templates/list",
            cache_mode,
            lambda client, cursor: client.list_resource_templates(cursor=cursor, cache_mode="bypass"),
            lambda page: list(page.resource_templates),
        )


async def list_prompts(
    connections: LiveConnections, cache: ResourceCache, server: str, cache_mode: str = "use"
) -> list[types.Prompt]:
    """Every prompt the server lists (all pages), with its declared arguments."""
    with _held(connections, server) as (conn, identity):
        return await _listing(
            conn,
            cache,
            identity,
            "prompts/list",
            cache_mode,
            lambda client, cursor: client.list_prompts(cursor=cursor, cache_mode="bypass"),
            lambda page: list(page.prompts),
        )


def link_uri(ref: ResourceRef) -> str:
    """The URI a resource reference points at: a string, a ``ResourceLink``, or a LangChain file block."""
    if isinstance(ref, str):
        return ref
    if isinstance(ref, types.ResourceLink | types.Resource):
        return str(ref.uri)
    if isinstance(ref, Mapping):
        for key in ("uri", "url"):
            value = ref.get(key)
            if isinstance(value, str) and value:
                return value
        extras = ref.get("extras")
        if isinstance(extras, Mapping) and isinstance(extras.get("uri"), str):
            return str(extras["uri"])
    raise ResourceError(
        "?",
        repr(ref)[:80],
        "not a resource reference: pass a URI string, an mcp ResourceLink, or the file block of a resource_link",
    )


async def read_resource(
    connections: LiveConnections, cache: ResourceCache, server: str, ref: ResourceRef, cache_mode: str = "use"
) -> list[Blob]:
    """Read one resource (or follow a ``resource_link``) into ``Blob``s, one per returned content."""
    try:
        uri = link_uri(ref)
    except ResourceError as exc:
        raise ResourceError(server, exc.uri, exc.detail) from None
    with _held(connections, server) as (conn, identity):
        return await _read(conn, cache, identity, uri, cache_mode)


async def _read(
    conn: ServerConnection, cache: ResourceCache, identity: Hashable, uri: str, cache_mode: str
) -> list[Blob]:

    async def fetch() -> tuple[list[Blob], int | None]:
        try:
            result: types.ReadResourceResult = await _request(
                conn, lambda client: client.read_resource(uri, cache_mode="bypass")
            )
        except Exception as exc:
            raise ResourceError(conn.name, uri, _detail(exc)) from exc
        ttl_ms = result.ttl_ms if not conn.owner.is_legacy else None
        return to_blobs(result, conn.name), ttl_ms

    return list(await _cached(cache, (identity, conn.name, "resources/read", uri), cache_mode, fetch))


def to_blobs(result: types.ReadResourceResult, server: str) -> list[Blob]:
    """One ``Blob`` per content: text as ``str``, binary decoded from base64; ``uri`` and ``server`` in metadata."""
    blobs: list[Blob] = []
    for content in result.contents:
        data: str | bytes
        if isinstance(content, types.TextResourceContents):
            data = content.text
        else:
            try:
                data = base64.b64decode(content.blob, validate=True)
            except ValueError as exc:
                raise ResourceError(
                    server, str(content.uri), f"the blob is not valid base64 ({exc})"
                ) from exc
        metadata: dict[str, Any] = {"uri": str(content.uri), "server": server}
        if content.meta:
            metadata["meta"] = dict(content.meta)
        blobs.append(Blob.from_data(data, mime_type=content.mime_type, metadata=metadata))
    return blobs


async def get_prompt(
    connections: LiveConnections, server: str, name: str, arguments: Mapping[str, Any] | None = None
) -> list[BaseMessage]:
    """Render a prompt with ``arguments`` (values are sent as strings, as MCP prompts require)."""
    args = {key: value if isinstance(value, str) else str(value) for key, value in (arguments or {}).items()}
    with _held(connections, server) as (conn, _):
        try:
            result: types.GetPromptResult = await _request(conn, lambda client: client.get_prompt(name, args))
        except Exception as exc:
            raise PromptError(server, name, _detail(exc)) from exc
    return to_messages(result)


def to_messages(result: types.GetPromptResult) -> list[BaseMessage]:
    """``user`` → ``HumanMessage``, ``assistant`` → ``AIMessage``; content as standard blocks (text alone: a string)."""
    messages: list[BaseMessage] = []
    for message in result.messages:
        converted = convert_result(types.CallToolResult(content=[message.content]))
        blocks: list[Any] = converted.content + [
            entry["block"] for entry in converted.artifact or [] if entry.get("type") == "mcp_content"
        ]
        content: str | list[Any] = (
            blocks[0]["text"]
            if len(blocks) == 1 and blocks[0].get("type") == "text" and set(blocks[0]) == {"type", "text"}
            else blocks
        )
        if message.role == "assistant":
            messages.append(AIMessage(content=content))
        else:
            messages.append(HumanMessage(content=content))
    return messages
