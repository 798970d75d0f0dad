"""Keep streamable-HTTP connections reusable: read a POST's SSE response to its end before it is closed."""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator

import anyio
import httpx2

DRAIN_SECONDS = 1.0
"""How long closing a POST's event stream waits for the server to end it (a conforming server ends it right after
the JSON-RPC response: ~0.2 ms on loopback). Past this the connection is dropped, as before."""

DRAIN_MAX_BYTES = 64 * 1024
"""How much of an unfinished stream closing it reads before dropping the connection instead."""


class _DrainOnClose(httpx2.AsyncByteStream):
    """A response body that, when closed before its end, first reads the rest (bounded) so the connection can be
    reused; it reads from one iterator, so bytes the consumer left unread are the ones drained."""

    def __init__(self, inner: httpx2.AsyncByteStream) -> None:
        self._inner = inner
        self._chunks = inner.__aiter__()

    @property
    def elapsed(self) -> datetime.timedelta | None:
        # httpx2 reads a response's elapsed time from its stream.
        elapsed: datetime.timedelta | None = getattr(self._inner, "elapsed", None)
        return elapsed

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                return
            yield chunk

    async def aclose(self) -> None:
        try:
            with anyio.move_on_after(DRAIN_SECONDS):
                drained = 0
                while drained <= DRAIN_MAX_BYTES:
                    drained += len(await self._chunks.__anext__())
        except StopAsyncIteration:
            pass  # the end of the body: the connection goes back to the pool
        except httpx2.TransportError:
            pass  # the read failed, so the connection is dropped: what closing unread did anyway
        finally:
            await self._inner.aclose()


async def drain_event_streams_on_close(response: httpx2.Response) -> None:
    """An ``httpx2`` response hook: a POST's ``text/event-stream`` body is drained when closed.

    mcp's streamable-HTTP client closes each POST's SSE response as soon as the JSON-RPC response event arrives
    (mcp 2.3 ``_handle_sse_response``), a moment before the server's end of the chunked body. httpcore then cannot
    reuse the connection, so every call opened a new TCP connection. The standalone GET stream is left alone: it
    only ends when it is closed.
    """
    if (
        response.request.method == "POST"
        and response.headers.get("content-type", "").startswith("text/event-stream")
        and isinstance(response.stream, httpx2.AsyncByteStream)
    ):
        response.stream = _DrainOnClose(response.stream)
