"""One POST's TCP connection dies before its response (the keep-alive race: the server closed a pooled connection
just as it was reused) while other calls are in flight on the same streamable-HTTP connection: only that call
fails, with the usual per-call semantics, and the others complete.

Real parts: the demo server on uvicorn (127.0.0.1), reached through a raw TCP proxy in the test that closes the
one client connection carrying the targeted ``tools/call`` without forwarding it (the server never sees it).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpcore2
import pytest
import uvicorn

from langgraph_mcp import McpServers
from langgraph_mcp.config import HttpServer
from langgraph_mcp.errors import CallInterruptedError
from langgraph_mcp.examples.demo_server import DemoServer, build_server, http_app
from langgraph_mcp.transports.http import HTTP_KEEPALIVE_EXPIRY, http_client
from tests.support.helpers import ERAS, OpenServers, serve_asgi

pytestmark = pytest.mark.anyio

FAST = {"connect_timeout": 5, "tool_timeout": 20, "reconnect_backoff": 0.05}
HELD = 3


class ClosingProxy:
    """A TCP proxy that closes the client connection a request for ``tool`` arrives on (once), unforwarded."""

    def __init__(self, upstream_port: int, tool: str) -> None:
        self.upstream_port = upstream_port
        self.target = re.compile(rb'"name": ?"' + re.escape(tool.encode()) + rb'"')
        self.closed = 0

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, check: bool) -> None:
        try:
            while data := await reader.read(65536):
                if check and self.closed == 0 and self.target.search(data):
                    self.closed += 1
                    return  # the finally closes both sides: the client sees EOF before any response byte
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        to_server = asyncio.ensure_future(self._pump(client_r, up_w, True))
        to_client = asyncio.ensure_future(self._pump(up_r, client_w, False))
        await to_server
        if self.closed and not to_client.done():
            to_client.cancel()
            client_w.close()
        await asyncio.gather(to_client, return_exceptions=True)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.close()


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


Started = tuple[DemoServer, McpServers, ClosingProxy, list[asyncio.Future[Any]], asyncio.Event]


async def start_held_calls(open_servers: OpenServers, era: str, tool: str) -> Started:
    """The demo server (with ``hold``) behind a proxy closing ``tool``'s connection, and HELD calls in flight."""
    server, release = held_server()
    base = await open_servers.enter(serve_asgi(http_app(server)))
    proxy = ClosingProxy(int(base.rsplit(":", 1)[1]), tool)
    proxied = await open_servers.enter(proxy.running())
    servers = open_servers({"demo": {"url": f"{proxied}/mcp", "mode": era, **FAST}})
    await servers.call_tool("demo_add", {"a": 1, "b": 1})  # connected before the burst
    held = [asyncio.ensure_future(servers.call_tool("demo_hold", {"n": i})) for i in range(HELD)]
    with anyio.fail_after(15):
        await server.events.reached("hold.enter", HELD)
    return server, servers, proxy, held, release


async def finish_held(held: list[asyncio.Future[Any]], release: asyncio.Event) -> list[Any]:
    release.set()
    with anyio.fail_after(15):
        results = await asyncio.gather(*held, return_exceptions=True)
    return [r if isinstance(r, BaseException) else r.structured_content["result"] for r in results]


@pytest.mark.parametrize("era", ERAS)
async def test_a_non_idempotent_post_whose_connection_dies_fails_alone_and_may_have_run(
    open_servers: OpenServers, era: str
) -> None:
    server, servers, proxy, held, release = await start_held_calls(open_servers, era, "echo")
    with pytest.raises(CallInterruptedError) as caught:
        await servers.call_tool("demo_echo", {"text": "hello"})
    assert proxy.closed == 1
    assert caught.value.tool == "echo" and "may or may not have run" in str(caught.value)
    assert server.events.snapshot().get("echo.enter", 0) == 0  # never reached the server
    assert await finish_held(held, release) == [f"held {i}" for i in range(HELD)]
    assert server.events.snapshot()["hold.enter"] == HELD
    # The connection goes on serving.
    result = await servers.call_tool("demo_add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}


@pytest.mark.parametrize("era", ERAS)
async def test_a_read_only_post_whose_connection_dies_is_retried_while_the_others_complete(
    open_servers: OpenServers, era: str
) -> None:
    server, servers, proxy, held, release = await start_held_calls(open_servers, era, "get_forecast")
    result = await servers.call_tool("demo_get_forecast", {"city": "Oslo", "days": 1})
    assert result.structured_content["city"] == "Oslo"
    assert proxy.closed == 1
    assert server.events.snapshot()["get_forecast.request"] == 1  # the retry only
    assert await finish_held(held, release) == [f"held {i}" for i in range(HELD)]


async def test_idle_pooled_connections_expire_before_uvicorns_keep_alive_closes_them() -> None:
    # The race above, made rare: a connection the server is about to close for idling is not reused.
    async with http_client(HttpServer(url="http://127.0.0.1:9/mcp")) as http:
        pool = http._transport._pool  # type: ignore[attr-defined]
        assert isinstance(pool, httpcore2.AsyncConnectionPool)
        assert pool._keepalive_expiry == HTTP_KEEPALIVE_EXPIRY
    assert uvicorn.Config(app=None).timeout_keep_alive > HTTP_KEEPALIVE_EXPIRY


async def test_the_environments_http_proxy_is_still_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Containing POST failures must not cost users behind a proxy their connectivity (httpx2 ignores the
    environment's proxies for a client given its own transport): the request goes to the proxy in absolute form."""
    seen: list[bytes] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(proxy, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    try:
        async with http_client(HttpServer(url="http://mcp.example.test/mcp")) as http:
            with anyio.fail_after(10):
                response = await http.post("http://mcp.example.test/mcp", json={"jsonrpc": "2.0", "id": 1})
    finally:
        listener.close()
        await listener.wait_closed()
    assert response.status_code == 200
    assert [head.split(b"\r\n", 1)[0] for head in seen] == [b"POST http://mcp.example.test/mcp HTTP/1.1"]
