"""Discovery reads every page of tools/list and honours the server's ttlMs freshness hint (2026-07-28)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.server import Server, ServerRequestContext

from tests.support.helpers import ERAS, OpenServers

pytestmark = pytest.mark.anyio


class PagedServer:
    """A low-level server listing ``count`` tools ``page_size`` at a time, with a ttlMs hint; counts requests."""

    def __init__(self, count: int, page_size: int, ttl_ms: int = 0) -> None:
        self.names = [f"tool_{i:02d}" for i in range(count)]
        self.page_size = page_size
        self.ttl_ms = ttl_ms
        self.pages_served = 0
        self.server: Server[Any] = Server("paged", on_list_tools=self._list, on_call_tool=self._call)

    async def _list(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self.pages_served += 1
        start = int(params.cursor) if params is not None and params.cursor else 0
        page = self.names[start : start + self.page_size]
        after = start + self.page_size
        return types.ListToolsResult(
            tools=[types.Tool(name=n, input_schema={"type": "object", "properties": {}}) for n in page],
            next_cursor=str(after) if after < len(self.names) else None,
            ttl_ms=self.ttl_ms,
        )

    async def _call(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=f"ran {params.name}")])


@pytest.mark.parametrize("mode", ERAS)
async def test_every_page_is_listed(open_servers: OpenServers, mode: str) -> None:
    paged = PagedServer(count=11, page_size=4)
    servers = open_servers({"p": {"transport": "in_process", "server": paged.server, "mode": mode}})
    tools = await servers.list_tools()
    assert [t.name for t in tools] == paged.names
    assert paged.pages_served == 3
    result = await servers.call_tool("p_tool_10", {})
    assert result.content[0].text == "ran tool_10"  # type: ignore[union-attr]


async def test_a_ttl_hint_keeps_the_listing_fresh_then_expires_it(open_servers: OpenServers) -> None:
    paged = PagedServer(count=2, page_size=10, ttl_ms=1000)
    servers = open_servers({"p": {"transport": "in_process", "server": paged.server, "mode": "auto"}})
    await servers.list_tools()
    await servers.list_tools()
    assert paged.pages_served == 1  # within the ttl: served from the cache
    await anyio.sleep(1.0)  # the 1000 ms ttl runs out (the behaviour under test, not a synchronisation)
    await servers.list_tools()  # once the ttl has passed, a listing asks the server again
    assert paged.pages_served == 2


async def test_without_a_ttl_hint_the_listing_stays_until_refreshed(open_servers: OpenServers) -> None:
    paged = PagedServer(count=2, page_size=10, ttl_ms=0)
    servers = open_servers({"p": {"transport": "in_process", "server": paged.server, "mode": "auto"}})
    for _ in range(3):
        await servers.list_tools()
    assert paged.pages_served == 1
    await servers.list_tools(cache_mode="refresh")
    assert paged.pages_served == 2
