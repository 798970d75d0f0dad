"""Name resolution keeps a resolution per published name only while it provably still holds (both eras): a
``tools/list_changed``, a re-listing or another server's new listing makes the next lookup resolve again, so a
removed tool is never called and a new collision is never missed (fail closed).

Real servers in-process: one whose tool ``swap`` replaces tool ``old`` by ``new`` (announcing it, or quietly).
"""

from __future__ import annotations

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer

from langgraph_mcp.errors import ToolNameCollisionError, ToolNotFoundError
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import ERAS, OpenServers


def swapping_server(name: str = "swapping") -> tuple[MCPServer, list[str]]:
    """Tools ``old`` and ``swap``; ``swap(announce)`` replaces ``old`` by ``new``. Returns the server and the names
    of the tools it ran (its own record)."""
    server = MCPServer(name)
    ran: list[str] = []

    def old() -> str:
        ran.append("old")
        return "old"

    def new() -> str:
        ran.append("new")
        return "new"

    @server.tool()
    async def swap(announce: bool, ctx: Context) -> str:
        """Replace ``old`` by ``new``; announce it when asked."""
        server.remove_tool("old")
        server.add_tool(new, name="new")
        if announce:
            if ctx.protocol_version == "2026-07-28":
                await ctx.notify_tools_changed()
            else:
                await ctx.session.send_tool_list_changed()
        return "swapped"

    server.add_tool(old, name="old")
    return server, ran


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_name_resolved_before_a_tools_list_changed_is_resolved_again(
    open_servers: OpenServers, era: str
) -> None:
    server, ran = swapping_server()
    servers = open_servers.watched({"s": {"transport": "in_process", "server": server, "mode": era}})
    assert (await servers.call_tool("s_old")).content[0].text == "old"  # type: ignore[union-attr]
    assert (await servers.call_tool("s_old")).content[0].text == "old"  # type: ignore[union-attr]  # kept

    await servers.call_tool("s_swap", {"announce": True})
    with anyio.fail_after(5):
        await servers.invalidated.wait()

    with pytest.raises(ToolNotFoundError):
        await servers.call_tool("s_old")
    assert (await servers.call_tool("s_new")).content[0].text == "new"  # type: ignore[union-attr]
    assert ran == ["old", "old", "new"]  # the server's record: the removed tool was never called again


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_re_listing_makes_the_next_lookup_resolve_again(open_servers: OpenServers, era: str) -> None:
    server, ran = swapping_server()
    servers = open_servers({"s": {"transport": "in_process", "server": server, "mode": era}})
    assert (await servers.get_tool("s_old")).name == "old"
    await servers.call_tool("s_swap", {"announce": False})  # the cached listing still shows "old"
    assert (await servers.get_tool("s_old")).name == "old"

    await servers.list_tools(cache_mode="refresh")

    with pytest.raises(ToolNotFoundError):
        await servers.get_tool("s_old")
    assert server_access(servers).names.cached_resolution("s_old") is not None
    assert server_access(servers).names.cached_resolution("s_old").tools == ()  # type: ignore[union-attr]
    assert (await servers.get_tool("s_new")).name == "new"
    assert ran == []


def growing_server() -> tuple[MCPServer, list[str]]:
    """Tool ``grow``, which adds tool ``shared`` quietly; returns the server and the tools it ran."""
    server = MCPServer("growing")
    ran: list[str] = []

    def shared() -> str:
        ran.append("shared")
        return "growing's shared"

    @server.tool()
    def grow() -> str:
        server.add_tool(shared, name="shared")
        return "grown"

    return server, ran


def sharing_server() -> tuple[MCPServer, list[str]]:
    server = MCPServer("sharing")
    ran: list[str] = []

    @server.tool()
    def shared() -> str:
        ran.append("shared")
        return "sharing's shared"

    return server, ran


@pytest.mark.anyio
async def test_another_servers_new_listing_of_the_same_name_is_a_collision(open_servers: OpenServers) -> None:
    sharing, sharing_ran = sharing_server()
    growing, growing_ran = growing_server()
    # Neither prefixed: both may publish any name.
    servers = open_servers(
        {
            "a": {"transport": "in_process", "server": sharing, "prefix": False},
            "b": {"transport": "in_process", "server": growing, "prefix": False},
        }
    )
    assert (await servers.call_tool("shared")).content[0].text == "sharing's shared"  # type: ignore[union-attr]
    await servers.call_tool("grow")
    await servers.list_tools(["b"], cache_mode="refresh")  # b now lists "shared" too

    with pytest.raises(ToolNameCollisionError):
        await servers.call_tool("shared")
    assert sharing_ran == ["shared"] and growing_ran == []
