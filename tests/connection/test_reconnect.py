"""Reconnect with backoff: a server that is down is retried after its backoff and comes back; state is visible.

Real servers only: the demo server over streamable HTTP on a fixed 127.0.0.1 port, stopped and started again
(uvicorn in the test's loop), and as a stdio subprocess killed by PID.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from langgraph_mcp import McpServers, ServerConnectionError
from langgraph_mcp.connection.backoff import ReconnectBackoff
from langgraph_mcp.errors import ServerUnavailableError
from langgraph_mcp.examples.demo_server import http_app
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.faults import serve_on_port
from tests.support.helpers import OpenServers, child_pids, free_port, stdio_demo_spec, wait_exit

pytestmark = pytest.mark.anyio


async def wait_for_backoff(servers: McpServers, server: str = "demo") -> None:
    """Until the server's next connection attempt is due (bounded): the backoff is a timer, the behaviour under
    test, so this sleeps exactly what is left of it (again only if woken a hair early)."""
    backoff = server_access(servers).connections.connection(server).owner.backoff
    with anyio.fail_after(10):
        while (remaining := backoff.wait_remaining()) > 0:
            await anyio.sleep(remaining)


@pytest.mark.parametrize("mode", ["modern", "legacy"])
async def test_http_server_that_was_down_is_retried_after_its_backoff(
    mode: str, open_servers: OpenServers
) -> None:
    port = free_port()
    options = {"mode": mode, "restart_attempts": 1, "reconnect_backoff": 0.05, "connect_timeout": 3}
    servers = open_servers({"demo": {"url": f"http://127.0.0.1:{port}/mcp", **options}})
    async with serve_on_port(http_app(), port):
        assert (await servers.call_tool("demo_add", {"a": 1, "b": 2})).structured_content == {"result": 3}
        assert servers.server_status("demo")["state"] == "connected"
    # The server is gone: this outage's restart is used, then one attempt per backoff period.
    with pytest.raises(ServerConnectionError):
        await servers.call_tool("demo_add", {"a": 1, "b": 2})
    status = servers.server_status("demo")
    assert status["state"] == "down"
    assert status["failures"] >= 2
    assert status["error"]
    starts_while_down = server_access(servers).connections.connection("demo").owner.starts
    # A call during the backoff waits for the scheduled attempt (within its tool_timeout), and fails with it.
    with pytest.raises(ServerConnectionError) as caught:
        await servers.call_tool("demo_add", {"a": 1, "b": 2})
    assert not isinstance(caught.value, ServerUnavailableError)
    assert server_access(servers).connections.connection("demo").owner.starts == starts_while_down + 1
    starts_while_down += 1

    # Still down after the backoff: one more attempt, and the delay grows.
    await wait_for_backoff(servers)
    with pytest.raises(ServerConnectionError):
        await servers.call_tool("demo_add", {"a": 1, "b": 2})
    assert server_access(servers).connections.connection("demo").owner.starts == starts_while_down + 1

    # The server is back at the same address: after the backoff the next call reconnects.
    async with serve_on_port(http_app(), port):
        await wait_for_backoff(servers)
        result = await servers.call_tool("demo_add", {"a": 2, "b": 2})
        assert result.structured_content == {"result": 4}
        status = servers.server_status("demo")
        assert (status["state"], status["failures"], status["next_attempt_in"]) == ("connected", 0, None)


async def test_restart_attempts_bound_each_outage_not_the_connection_lifetime(
    tmp_path: Path, open_servers: OpenServers
) -> None:
    spec = stdio_demo_spec(mode="legacy", restart_attempts=1, reconnect_backoff=0.05)
    servers = open_servers({"demo": spec})
    pids = []
    for _ in range(4):  # four outages, each healed by its one restart
        pid = (await servers.call_tool("demo_stats", {})).structured_content["pid"]
        pids.append(pid)
        os.kill(pid, signal.SIGKILL)
        await wait_exit(pid)
    last = (await servers.call_tool("demo_stats", {})).structured_content["pid"]
    assert len({*pids, last}) == 5
    assert server_access(servers).connections.connection("demo").owner.starts == 5
    assert servers.server_status("demo")["state"] == "connected"
    assert child_pids() == {last}
    await servers.aclose()
    assert child_pids() == set()


def test_backoff_is_exponential_capped_and_jittered() -> None:
    backoff = ReconnectBackoff(attempts=2, initial_delay=1.0, max_delay=5.0)
    assert backoff.failed() == 0.0  # the first restart of an outage runs at once
    delays = [backoff.failed() for _ in range(6)]
    assert 1.0 <= delays[0] <= 2.0  # failure 2: 2 s, jittered into [1, 2]
    assert 2.0 <= delays[1] <= 4.0
    assert all(2.5 <= d <= 5.0 for d in delays[2:])  # capped at 5 s, jittered into [2.5, 5]
    assert backoff.exhausted
    backoff.succeeded()
    assert (backoff.failures, backoff.in_outage, backoff.wait_remaining()) == (0, False, 0.0)
    without_restarts = ReconnectBackoff(attempts=0, initial_delay=1.0, max_delay=5.0)
    assert 0.5 <= without_restarts.failed() <= 1.0  # no free restart when none are allowed
