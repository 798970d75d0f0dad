"""Streamable-HTTP calls reuse their TCP connections: counted by the server, as the client ports it saw."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from langgraph_mcp.examples.demo_server import http_app
from tests.support.helpers import OpenServers, serve_asgi

pytestmark = pytest.mark.anyio
PARALLEL = 32


class ConnectionCounter:
    """An ASGI wrapper recording the client address of every HTTP request: one address per TCP connection."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: set[tuple[str, int]] = set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host, port = scope["client"]
            self.seen.add((host, port))
        await self.app(scope, receive, send)

    def opened_by(self, before: set[tuple[str, int]]) -> int:
        return len(self.seen - before)


async def parallel_sleeps(servers: Any) -> None:
    async with anyio.create_task_group() as tg:
        for _ in range(PARALLEL):
            tg.start_soon(servers.call_tool, "demo_sleep", {"seconds": 0.1})


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_calls_reuse_their_tcp_connections(open_servers: OpenServers, era: str) -> None:
    counter = ConnectionCounter(http_app())
    base = await open_servers.enter(serve_asgi(counter))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era}})
    await servers.list_tools()

    before = set(counter.seen)
    for _ in range(5):
        await servers.call_tool("demo_sleep", {"seconds": 0})
    assert counter.opened_by(before) <= 1, "one call after another should share one connection"

    await parallel_sleeps(servers)  # in flight together: up to one connection each
    before = set(counter.seen)
    await parallel_sleeps(servers)
    # A call returns as soon as its result event arrives, a moment before its connection is back in the pool, so
    # a burst sent right after may open some (up to 9 seen on a loaded 2-core machine); without reuse it opens all
    # 32 (the pool keeps every connection alive while idle).
    assert counter.opened_by(before) <= PARALLEL // 2, (
        "a second burst should reuse the first burst's connections"
    )


class HoldStreamEnds:
    """An ASGI wrapper holding back the end of every POST's event stream until :attr:`release` is set."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.release = anyio.Event()
        self.held = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        event_stream = False

        async def holding_send(message: Any) -> None:
            nonlocal event_stream
            if message["type"] == "http.response.start":
                event_stream = (b"content-type", b"text/event-stream") in message.get("headers", [])
            elif message["type"] == "http.response.body" and event_stream and not message.get("more_body"):
                self.held += 1
                await self.release.wait()
            await send(message)

        await self.app(scope, receive, holding_send)


async def test_a_call_returns_without_waiting_for_the_end_of_its_stream(open_servers: OpenServers) -> None:
    holder = HoldStreamEnds(http_app())
    base = await open_servers.enter(serve_asgi(holder))
    try:
        servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": "legacy"}})
        with anyio.fail_after(30):  # a bound, not a timing: the stream ends are held until the finally
            result = await servers.call_tool("demo_sleep", {"seconds": 0})
            assert holder.held >= 1 and not holder.release.is_set()
            assert not result.is_error
            again = await servers.call_tool("demo_sleep", {"seconds": 0})
            assert not again.is_error
    finally:
        holder.release.set()
