"""What a streamable-HTTP connection sends, counted by the server: its setup once, one POST per tool call (nothing
else per call, alone or 32 in parallel), one DELETE at close for a legacy session."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import anyio
import pytest

from langgraph_mcp.examples.demo_server import http_app
from tests.support.helpers import OpenServers, serve_asgi

pytestmark = pytest.mark.anyio
PARALLEL = 32


class RequestLog:
    """An ASGI wrapper recording each HTTP request as (HTTP method, JSON-RPC method or None)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, str | None]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, index = scope["method"], len(self.requests)
        self.requests.append((method, None))
        body = b""

        async def reading() -> Any:
            nonlocal body
            message = await receive()
            if message["type"] == "http.request":
                body += message.get("body", b"")
                if not message.get("more_body") and body:
                    self.requests[index] = (method, json.loads(body).get("method"))
            return message

        await self.app(scope, reading, send)

    def since(self, start: int) -> Counter[tuple[str, str | None]]:
        return Counter(self.requests[start:])


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_each_call_is_one_post_and_the_setup_is_sent_once(open_servers: OpenServers, era: str) -> None:
    log = RequestLog(http_app())
    base = await open_servers.enter(serve_asgi(log))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era}})
    await servers.list_tools()
    if era == "legacy":
        setup = {("POST", "initialize"), ("POST", "notifications/initialized"), ("GET", None)}
    else:
        setup = {("POST", "server/discover"), ("POST", "subscriptions/listen")}
    assert set(log.since(0)) == setup | {("POST", "tools/list")}
    assert all(count == 1 for count in log.since(0).values()), log.since(0)

    start = len(log.requests)
    await servers.call_tool("demo_sleep", {"seconds": 0})
    assert log.since(start) == Counter({("POST", "tools/call"): 1})

    start = len(log.requests)
    async with anyio.create_task_group() as tg:
        for _ in range(PARALLEL):
            tg.start_soon(servers.call_tool, "demo_sleep", {"seconds": 0.1})
    assert log.since(start) == Counter({("POST", "tools/call"): PARALLEL})

    start = len(log.requests)
    await servers.aclose()
    expected = Counter({("DELETE", None): 1}) if era == "legacy" else Counter()
    assert log.since(start) == expected
