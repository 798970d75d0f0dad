"""Idle pooled HTTP connections are checked for a server hang-up through our socket probe, and one the server hung
up is never reused: a real TCP server closes each connection after its response (while HTTP/1.1 keeps it alive)."""

from __future__ import annotations

import asyncio
import socket

import httpcore2
import httpx2
import pytest

from langgraph_mcp import _compat, http_keepalive
from langgraph_mcp.config import HttpServer
from langgraph_mcp.http_keepalive import ProbedBackend
from langgraph_mcp.transport import http_client

pytestmark = pytest.mark.anyio


class HangingUpServer:
    """Answers one HTTP/1.1 request per connection (no ``connection: close``: the client may keep it), then hangs
    up; counts connections."""

    def __init__(self) -> None:
        self.connections = 0
        self.hung_up = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()
        await writer.wait_closed()  # the FIN is on its way: loopback delivers it before this returns
        self.hung_up.set()


async def test_a_connection_the_server_hung_up_while_idle_is_not_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    probes: list[bool] = []
    real_probe = http_keepalive.server_hung_up

    def counting_probe(sock: socket.socket | None) -> bool:
        result = real_probe(sock)
        probes.append(result)
        return result

    monkeypatch.setattr(http_keepalive, "server_hung_up", counting_probe)
    server = HangingUpServer()
    tcp = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = tcp.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    async with tcp, http_client(HttpServer(url=url)) as http:
        first = await http.get(url)
        assert first.text == "ok"
        await asyncio.wait_for(server.hung_up.wait(), 10)
        second = await http.get(url)  # on the hung-up connection this would fail: "Server disconnected"
        assert second.text == "ok"
    assert server.connections == 2
    assert True in probes, (
        "the pool should have asked our probe about the idle connection, and heard 'hung up'"
    )


def test_the_default_pool_of_an_httpx2_client_takes_a_wrapped_backend() -> None:
    client = httpx2.AsyncClient()
    wrapped: list[httpcore2.AsyncNetworkBackend] = []

    def wrap(inner: httpcore2.AsyncNetworkBackend) -> httpcore2.AsyncNetworkBackend:
        wrapped.append(inner)
        return ProbedBackend(inner)

    assert _compat.wrap_pool_backend(client, wrap), (
        f"httpx2 {_compat.dependency_version('httpx2')} / httpcore2 {_compat.dependency_version('httpcore2')} no "
        f"longer has {'.'.join(_compat.POOL_BACKEND_PATH)}: idle connections are probed the costlier way"
    )
    assert len(wrapped) == 1 and isinstance(wrapped[0], httpcore2.AsyncNetworkBackend)


def test_a_pool_shaped_otherwise_is_left_alone() -> None:
    class OtherTransport(httpx2.AsyncBaseTransport):
        pass

    client = httpx2.AsyncClient(transport=OtherTransport())
    assert not _compat.wrap_pool_backend(client, ProbedBackend)
