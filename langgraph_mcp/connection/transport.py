"""Opening one server's transport (stdio, streamable HTTP, SSE) and capturing a stdio server's stderr.

A stdio server's stderr: piped to a logger (or appended to a file), with its last lines kept for error messages.

Builds the ``mcp.Client`` for one server spec, and watches its transport: end of stream, stray lines, bad messages.

The SDK has no public way to tell that a stdio server's stdout ended, and it routes a line it cannot parse to the
message handler with no link to the request it answered. So every stream-backed transport is wrapped: the wrapper
records end-of-stream, logs and skips lines that are not JSON-RPC at all (a banner or log line printed to stdout),
and reports a message that looks like JSON-RPC but cannot be parsed, so the requests waiting for it fail at once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import shlex
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TextIO, cast

import anyio
import httpx2
import pydantic
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from langgraph_mcp._compat import wrap_pool_backend
from langgraph_mcp.config import HttpServer, InProcessServer, ServerSpec, SseServer, StdioServer
from langgraph_mcp.connection.http import ContainedPosts, PoolBackend, drain_event_streams_on_close

TAIL_LINES = 20
"""How many of the last stderr lines a start failure quotes."""


class StderrCapture:
    """One server process's stderr for one connection start; :meth:`tail` returns its last lines."""

    def __init__(self, server: str, target: str) -> None:
        self._lines: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._pump: threading.Thread | None = None
        self._file: Path | None = None
        self._file_start = 0
        if target != "log":
            self._file = Path(target)
            self.writer: IO[str] = self._file.open("a")
            self._file_start = self.writer.tell()
            return
        read_fd, write_fd = os.pipe()
        server_logger = logging.getLogger(f"langgraph_mcp.server.{server}")

        def pump() -> None:
            with os.fdopen(read_fd, errors="replace") as lines:
                for line in lines:
                    text = line.rstrip("\n")
                    self._lines.append(text)
                    server_logger.info("%s", text)

        self._pump = threading.Thread(target=pump, name=f"mcp-stderr:{server}", daemon=True)
        self._pump.start()
        self.writer = os.fdopen(write_fd, "w")

    def close(self) -> None:
        """Close our end; the pump thread ends once the child's end is closed too."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def tail(self, wait: float = 1.0) -> list[str]:
        """The last lines the server wrote, after waiting up to ``wait`` seconds for the pipe to drain.

        Call after :meth:`close` and after the process exited, so the pump has seen end-of-file.
        """
        if self._file is not None:
            with contextlib.suppress(OSError), self._file.open(errors="replace") as f:
                f.seek(self._file_start)
                return f.read().splitlines()[-TAIL_LINES:]
            return []
        if self._pump is not None:
            self._pump.join(wait)
        return list(self._lines)


logger = logging.getLogger("langgraph_mcp.connection")

# Connections beyond the parked legacy calls (each holds one open POST): the legacy GET stream and ordinary calls.
HTTP_POOL_HEADROOM = 32

# Pooled connections legacy calls never take: the GET stream, and the one notification or answer the SDK POSTs at a
# time (``notifications/cancelled`` of a call past ``max_parked_calls``, an answer to a question).
HTTP_POOL_RESERVE = 2

HTTP_KEEPALIVE_EXPIRY = 4.0
"""How long (s) an idle pooled connection is kept for reuse: below common servers' own keep-alive (uvicorn's and
Node's 5 s), so a connection is not reused at the instant the server closes it. httpx2's default is 5 s, the same as
uvicorn's, which made that race (``ReadError('')`` on a reused connection) a matter of luck under load."""


class TransportWatch:
    """What one transport reported that the SDK does not expose: it ended, or it delivered a bad message."""

    def __init__(self, server: str, on_invalid: Callable[[Exception], None]) -> None:
        self.server = server
        self._ended = asyncio.Event()
        self.ended = False
        """The read side reached end-of-stream: the server process or stream is gone (an attribute: every call
        reads it)."""
        self._on_invalid = on_invalid
        self._server_log = logging.getLogger(f"langgraph_mcp.server.{server}")

    def end(self) -> None:
        self.ended = True
        self._ended.set()

    async def wait_ended(self) -> None:
        """Return once :attr:`ended` is true."""
        await self._ended.wait()

    def absorb(self, error: Exception) -> None:
        """A transport-level parse failure: skip a stray non-JSON-RPC line, report anything else."""
        if is_stray_line(error):
            raw = _raw_input(error) if isinstance(error, pydantic.ValidationError) else error
            self._server_log.warning("skipped a line on stdout that is not JSON-RPC: %.300s", raw)
            return
        self._on_invalid(error)


def is_stray_line(error: Exception) -> bool:
    """Whether a parse failure is output that was never meant as a JSON-RPC message (not a JSON object)."""
    if not isinstance(error, pydantic.ValidationError):
        return False
    raw = _raw_input(error)
    if isinstance(raw, str):
        return not raw.lstrip().startswith("{")
    return not isinstance(raw, dict)


def _raw_input(error: pydantic.ValidationError) -> Any:
    errors = error.errors()
    return errors[0].get("input") if errors else None


class _WatchedReadStream:
    """A transport's read stream that reports end-of-stream and takes parse failures out of the message flow."""

    def __init__(self, inner: Any, watch: TransportWatch) -> None:
        self._inner = inner
        self._watch = watch

    @property
    def last_context(self) -> Any:  # the dispatcher reads the sender's context through this (see ReadStream)
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            try:
                item: SessionMessage | Exception = await self._inner.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._watch.end()
                raise
            if isinstance(item, Exception):
                self._watch.absorb(item)
                continue
            return item

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        # receive()'s loop again rather than awaiting it: one coroutine frame less on every message read.
        while True:
            try:
                item: SessionMessage | Exception = await self._inner.receive()
            except anyio.EndOfStream:
                self._watch.end()
                raise StopAsyncIteration from None
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._watch.end()
                raise
            if isinstance(item, Exception):
                self._watch.absorb(item)
                continue
            return item

    async def aclose(self) -> None:
        self._watch.end()
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        self._watch.end()
        result: bool | None = await self._inner.__aexit__(exc_type, exc, tb)
        return result


def _watched(transport: AbstractAsyncContextManager[Any], watch: TransportWatch) -> Transport:
    @asynccontextmanager
    async def wrapped() -> AsyncIterator[Any]:
        async with transport as (read, write):
            yield _WatchedReadStream(read, watch), write

    return cast(Transport, wrapped())


def http_client(spec: HttpServer) -> httpx2.AsyncClient:
    """The HTTP client for one streamable-HTTP connection: the spec's headers, auth, timeouts and pool limits.

    Each parked legacy call holds one POST response open, so the pool is sized past ``max_parked_calls``. A POST's
    event stream is read to its end before it is closed, so its connection is reused (``http_keepalive``), and
    every pooled connection may stay open idle (for httpx2's 5 s keep-alive): after a burst of N parallel calls the
    next burst reuses all N instead of opening N - 20 new ones (for ``HTTP_KEEPALIVE_EXPIRY``). The pool's check
    of its idle connections for a server hang-up is one ``poll()`` each, and a request goes out in one write
    (``http_keepalive.PoolBackend``). A network failure under one request's POST fails that request alone
    (``post_failures.ContainedPosts``), not the whole connection.
    """
    max_connections = http_pool_size(spec)
    limits = httpx2.Limits(
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=HTTP_KEEPALIVE_EXPIRY,
    )
    client = ContainedPosts(
        headers=spec.headers or None,
        timeout=httpx2.Timeout(spec.timeout, read=spec.read_timeout),
        auth=spec.auth,
        limits=limits,
        event_hooks={"response": [drain_event_streams_on_close]},
    )
    wrap_pool_backend(client, PoolBackend)
    return client


def http_pool_size(spec: HttpServer) -> int:
    """How many HTTP connections one streamable-HTTP connection may open at once."""
    return spec.max_connections or spec.max_parked_calls + HTTP_POOL_HEADROOM


def legacy_call_slots(spec: ServerSpec) -> int | None:
    """How many legacy ``tools/call`` may hold a pooled connection at once (parked ones included), or ``None``
    (no pool: not streamable HTTP).

    A legacy call holds its POST until it ends, and a call past ``max_parked_calls`` lets go of it only once its
    ``notifications/cancelled`` is sent, which needs a free connection too: with every connection held by calls,
    nothing could ever be sent again. Calls past these slots wait for one (within ``tool_timeout``) unsent.
    """
    if not isinstance(spec, HttpServer):
        return None
    return max(1, http_pool_size(spec) - HTTP_POOL_RESERVE)


def command_line(spec: StdioServer) -> str:
    return shlex.join([spec.command, *spec.args])


def make_client(
    spec: ServerSpec,
    watch: TransportWatch,
    *,
    stderr: TextIO | None,
    common: dict[str, Any],
) -> Client:
    """An unentered ``mcp.Client`` for ``spec``; ``common`` holds the callbacks and options every transport shares."""
    if isinstance(spec, StdioServer):
        params = StdioServerParameters(command=spec.command, args=spec.args, env=spec.env, cwd=spec.cwd)
        transport = stdio_client(params, errlog=stderr) if stderr is not None else stdio_client(params)
        return Client(_watched(transport, watch), **common)
    if isinstance(spec, HttpServer):
        return Client(_watched(_streamable_http(spec), watch), **common)
    if isinstance(spec, SseServer):
        sse = sse_client(
            spec.url,
            headers=spec.headers or None,
            timeout=spec.timeout,
            sse_read_timeout=spec.sse_read_timeout,
        )
        return Client(_watched(sse, watch), **common)
    assert isinstance(spec, InProcessServer)
    return Client(spec.server, **common)


@asynccontextmanager
async def _streamable_http(spec: HttpServer) -> AsyncIterator[Any]:
    # The SDK leaves a passed-in HTTP client open: it is closed here, with the transport.
    async with (
        http_client(spec) as http,
        streamable_http_client(
            spec.url, http_client=http, max_sse_event_size=spec.max_result_bytes
        ) as streams,
    ):
        yield streams
