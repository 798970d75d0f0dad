"""Watching one server's transport: end of stream, stray lines, bad messages.

The SDK has no public way to tell that a stdio server's stdout ended, and it routes a line it cannot parse to the
message handler with no link to the request it answered. So every stream-backed transport is wrapped (a transport's
``open_client`` is handed :func:`watched` for its streams, see :mod:`langgraph_mcp.transports.base`): the wrapper
records end-of-stream, logs and skips lines that are not JSON-RPC at all (a banner or log line printed to stdout),
and reports a message that looks like JSON-RPC but cannot be parsed, so the requests waiting for it fail at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any, cast

import anyio
import pydantic
from mcp.client import Transport
from mcp.shared.message import SessionMessage


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


def watched(transport: AbstractAsyncContextManager[Any], watch: TransportWatch) -> Transport:
    """``transport``'s stream pair, reported to ``watch``."""

    @asynccontextmanager
    async def wrapped() -> AsyncIterator[Any]:
        async with transport as (read, write):
            yield _WatchedReadStream(read, watch), write

    return cast(Transport, wrapped())
