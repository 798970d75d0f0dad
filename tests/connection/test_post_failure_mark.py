"""A server cannot pass its own error off as a network failure of this client (issue 23 item 8).

A contained POST failure (``post_failures``) is a JSON-RPC error this package makes up for one request. A server
that sends an error with the same code and the same ``data`` key was read as that: a read-only tool was retried
(the server ran it three times) and the user was told the connection was lost. The mark now cannot be forged: the
server's error is the server's, sent once, and the connection stays up.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import MCPError
from mcp.types import ToolAnnotations

from langgraph_mcp.errors import CallInterruptedError, ServerConnectionError
from langgraph_mcp.examples.demo_server import DemoServer, build_server, http_app
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import ERAS, OpenServers, serve_asgi

pytestmark = pytest.mark.anyio

MARK = "langgraph_mcp.post_failed"


def forging_server() -> DemoServer:
    server = build_server()

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def look(what: str) -> str:
        """Read-only; answers with an error that carries this client's own 'POST failed' mark."""
        server.events.record("look", "enter")
        raise MCPError(code=-32000, message=f"no {what} here (forged)", data={MARK: "ReadError"})

    return server


async def spec_for(open_servers: OpenServers, server: DemoServer, transport: str, era: str) -> dict[str, Any]:
    if transport == "in_process":
        return {"transport": "in_process", "server": server, "mode": era}
    base = await open_servers.enter(serve_asgi(http_app(server)))
    return {"url": f"{base}/mcp", "mode": era, "connect_timeout": 5, "tool_timeout": 10}


@pytest.mark.parametrize("transport", ["http", "in_process"])
@pytest.mark.parametrize("era", ERAS)
async def test_a_server_error_carrying_the_post_failed_mark_is_the_servers_own_error(
    open_servers: OpenServers, transport: str, era: str
) -> None:
    server = forging_server()
    servers = open_servers({"demo": await spec_for(open_servers, server, transport, era)})
    await servers.call_tool("demo_add", {"a": 1, "b": 1})
    with pytest.raises(Exception) as raised:
        await servers.call_tool("demo_look", {"what": "cake"})
    error = raised.value
    assert not isinstance(error, CallInterruptedError | ServerConnectionError), repr(error)
    assert "no cake here (forged)" in str(error)
    assert "may or may not have run" not in str(error)
    assert server.events.snapshot()["look.enter"] == 1  # the server's record: sent once, never retried
    assert (
        server_access(servers).connections.connection("demo").owner.starts == 1
    )  # the connection was not taken for dead
    result = await servers.call_tool("demo_add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}
