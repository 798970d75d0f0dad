"""No call waits without a bound (issue 10 item 2): a legacy call queued behind one that must run alone gives up
after ``tool_timeout``, unsent, instead of waiting for it forever."""

from __future__ import annotations

import anyio
import pytest
from mcp.server.mcpserver import MCPServer

from langgraph_mcp.errors import CallNotSentError
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import OpenServers

pytestmark = pytest.mark.anyio


async def test_a_call_waiting_its_turn_behind_an_exclusive_call_gives_up_unsent(
    open_servers: OpenServers,
) -> None:
    release = anyio.Event()
    ran: list[str] = []
    server = MCPServer("holding")

    @server.tool()
    async def hold() -> str:
        """Run until the test releases it."""
        await release.wait()
        return "released"

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        ran.append("add")
        return a + b

    spec = {
        "transport": "in_process",
        "server": server,
        "mode": "legacy",
        "exclusive_tools": ["hold"],
        "tool_timeout": 0.5,
        "retries": 0,
    }
    servers = open_servers({"h": spec})
    conn = server_access(servers).connections.connection("h")
    await conn.owner.client()
    holder = await conn.legacy.start_call("hold", {})  # holds the connection's exclusive turn until released
    with anyio.fail_after(10):  # the old code waited here until `hold` finished
        with pytest.raises(CallNotSentError) as caught:
            await servers.call_tool("h_add", {"a": 1, "b": 2})
    assert "waited more than 0.5s for its turn" in str(caught.value)
    assert ran == []  # it was not sent
    release.set()
    with anyio.fail_after(10):
        await holder.next_event(5)
    assert (await servers.call_tool("h_add", {"a": 1, "b": 2})).structured_content == {"result": 3}
