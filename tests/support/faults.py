"""Fault injection for tests: an ASGI wrapper that cuts chosen HTTP responses mid-body over real uvicorn.

The wrapper sits between uvicorn and a real MCP server app. For a request whose JSON-RPC body matches a rule it
lets the server run, forwards the response head and the first bytes of its body, then raises — uvicorn closes
the socket, and the client sees a response that ends mid-body (``httpx2.RemoteProtocolError``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import uvicorn

from tests.support.helpers import LoopbackUvicorn, start_uvicorn

FAULTY_SERVER = Path(__file__).resolve().parent / "servers" / "faulty_stdio_server.py"


def faulty_server_spec(mode: str, **options: Any) -> dict[str, Any]:
    """A stdio config entry for ``tests/support/servers/faulty_stdio_server.py`` in ``mode``."""
    return {"command": sys.executable, "args": [str(FAULTY_SERVER), mode], **options}


@asynccontextmanager
async def serve_on_port(app: Any, port: int) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1:``port`` in this event loop (so a test can stop and restart a
    server at the same address); yields the base URL. On exit the server stops hard, as a crash would: open
    connections (a client's held-open streams) are dropped, not waited for."""
    uv = LoopbackUvicorn(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    async with anyio.create_task_group() as tg:
        await start_uvicorn(tg, uv)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            uv.should_exit = True
            uv.force_exit = True


Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]


class ResponseCut(Exception):
    """Raised inside the ASGI app to make uvicorn drop the connection mid-response."""


@dataclass
class CutResponses:
    """Wrap ``app``; cut the response of every POST whose JSON-RPC message ``rule`` accepts (while ``armed``)."""

    app: Any
    rule: Callable[[dict[str, Any]], bool]
    keep_bytes: int = 8
    limit: int | None = None
    """Cut at most this many responses (``None``: every matching one)."""
    cut: int = 0
    """How many responses were cut so far."""
    seen: list[str] = field(default_factory=list)
    """The JSON-RPC method of every POST that reached the wrapper."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        parsed, replay = await read_post(receive)
        if isinstance(parsed, dict):
            self.seen.append(str(parsed.get("method")))
        armed = self.limit is None or self.cut < self.limit
        target = armed and isinstance(parsed, dict) and self.rule(parsed)
        if not target:
            await self.app(scope, replay, send)
            return
        self.cut += 1
        sent = 0

        async def cutting_send(message: dict[str, Any]) -> None:
            nonlocal sent
            if message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                room = self.keep_bytes - sent
                if len(chunk) >= room:
                    await send({"type": "http.response.body", "body": chunk[:room], "more_body": True})
                    raise ResponseCut
                sent += len(chunk)
                await send({**message, "more_body": True})
                return
            if message["type"] == "http.response.start":
                # Keep the declared length: the client must see a body that ends before it should.
                await send(message)
                return
            await send(message)

        try:
            await self.app(scope, replay, cutting_send)
        except ResponseCut:
            raise
        raise ResponseCut  # the app finished without a body big enough to cut: cut at its end


async def read_post(receive: Receive) -> tuple[Any, Receive]:
    """Read a POST's whole body: its JSON (``None`` if not JSON) and a ``receive`` that replays it to the app."""
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(chunks)
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    replayed = False

    async def replay() -> Any:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return parsed, replay


def calls_tool(name: str) -> Callable[[dict[str, Any]], bool]:
    """A rule: the message is a ``tools/call`` of ``name``."""
    return lambda m: m.get("method") == "tools/call" and (m.get("params") or {}).get("name") == name


def lists_tools(m: dict[str, Any]) -> bool:
    """A rule: the message is a ``tools/list`` request."""
    return m.get("method") == "tools/list"


@dataclass
class GarbleResponses:
    """Wrap ``app``; answer every POST whose JSON-RPC message ``rule`` accepts with a complete HTTP response whose
    body is not a valid JSON-RPC message (the server's own response is discarded)."""

    app: Any
    rule: Callable[[dict[str, Any]], bool]
    body: bytes = b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [unterminated'
    garbled: int = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        parsed, replay = await read_post(receive)
        if not (isinstance(parsed, dict) and self.rule(parsed)):
            await self.app(scope, replay, send)
            return
        self.garbled += 1
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(self.body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": self.body, "more_body": False})
