"""The HTTP pool limit ``max_connections`` is configurable and applied (issue 10 item 2): counted by the server.

One HTTP/1.1 connection carries one request at a time, so the requests the server has in flight at once are the
client's TCP connections in use; the server also records the client address (one per connection) of each.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from langgraph_mcp.examples.demo_server import http_app
from langgraph_mcp.transports.http import HTTP_POOL_HEADROOM, HTTP_POOL_RESERVE
from tests.support.helpers import OpenServers, serve_asgi

pytestmark = pytest.mark.anyio
EXTRA = 5
"""Calls beyond the limit, sent at once with the others."""


class PoolProbe:
    """An ASGI wrapper counting requests in flight; once armed, it holds every POST until ``gate`` are in flight
    at once (so the calls can only all finish if the pool lets ``gate`` connections open together)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.active = 0
        self.most = 0
        """The most requests in flight at once since :meth:`arm`."""
        self.addresses: set[tuple[str, int]] = set()
        """The client addresses (TCP connections) of the requests since :meth:`arm`."""
        self.gate: int | None = None
        self.opened = anyio.Event()

    def arm(self, gate: int) -> None:
        self.gate, self.most, self.addresses = gate, self.active, set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.active += 1
        self.most = max(self.most, self.active)
        try:
            if self.gate is not None:
                host, port = scope["client"]
                self.addresses.add((host, port))
                if self.active >= self.gate:
                    self.opened.set()
                if scope["method"] == "POST":
                    await self.opened.wait()
            await self.app(scope, receive, send)
        finally:
            self.active -= 1


POOLS = [
    pytest.param({"max_connections": 3}, 3, id="max_connections=3"),
    pytest.param({"max_connections": 6}, 6, id="max_connections=6"),
    # Unset: sized past the parked legacy calls (each holds one open POST).
    pytest.param({"max_parked_calls": 2}, 2 + HTTP_POOL_HEADROOM, id="default"),
]


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize(("options", "limit"), POOLS)
async def test_max_connections_bounds_the_connections_open_at_once(
    open_servers: OpenServers, era: str, options: dict[str, int], limit: int
) -> None:
    probe = PoolProbe(http_app())
    base = await open_servers.enter(serve_asgi(probe))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era, **options}})
    await servers.list_tools()

    results: list[Any] = []

    async def call(i: int) -> None:
        results.append(await servers.call_tool("demo_echo", {"text": f"call {i}"}))

    # Legacy calls leave HTTP_POOL_RESERVE connections (the GET stream, in flight too, is one) for the messages
    # the SDK sends one at a time, such as a cancellation: with every connection held by calls, none could be sent.
    in_flight = limit if era == "modern" else limit - HTTP_POOL_RESERVE + 1
    probe.arm(in_flight)
    # A bound, not a timing: with fewer than `in_flight` connections the gate never opens.
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for i in range(limit + EXTRA):
                tg.start_soon(call, i)
    assert len(results) == limit + EXTRA and not any(r.is_error for r in results)
    # The calls past the limit waited for a pooled connection (the gate opened at `in_flight`) ...
    assert probe.opened.is_set()
    # ... and never more than `in_flight` requests (`limit` connections) were open at once, nor used in all.
    assert probe.most == in_flight
    assert len(probe.addresses) <= limit
