"""A connection's calls share one timer for their deadlines (``event_deadlines``), both eras: every call still
gets its own ``tool_timeout`` - after quick calls whose deadlines came earlier, alongside other calls, and as the
earliest of several - and the connection keeps serving.

Real servers: the demo server in-process (``sleep`` sleeps on the server; ``add`` returns at once).
"""

from __future__ import annotations

import asyncio

import pytest

from langgraph_mcp import McpServers, ToolCallTimeoutError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import ERAS, OpenServers

pytestmark = pytest.mark.anyio


def demo(open_servers: OpenServers, era: str) -> McpServers:
    spec = {"transport": "in_process", "server": build_server(), "mode": era, "tool_timeout": 0.5}
    return open_servers({"demo": spec})


@pytest.mark.parametrize("era", ERAS)
async def test_a_slow_call_after_quick_ones_still_times_out(open_servers: OpenServers, era: str) -> None:
    servers = demo(open_servers, era)
    # Their deadlines come before the slow call's: the shared timer first fires for nothing.
    for _ in range(3):
        assert (await servers.call_tool("demo_add", {"a": 1, "b": 2})).structured_content == {"result": 3}

    # Had the 0.5 s timeout not fired, the 5 s sleep would have returned a result instead of raising.
    with pytest.raises(ToolCallTimeoutError) as caught:
        await servers.call_tool("demo_sleep", {"seconds": 5})
    assert (caught.value.tool, caught.value.timeout) == ("sleep", 0.5)
    assert (await servers.call_tool("demo_add", {"a": 2, "b": 2})).structured_content == {"result": 4}


@pytest.mark.parametrize("era", ERAS)
async def test_concurrent_slow_calls_each_time_out_while_quick_ones_go_on(
    open_servers: OpenServers, era: str
) -> None:
    servers = demo(open_servers, era)
    slow = [asyncio.ensure_future(servers.call_tool("demo_sleep", {"seconds": 5})) for _ in range(3)]
    quick = [await servers.call_tool("demo_add", {"a": i, "b": 1}) for i in range(5)]  # meanwhile

    outcomes = await asyncio.gather(*slow, return_exceptions=True)
    assert all(isinstance(outcome, ToolCallTimeoutError) for outcome in outcomes), outcomes
    assert [result.structured_content for result in quick] == [{"result": i + 1} for i in range(5)]
    assert server_access(servers).connections.connection("demo").owner.starts == 1
