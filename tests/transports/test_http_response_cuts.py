"""A response cut after it started (headers and the first bytes of the body sent, then the TCP connection dropped)
fails only its own request, while other calls are in flight on the same streamable-HTTP connection (issue 23
item 7), as a POST that fails before its response already does (``tests/transports/test_http_request_faults.py``).

A non-idempotent call ends "may or may not have run" (the server's record shows it ran once); a read-only call is
retried; the calls in flight complete and the connection is not restarted. Real parts: the demo server on uvicorn
(127.0.0.1) behind ``tests.support.faults.CutResponses``, which lets the server run and drops the connection mid-body.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

from langgraph_mcp.errors import CallInterruptedError
from langgraph_mcp.examples.demo_server import DemoServer, build_server, http_app
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.faults import CutResponses, calls_tool
from tests.support.helpers import ERAS, OpenServers, serve_asgi

pytestmark = pytest.mark.anyio

FAST = {"connect_timeout": 5, "tool_timeout": 20, "reconnect_backoff": 0.05}
HELD = 3


def held_server() -> tuple[DemoServer, asyncio.Event]:
    server = build_server()
    release = asyncio.Event()

    @server.tool()
    async def hold(n: int) -> str:
        """Wait for the test's release (a call in flight), then answer with ``n``."""
        server.events.record("hold", "enter")
        await release.wait()
        return f"held {n}"

    return server, release


async def start_held(
    open_servers: OpenServers, era: str, tool: str, keep_bytes: int
) -> tuple[DemoServer, Any, CutResponses, list[asyncio.Future[Any]], asyncio.Event]:
    server, release = held_server()
    app = CutResponses(http_app(server), calls_tool(tool), keep_bytes=keep_bytes, limit=1)
    base = await open_servers.enter(serve_asgi(app))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era, **FAST}})
    await servers.call_tool("demo_add", {"a": 1, "b": 1})  # connected before the burst
    held = [asyncio.ensure_future(servers.call_tool("demo_hold", {"n": i})) for i in range(HELD)]
    with anyio.fail_after(15):
        await server.events.reached("hold.enter", HELD)
    return server, servers, app, held, release


async def finish(held: list[asyncio.Future[Any]], release: asyncio.Event) -> list[Any]:
    release.set()
    with anyio.fail_after(15):
        results = await asyncio.gather(*held, return_exceptions=True)
    return [r if isinstance(r, BaseException) else r.structured_content["result"] for r in results]


@pytest.mark.parametrize("keep_bytes", [8, 60], ids=["cut-early", "cut-later"])
@pytest.mark.parametrize("era", ERAS)
async def test_a_non_idempotent_call_whose_response_is_cut_fails_alone_and_may_have_run(
    open_servers: OpenServers, era: str, keep_bytes: int
) -> None:
    server, servers, app, held, release = await start_held(open_servers, era, "echo", keep_bytes)
    with anyio.fail_after(30), pytest.raises(CallInterruptedError) as caught:
        await servers.call_tool("demo_echo", {"text": "hello " * 200})
    assert app.cut == 1
    assert caught.value.tool == "echo" and "may or may not have run" in str(caught.value)
    assert server.events.snapshot()["echo.enter"] == 1  # the server's record: it ran, once (no retry)
    assert await finish(held, release) == [f"held {i}" for i in range(HELD)]
    assert server_access(servers).connections.connection("demo").owner.starts == 1  # the connection lived on
    result = await servers.call_tool("demo_add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}


@pytest.mark.parametrize("era", ERAS)
async def test_a_read_only_call_whose_response_is_cut_is_retried_while_the_others_complete(
    open_servers: OpenServers, era: str
) -> None:
    server, servers, app, held, release = await start_held(open_servers, era, "get_forecast", 8)
    with anyio.fail_after(30):
        result = await servers.call_tool("demo_get_forecast", {"city": "Oslo", "days": 1})
    assert result.structured_content["city"] == "Oslo"
    assert app.cut == 1
    assert server.events.snapshot()["get_forecast.request"] == 2  # the cut answer, then the retry
    assert await finish(held, release) == [f"held {i}" for i in range(HELD)]
    assert server_access(servers).connections.connection("demo").owner.starts == 1
