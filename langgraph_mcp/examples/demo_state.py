"""The demo server's per-instance state and the shapes its plain tools return: ``DemoServer``, its
``EventRecorder``, the output models, the media samples and the annotation presets."""

import asyncio
import contextlib
import io
import json
import os
import struct
import time
import wave
import zlib
from collections import Counter
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

DEFAULT_NAME = "demo"
NAME_ENV = "DEMO_SERVER_NAME"
EVENTS_FILE_ENV = "DEMO_EVENTS_FILE"
REQUEST_STATE_KEY_ENV = "DEMO_REQUEST_STATE_KEY"
"""A secret every replica of the demo server shares for sealing 2026-07-28 ``requestState`` (unset: the SDK's
default, a random key per process, which replicas behind a round-robin proxy do not share)."""

# --------------------------------------------------------------------------- binary fixtures


def _tiny_png() -> bytes:
    """A valid 2x2 RGB PNG (built by hand so CRCs and zlib stream are correct)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    width = height = 2
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    rows = b"".join(b"\x00" + b"\xff\x00\x00\x00\x00\xff" for _ in range(height))  # red, blue
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _tiny_wav() -> bytes:
    """A valid 10 ms, 8 kHz, mono, 16-bit PCM WAV of silence."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 80)
    return buf.getvalue()


IMAGE_PNG = _tiny_png()
AUDIO_WAV = _tiny_wav()
# --------------------------------------------------------------------------- models


class Forecast(BaseModel):
    """A fake weather forecast."""

    city: str
    days: int
    temps_c: list[float] = Field(description="Daily max temperature in °C")
    conditions: list[str] = Field(description="Daily conditions")


class SearchHit(BaseModel):
    """One fake search result."""

    title: str
    url: str
    snippet: str


class SearchResults(BaseModel):
    """Fake web search results."""

    query: str
    results: list[SearchHit]


class Stats(BaseModel):
    """Event counters of one server instance."""

    counts: dict[str, int] = Field(description='Event counts keyed "<tool>.<event>"')
    pid: int


# --------------------------------------------------------------------------- server-side observability


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class EventRecorder:
    """Per-instance event counter, optionally mirrored to the ``DEMO_EVENTS_FILE`` JSON-lines file."""

    def __init__(self, server_name: str) -> None:
        self.server_name = server_name
        self.counts: Counter[str] = Counter()
        self._waiters: list[tuple[str, int, asyncio.Future[None]]] = []

    def record(self, tool: str, event: str, **extra: Any) -> None:
        """Count ``<tool>.<event>`` and append it to the events file if configured."""
        self.counts[f"{tool}.{event}"] += 1
        self._wake()
        path = os.environ.get(EVENTS_FILE_ENV)
        if path:
            line = {
                "pid": os.getpid(),
                "tool": tool,
                "event": event,
                "server": self.server_name,
                "t": round(time.time(), 4),
                **extra,
            }
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(line, default=str) + "\n")

    async def reached(self, key: str, count: int = 1) -> None:
        """Return once ``counts[key]`` is at least ``count`` (tests wait on what the server did, not on time).

        Unbounded: bound it yourself (``anyio.fail_after``). Sync tools run in worker threads, so the wake-up is
        handed to the waiter's loop thread-safely."""
        if self.counts[key] >= count:
            return
        waiter = asyncio.get_running_loop().create_future()
        entry = (key, count, waiter)
        self._waiters.append(entry)
        try:
            self._wake()  # an event recorded between the check above and the registration
            await waiter
        finally:
            self._waiters.remove(entry)

    def _wake(self) -> None:
        for key, count, waiter in list(self._waiters):
            if self.counts[key] >= count and not waiter.done():
                with contextlib.suppress(RuntimeError):  # the waiter's loop is closed: nobody waits any more
                    waiter.get_loop().call_soon_threadsafe(_resolve, waiter)

    def snapshot(self) -> dict[str, int]:
        """A plain copy of the counters."""
        return dict(self.counts)

    def clear(self) -> None:
        """Reset the counters (the events file is left alone)."""
        self.counts.clear()


def _request_state_security() -> RequestStateSecurity | None:
    key = os.environ.get(REQUEST_STATE_KEY_ENV)
    return RequestStateSecurity(keys=[key]) if key else None


class DemoServer(MCPServer):
    """``MCPServer`` carrying the demo's per-instance state (events, workspace, URL consents)."""

    def __init__(self, name: str) -> None:
        from langgraph_mcp.examples.demo_apps import files_app

        # Before the server is built: its MCP App (an extension, fixed at construction) works on them.
        self.events = EventRecorder(name)
        self.workspace: dict[str, str] = {
            "notes.txt": "Remember: LangGraph + MCP.\n",
            "todo.txt": "- write tests\n- ship it\n",
        }
        super().__init__(
            name,
            version="1.0.0",
            instructions="Demo server bundled with langgraph-mcp: weather, a small file workspace, "
            "content-type samples, failures, and elicitation examples.",
            middleware=[self._count_requests],
            request_state_security=_request_state_security(),
            extensions=[files_app(self.workspace, self.events.record)],
        )
        self.consented: set[str] = set()

    async def _count_requests(self, ctx: Any, call_next: Any) -> Any:
        """Record ``<tool>.request`` for every ``tools/call`` that reaches the server (every attempt and round)
        and ``server.cancelled`` for every ``notifications/cancelled``: tests count round trips server-side."""
        params = ctx.params if isinstance(ctx.params, dict) else {}
        if ctx.method == "tools/call" and params.get("name") not in {"stats", "reset_stats"}:
            self.events.record(str(params.get("name")), "request")
        elif ctx.method == "notifications/cancelled":
            self.events.record("server", "cancelled")
        return await call_next(ctx)


# --------------------------------------------------------------------------- annotations

READ_ONLY_OPEN = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
READ_ONLY_CLOSED = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ASKS_USER = ToolAnnotations(read_only_hint=False, destructive_hint=False)
