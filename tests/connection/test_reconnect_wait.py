"""A call that arrives while a reconnect is scheduled waits for that attempt when it falls within the call's own
deadline (``tool_timeout``), and fails only if the attempt fails (issue 23 item 5). It failed at once with "next
attempt in 0.7s" although the server was back a moment later. A delay past the call's deadline still fails fast.

Real servers only: the demo server over streamable HTTP on a fixed 127.0.0.1 port, stopped and started again.
"""

from __future__ import annotations

import pytest

from langgraph_mcp import McpServers, ServerConnectionError
from langgraph_mcp.errors import ServerUnavailableError
from langgraph_mcp.examples.demo_server import http_app
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.faults import serve_on_port
from tests.support.helpers import ERAS, OpenServers, free_port

pytestmark = pytest.mark.anyio

BACKOFF = {
    "restart_attempts": 0,
    "reconnect_backoff": 4.0,
    "reconnect_backoff_max": 4.0,
    "connect_timeout": 5,
}
"""No restart within an outage: straight to one attempt per backoff period, 2-4 s (jittered) away."""


async def down_after_one_call(open_servers: OpenServers, port: int, era: str, **options: float) -> McpServers:
    servers = open_servers(
        {"demo": {"url": f"http://127.0.0.1:{port}/mcp", "mode": era, **BACKOFF, **options}}
    )
    async with serve_on_port(http_app(), port):
        assert (await servers.call_tool("demo_add", {"a": 1, "b": 2})).structured_content == {"result": 3}
    with pytest.raises(ServerConnectionError):  # the server is gone: the outage starts
        await servers.call_tool("demo_add", {"a": 1, "b": 2})
    return servers


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_during_the_reconnect_delay_waits_for_the_attempt_and_gets_its_answer(
    open_servers: OpenServers, era: str
) -> None:
    port = free_port()
    servers = await down_after_one_call(open_servers, port, era, tool_timeout=30)
    backoff = server_access(servers).connections.connection("demo").owner.backoff
    async with serve_on_port(http_app(), port):
        assert backoff.wait_remaining() > 0  # the call below arrives while the attempt is scheduled
        result = await servers.call_tool("demo_add", {"a": 2, "b": 2})
        assert result.structured_content == {"result": 4}
        assert servers.server_status("demo")["state"] == "connected"


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_during_the_reconnect_delay_fails_only_once_the_attempt_fails(
    open_servers: OpenServers, era: str
) -> None:
    port = free_port()
    servers = await down_after_one_call(open_servers, port, era, tool_timeout=30)
    connection = server_access(servers).connections.connection("demo")
    assert connection.owner.backoff.wait_remaining() > 0
    starts = connection.owner.starts
    with pytest.raises(ServerConnectionError) as caught:  # echo is not retried: one attempt to wait for
        await servers.call_tool("demo_echo", {"text": "hi"})
    assert not isinstance(caught.value, ServerUnavailableError), caught.value
    assert connection.owner.starts == starts + 1  # it failed because the attempt it waited for failed


async def test_a_reconnect_delay_past_the_calls_deadline_still_fails_fast(open_servers: OpenServers) -> None:
    port = free_port()
    servers = await down_after_one_call(open_servers, port, "modern", tool_timeout=0.5)
    connection = server_access(servers).connections.connection("demo")
    starts = connection.owner.starts
    if connection.owner.backoff.wait_remaining() > 0.5:
        with pytest.raises(ServerUnavailableError) as caught:
            await servers.call_tool("demo_add", {"a": 2, "b": 2})
        assert "next attempt in" in str(caught.value)
        assert connection.owner.starts == starts
