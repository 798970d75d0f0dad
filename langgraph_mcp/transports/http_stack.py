"""The HTTP stack under streamable HTTP: pooled keep-alive connections, and one POST's failure kept to its request.

Contain a network failure of one streamable-HTTP POST to its own request, so the connection lives on.

mcp 2.3's streamable-HTTP client runs each request's POST in the transport's task group: an ``httpx2`` error out
of one POST (its pooled TCP connection closed by the server just as it was reused: ``ReadError('')``,
``RemoteProtocolError``) ends the whole transport, and every call in flight on the connection fails with it; a
response cut after it started (headers sent, then the body or event stream cut) did too, or ended its request
with an error read as the whole connection lost. Our HTTP transport answers such a POST with a JSON-RPC error
instead, which the SDK hands to that one request: an HTTP 502 when no response arrived, else the rest of the cut
body (a JSON body is passed on only once complete; an event stream event by event, so the error event is never
glued to half an event). The call fails alone, as one whose connection was lost (it may or may not have run), and
the session goes on. An event stream the server made resumable (its events carry ids) is left to the SDK's own
resumption.

The error is marked out of band: its ``data`` holds a random token this process issued for that one failure, and
:func:`is_post_failure` accepts only a token it issued. A server can send an error with the same code and key,
but not one of those tokens, so it can't pass its own error off as a network failure of ours.

Keep streamable-HTTP connections reusable and cheap to pool: drain a POST's SSE response before it is closed,
check an idle pooled connection for a server hang-up with one ``poll()``, send a request in one write.
"""

from __future__ import annotations

import datetime
import json
import re
import secrets
import select
import socket
import ssl
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable
from typing import Any, Literal

import anyio
import httpcore2
import httpx2
from mcp import MCPError
from mcp.types import CONNECTION_CLOSED

POST_FAILURE_MARK = "langgraph_mcp.post_failed"
"""The key of the ``data`` of a JSON-RPC error that stands for a POST's network failure; its value is a token
this process issued (see :func:`is_post_failure`)."""

ISSUED_TOKENS_KEPT = 4096
"""How many issued tokens are remembered (the oldest are forgotten: a failure is read moments after it is made)."""

PostFailure = Literal["lost", "unsent", "gateway"]
"""What a contained POST failure was: ``lost`` (a network error once the request may have been sent: it may or
may not have run), ``unsent`` (the connection was refused: nothing was sent), ``gateway`` (a proxy in front of the
server answered 502, 503 or 504 instead of the server: it may or may not have reached the server)."""

_issued: OrderedDict[str, PostFailure] = OrderedDict()

GATEWAY_STATUSES = frozenset({502, 503, 504})
"""HTTP statuses a gateway (a reverse proxy, a load balancer) answers for a server it could not get a response
from; an MCP server does not answer a JSON-RPC request with them."""

CONTAINED = (httpx2.ReadError, httpx2.WriteError, httpx2.RemoteProtocolError)
"""Failures of a request that may have reached the server: the call may or may not have run. Also contained: a
refused connection (``httpx2.ConnectError``: nothing was sent; the reader reconnects). Not contained: a failure to
get a pooled connection and timeouts (bounded by the call's own deadlines)."""


class ContainedPosts(httpx2.AsyncClient):
    """An ``httpx2.AsyncClient`` whose JSON-RPC request POSTs (``initialize`` aside) fail alone: a network error
    under one, or a gateway's 502/503/504 for it, is its JSON-RPC error response (marked with its
    :data:`PostFailure` kind), not an exception that ends the MCP transport nor "Server returned an error response".

    A client, not a ``transport=``: httpx2 ignores the environment's proxies (``HTTPS_PROXY``, ``NO_PROXY``) for a
    client given its own transport.
    """

    async def send(self, request: httpx2.Request, *args: Any, **kwargs: Any) -> httpx2.Response:
        try:
            response = await super().send(request, *args, **kwargs)
        except (*CONTAINED, httpx2.ConnectError) as exc:
            request_id = _contained_request_id(request)
            if request_id is None:
                raise
            if isinstance(exc, httpx2.ConnectError):
                body = _failure_body(
                    request_id, exc, "the connection was refused; nothing was sent", "unsent"
                )
            else:
                body = _failure_body(request_id, exc, "the HTTP request failed before its response arrived")
            return _failure_response(body, request)
        if (
            response.status_code in GATEWAY_STATUSES
            and (request_id := _contained_request_id(request)) is not None
        ):
            # A proxy's answer, not the server's: the request may or may not have reached the server.
            await response.aclose()
            what = f"a gateway in front of the server answered HTTP {response.status_code} {response.reason_phrase}"
            return _failure_response(_failure_body(request_id, None, what, "gateway"), request)
        if request.method == "POST" and isinstance(response.stream, httpx2.AsyncByteStream):
            kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
            plain = response.headers.get("content-encoding", "identity").lower() == "identity"
            if plain and kind in ("application/json", "text/event-stream"):
                response.stream = _ContainedBody(response.stream, request, events=kind == "text/event-stream")
        return response


_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")
_EVENT_ID = re.compile(rb"(?:^|[\r\n])id:")


class _ContainedBody(httpx2.AsyncByteStream):
    """A POST's response body whose network failure part way is the request's JSON-RPC error, not an exception:
    a JSON body is passed on once complete, an event stream one whole event at a time (a cut never leaves half an
    event to be read as a malformed message)."""

    def __init__(self, inner: httpx2.AsyncByteStream, request: httpx2.Request, *, events: bool) -> None:
        self._inner = inner
        self._chunks: AsyncIterator[bytes] = inner.__aiter__()
        self._request = request
        self._events = events

    @property
    def elapsed(self) -> Any:  # httpx2 reads a response's elapsed time from its stream
        return getattr(self._inner, "elapsed", None)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # A generator of its own over the inner iterator (see _DrainOnClose for why).
        # A bytearray: a large body arrives in many chunks, and += on bytes would copy it each time. held[:scanned]
        # holds no event end (one straddling a chunk boundary starts at most 3 bytes back).
        held = bytearray()
        scanned = 0
        resumable = False
        while True:
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                break
            except CONTAINED as exc:
                request_id = None if resumable else _contained_request_id(self._request)
                if request_id is None:
                    raise
                body = _failure_body(request_id, exc, "the HTTP response was cut off before its end")
                yield (b"event: message\ndata: " + body + b"\n\n") if self._events else body
                return
            held += chunk
            if not self._events:
                continue
            last = None
            for end in _EVENT_END.finditer(held, max(0, scanned - 3)):
                last = end.end()
            if last is not None:
                whole = bytes(held[:last])
                del held[:last]
                resumable = resumable or _EVENT_ID.search(whole) is not None
                yield whole
            scanned = len(held)
        if held:
            yield bytes(held)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _contained_request_id(request: httpx2.Request) -> Any:
    """The JSON-RPC id of the request ``request`` POSTs, or ``None`` (not a POST of a JSON-RPC request, or its
    ``initialize``: a connection that fails to start fails as before)."""
    if request.method != "POST":
        return None
    try:
        message = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None
    if not isinstance(message, dict) or "method" not in message or message.get("method") == "initialize":
        return None
    return message.get("id")


def _failure_response(body: bytes, request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(502, headers={"content-type": "application/json"}, content=body, request=request)


def _failure_body(request_id: Any, exc: Exception | None, what: str, kind: PostFailure = "lost") -> bytes:
    """The JSON-RPC error (as JSON) for ``request_id``'s failed POST, marked with a token issued for it alone."""
    token = secrets.token_urlsafe(16)
    _issued[token] = kind
    while len(_issued) > ISSUED_TOKENS_KEPT:
        _issued.popitem(last=False)
    error = {
        "code": CONNECTION_CLOSED,
        "message": what if exc is None else f"{what} ({type(exc).__name__}: {exc!s:.200})",
        "data": {POST_FAILURE_MARK: token},
    }
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()


def post_failure(error: BaseException) -> PostFailure | None:
    """What contained POST failure ``error`` is (see :class:`ContainedPosts`), or ``None`` when it is none: its
    mark must be a token this process issued. A server's error carrying the same key is the server's own."""
    if not isinstance(error, MCPError) or error.code != CONNECTION_CLOSED:
        return None
    data = error.data
    token = data.get(POST_FAILURE_MARK) if isinstance(data, dict) else None
    return _issued.get(token) if isinstance(token, str) else None


def is_post_failure(error: BaseException) -> bool:
    """Whether ``error`` is one request's contained POST failure (any kind: :func:`post_failure`)."""
    return post_failure(error) is not None


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
        self._chunks: AsyncIterator[bytes] = inner.__aiter__()

    @property
    def elapsed(self) -> datetime.timedelta | None:
        # httpx2 reads a response's elapsed time from its stream.
        elapsed: datetime.timedelta | None = getattr(self._inner, "elapsed", None)
        return elapsed

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # A generator of its own, not the inner iterator: httpx2 closes an abandoned iteration's stream (from the
        # garbage collector's finalizer task), which must not close the inner one while aclose drains it.
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


def server_hung_up(sock: socket.socket | None) -> bool:
    """Whether an idle connection's socket is readable: with no response due, that is the server's hang-up (EOF).

    What httpcore2 checks before reusing an idle connection, on a socket kept since the connection opened.
    """
    fileno = -1 if sock is None else sock.fileno()
    if fileno < 0:
        return True
    poll = select.poll()
    poll.register(fileno, select.POLLIN)
    return bool(poll.poll(0))


_BODY_LENGTH = re.compile(rb"\r\ncontent-length: *([0-9]+)\r\n", re.IGNORECASE)


def _announces_body(head: bytes) -> bool:
    """Whether ``head`` is a whole HTTP/1.1 request head that a body of ``content-length`` > 0 follows."""
    if not head.endswith(b"\r\n\r\n"):
        return False
    length = _BODY_LENGTH.search(head)
    return length is not None and int(length.group(1)) > 0


class _PoolStream(httpcore2.AsyncNetworkStream):
    """A pooled connection's stream: ``is_readable`` answered from its socket (kept once at connect), and a
    request's head sent together with its body.

    httpcore2's pool asks every idle connection ``is_readable`` on each request it assigns and each response it
    releases (to drop connections the server closed), so a burst of N calls asks ~N² times; its anyio stream
    looks the socket up anew each time (a ``getpeername()`` and a dict of attribute getters), about a fifth of a
    burst's client CPU. And httpcore2 writes a request's head and its body separately: two sends, two segments,
    and two wake-ups of the server for every POST. A head announcing a body is held until the body's first write
    (or any read, so nothing can wait on it). Everything else is the inner stream's.
    """

    def __init__(self, inner: httpcore2.AsyncNetworkStream) -> None:
        self._inner = inner
        sock = inner.get_extra_info("socket")
        self._socket: socket.socket | None = sock if hasattr(sock, "fileno") else None
        self._head: bytes | None = None
        """A request head waiting for its body, to go out in one write."""

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._head is not None:
            await self._send_head(timeout)
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self._head is not None:
            buffer, self._head = self._head + buffer, None
        elif not buffer:  # the end of a body of known length
            return
        elif _announces_body(buffer):
            self._head = buffer
            return
        await self._inner.write(buffer, timeout)

    async def _send_head(self, timeout: float | None) -> None:
        head, self._head = self._head, None
        if head is not None:
            await self._inner.write(head, timeout)

    async def aclose(self) -> None:
        self._head = None
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        return _PoolStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._socket is not None:
            return server_hung_up(self._socket)
        return self._inner.get_extra_info(info)


class PoolBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's network backend (``inner``) with leaner streams (see ``_PoolStream``): a hang-up check is one
    ``poll()``, a request goes out in one write."""

    def __init__(self, inner: httpcore2.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return _PoolStream(stream)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self._inner.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)
        return _PoolStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
