"""Contain a network failure of one streamable-HTTP POST to its own request, so the connection lives on.

mcp 2.3's streamable-HTTP client runs each request's POST in the transport's task group: an ``httpx2`` error out
of one POST (its pooled TCP connection closed by the server just as it was reused: ``ReadError('')``,
``RemoteProtocolError``) ends the whole transport, and every call in flight on the connection fails with it. Our
HTTP transport answers such a POST with a JSON-RPC error instead (an HTTP 502 whose body the SDK hands to that one
request), marked so :func:`is_post_failure` tells it from a server's error: the call fails alone, as one whose
connection was lost (it may or may not have run), and the session goes on.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
from mcp import MCPError
from mcp.types import CONNECTION_CLOSED

POST_FAILURE_MARK = "langgraph_mcp.post_failed"
"""The key of the ``data`` of a JSON-RPC error that stands for a POST's network failure (never a server's)."""

CONTAINED = (httpx2.ReadError, httpx2.WriteError, httpx2.RemoteProtocolError)
"""Failures of a request that may have reached the server: the call may or may not have run. Not contained: a
failure to connect or to get a pooled connection (the server is unreachable: the connection is reconnected, as
before) and timeouts (bounded by the call's own deadlines)."""


class ContainedPosts(httpx2.AsyncClient):
    """An ``httpx2.AsyncClient`` whose JSON-RPC request POSTs (``initialize`` aside) fail alone: a network error
    under one is its JSON-RPC error response (an HTTP 502), not an exception that ends the MCP transport.

    A client, not a ``transport=``: httpx2 ignores the environment's proxies (``HTTPS_PROXY``, ``NO_PROXY``) for a
    client given its own transport.
    """

    async def send(self, request: httpx2.Request, *args: Any, **kwargs: Any) -> httpx2.Response:
        try:
            return await super().send(request, *args, **kwargs)
        except CONTAINED as exc:
            request_id = _contained_request_id(request)
            if request_id is None:
                raise
            return _failure_response(request, request_id, exc)


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


def _failure_response(request: httpx2.Request, request_id: Any, exc: Exception) -> httpx2.Response:
    error = {
        "code": CONNECTION_CLOSED,
        "message": f"the HTTP request failed before its response arrived ({type(exc).__name__}: {exc!s:.200})",
        "data": {POST_FAILURE_MARK: type(exc).__name__},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
    return httpx2.Response(502, headers={"content-type": "application/json"}, content=body, request=request)


def is_post_failure(error: BaseException) -> bool:
    """Whether ``error`` is one request's contained POST failure (see :class:`ContainedPosts`)."""
    if not isinstance(error, MCPError) or error.code != CONNECTION_CLOSED:
        return False
    data = error.data
    return isinstance(data, dict) and POST_FAILURE_MARK in data
