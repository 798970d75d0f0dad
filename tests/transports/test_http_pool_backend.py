"""The streams of a streamable-HTTP connection's pool (``http_keepalive.PoolBackend``), against real TCP servers:
an idle connection the server hung up is found by our socket probe and never reused, and a request with a body
goes out in one write."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2
import pytest

from langgraph_mcp import _compat
from langgraph_mcp.config import HttpServer
from langgraph_mcp.transports import http_stack as http_keepalive
from langgraph_mcp.transports.http import http_client
from langgraph_mcp.transports.http_stack import PoolBackend

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
        return PoolBackend(inner)

    assert _compat.wrap_pool_backend(client, wrap), (
        f"httpx2 {_compat.dependency_version('httpx2')} / httpcore2 {_compat.dependency_version('httpcore2')} no "
        f"longer has {'.'.join(_compat.POOL_BACKEND_PATH)}: idle connections are probed the costlier way"
    )
    assert len(wrapped) == 1 and isinstance(wrapped[0], httpcore2.AsyncNetworkBackend)


def test_a_pool_shaped_otherwise_is_left_alone() -> None:
    class OtherTransport(httpx2.AsyncBaseTransport):
        pass

    client = httpx2.AsyncClient(transport=OtherTransport())
    assert not _compat.wrap_pool_backend(client, PoolBackend)


class RecordingBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's own backend, recording what its streams write."""

    def __init__(self, inner: httpcore2.AsyncNetworkBackend) -> None:
        self.inner = inner
        self.writes: list[bytes] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self.inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return RecordingStream(stream, self.writes)


class RecordingStream(httpcore2.AsyncNetworkStream):
    def __init__(self, inner: httpcore2.AsyncNetworkStream, writes: list[bytes]) -> None:
        self.inner = inner
        self.writes = writes

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self.inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:  # httpcore2 passes the (empty) end of a body of known length too
            self.writes.append(buffer)
        await self.inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


async def answer_requests(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A keep-alive HTTP/1.1 server: each request (its body read by content-length) gets the body's length."""
    while head := await reader.readuntil(b"\r\n\r\n"):
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = await reader.readexactly(length)
        answer = str(len(body)).encode()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(answer), answer))
        await writer.drain()


async def test_a_request_goes_out_in_one_write_with_its_body() -> None:
    tcp = await asyncio.start_server(answer_requests, "127.0.0.1", 0)
    port = tcp.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    recording: list[RecordingBackend] = []

    def wrap(inner: httpcore2.AsyncNetworkBackend) -> httpcore2.AsyncNetworkBackend:
        recording.append(RecordingBackend(inner))
        return PoolBackend(recording[0])

    async with tcp, httpx2.AsyncClient() as http:
        assert _compat.wrap_pool_backend(http, wrap)
        writes = recording[0].writes
        posted = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
        assert posted.text == str(len(b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}'))
        assert len(writes) == 1, writes
        assert writes[0].startswith(b"POST /mcp HTTP/1.1\r\n") and writes[0].endswith(b'"tools/call"}')
        got = await http.get(url)  # no body: the head goes out alone, at once
        assert got.text == "0" and len(writes) == 2 and writes[1].endswith(b"\r\n\r\n")
        empty = await http.post(url, content=b"")
        assert empty.text == "0" and len(writes) == 3
        tcp.close()
