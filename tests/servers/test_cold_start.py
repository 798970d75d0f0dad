"""Cold start (issue 25): servers start concurrently, and a call to one server never waits for the others.

The servers here are the demo server behind a start barrier (``tests/support/servers/barrier_server.py``): a group of
``N`` speaks MCP only once all ``N`` processes have started. A group that can finish starting proves its servers
were started at the same time; a group that cannot is a server "still starting" for as long as the test runs.
Both checks count what the servers themselves recorded (their start files), never the clock.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from langgraph_mcp import McpServers
from tests.support.helpers import stdio_demo_spec
from tests.support.node_support import call, one_turn_graph, start

BARRIER = Path(__file__).parents[1] / "support" / "servers" / "barrier_server.py"
HANG_GUARD = 90.0  # seconds: only a call that waits for a server it does not call trips it


def barrier_spec(group: Path, count: int, **options: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(BARRIER), str(group), str(count)], **options}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["modern", "legacy"])
async def test_a_call_to_one_server_completes_while_another_is_still_starting(
    tmp_path: Path, mode: str
) -> None:
    # "slow" waits for a second member of its group that never comes: it is starting for as long as it runs.
    slow_group = tmp_path / "slow"
    servers = McpServers(
        {
            "mcpServers": {
                "demo": stdio_demo_spec(mode=mode),
                "slow": barrier_spec(slow_group, 2, mode=mode, connect_timeout=600),
            }
        }
    )
    try:
        graph = one_turn_graph(servers, [call("demo_add", "c1", a=2, b=3)], None)
        out = await asyncio.wait_for(graph.ainvoke(start()), HANG_GUARD)
        [message] = [m for m in out["messages"] if m.type == "tool"]
        assert message.status == "success" and "5" in str(message.content)
        assert servers.server_status("slow").state != "connected"
        assert servers.server_status("demo").state == "connected"
    finally:
        await servers.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["modern", "legacy"])
async def test_servers_start_concurrently(tmp_path: Path, mode: str) -> None:
    """Five servers that each wait for all five to have started: listing them all finishes only if they were
    started together (started one after another, the first would wait forever for the rest)."""
    group = tmp_path / "group"
    names = [f"s{i}" for i in range(5)]
    servers = McpServers({"mcpServers": {name: barrier_spec(group, len(names), mode=mode) for name in names}})
    try:
        tools = await asyncio.wait_for(servers.list_tools(), HANG_GUARD)
        assert {tool.server for tool in tools} == set(names)
        assert len(list(group.iterdir())) == len(names)  # each server's own record of its start
    finally:
        await servers.aclose()


@pytest.mark.anyio
async def test_an_unknown_name_still_hears_of_close_matches_from_every_server(tmp_path: Path) -> None:
    """Listing only the candidates first does not lose the "did you mean" hints of the other servers."""
    servers = McpServers({"mcpServers": {"demo": stdio_demo_spec(), "other": stdio_demo_spec()}})
    try:
        resolution = await servers.resolve_tool("demo_ad")
        assert not resolution.tools and not resolution.unknown
        assert "demo_add" in resolution.close_matches
        assert (
            servers.server_status("other").tools is not None
        )  # listed for the hint, once the name was unknown
    finally:
        await servers.aclose()
