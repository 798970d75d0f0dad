"""``McpServers.get_tools()`` reuses converted LangChain tools while a server lists them unchanged (both eras).

A re-listing (``tools/list_changed``, ``refresh``) rebuilds only the tools whose descriptor changed, and an
unchanged descriptor is not re-checked by the inputSchema guard.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer

from langgraph_mcp import catalog as catalog_module
from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import ERAS, OpenServers, WatchedServers


def retitling_server() -> MCPServer:
    """Tools ``steady`` and ``target``; ``retitle`` gives ``target`` a new description and announces the change."""
    server = MCPServer("retitling")

    def target() -> str:
        return "target"

    @server.tool()
    def steady() -> str:
        """Never changes."""
        return "steady"

    @server.tool()
    async def retitle(description: str, ctx: Context) -> str:
        """Replace ``target`` with one that has ``description``, and announce it."""
        server.remove_tool("target")
        server.add_tool(target, name="target", description=description)
        if ctx.protocol_version == "2026-07-28":
            await ctx.notify_tools_changed()  # reaches subscriptions/listen streams
        else:
            await ctx.session.send_tool_list_changed()
        return "retitled"

    server.add_tool(target, name="target", description="first")
    return server


@pytest.fixture(params=ERAS)
def servers(request: pytest.FixtureRequest, open_servers: OpenServers) -> WatchedServers:
    return open_servers.watched(
        {"r": {"transport": "in_process", "server": retitling_server(), "mode": request.param}}
    )


@pytest.mark.anyio
async def test_cached_get_tools_returns_the_same_objects_while_the_listing_is_unchanged(
    servers: WatchedServers,
) -> None:
    first = {tool.name: tool for tool in await servers.get_tools()}
    again = {tool.name: tool for tool in await servers.get_tools()}
    refreshed_listing = await servers.list_tools(cache_mode="refresh")  # asks the server; nothing changed
    after_refresh = {tool.name: tool for tool in await servers.get_tools()}

    assert set(first) == {"r_steady", "r_target", "r_retitle"}
    assert all(again[name] is first[name] for name in first)
    assert {t.published_name for t in refreshed_listing} == set(first)
    assert all(after_refresh[name] is first[name] for name in first)


@pytest.mark.anyio
async def test_tools_list_changed_gives_new_objects_for_changed_tools_only(servers: WatchedServers) -> None:
    before = {tool.name: tool for tool in await servers.get_tools()}
    assert before["r_target"].description == "first"

    assert (await before["r_retitle"].ainvoke({"description": "second"}))[0]["text"] == "retitled"
    with anyio.fail_after(5):
        await servers.invalidated.wait()
    after = {tool.name: tool for tool in await servers.get_tools()}

    assert after["r_target"] is not before["r_target"]
    assert after["r_target"].description == "second"
    assert after["r_steady"] is before["r_steady"]
    assert (await after["r_target"].ainvoke({}))[0]["text"] == "target"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
async def test_a_relisting_does_not_rerun_the_schema_guard_on_unchanged_tools(
    open_servers: OpenServers, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[Any] = []
    real = catalog_module.schema_problem

    def counting(schema: Any) -> str | None:
        checked.append(schema)
        return real(schema)

    monkeypatch.setattr(catalog_module, "schema_problem", counting)
    servers = open_servers({"demo": {"transport": "in_process", "server": build_server(), "mode": mode}})
    listed = await servers.list_tools(include_app_only=True)  # every tool the server lists is checked
    assert len(checked) == len(listed) > 0
    relisted = await servers.list_tools(cache_mode="refresh", include_app_only=True)

    assert len(checked) == len(listed)  # every schema was checked once, on the first listing only
    assert [a is b for a, b in zip(listed, relisted, strict=True)] == [True] * len(listed)
