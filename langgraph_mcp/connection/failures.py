"""Reading what went wrong with a request: connection loss, request failures, and whether a call may have run.

How a failure under a request is read: the leaf of an ``ExceptionGroup``, whether the connection is lost, and
a one-line description of it for an error message.

What the caller of a request sees for what went wrong under it: one of our errors, never a bare cancellation.

A failure that means the transport is gone also marks the connection dead, so the next request reconnects.
"""

from __future__ import annotations

import contextlib
from typing import Protocol

import anyio
import httpx2
import mcp.types as types
from mcp import Client, MCPError

from langgraph_mcp import _compat
from langgraph_mcp.config import ServerSpec
from langgraph_mcp.connection.oauth import RefreshFirst
from langgraph_mcp.errors import (
    AuthorizationRequiredError,
    CallInterruptedError,
    CallNotSentError,
    InvalidResponseError,
    ResultTooLargeError,
    ServerConnectionError,
    ServerError,
)
from langgraph_mcp.transports.http_stack import PostFailure, post_failure


def flatten_exception(exc: BaseException) -> BaseException:
    """The first leaf of a (nested) ``ExceptionGroup``, or ``exc`` itself."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def is_connection_lost(exc: BaseException) -> bool:
    exc = flatten_exception(exc)
    if isinstance(exc, TimeoutError):  # an OSError subclass, but a slow server is not a lost connection
        return False
    if isinstance(exc, MCPError):
        # The SDK's own "connection closed" errors carry no data; one that does is the server's own answer (-32000
        # is also JSON-RPC's generic server error), even one that copies our contained POST failure's mark.
        return exc.code == types.CONNECTION_CLOSED and exc.data is None
    return isinstance(
        exc,
        anyio.ClosedResourceError
        | anyio.BrokenResourceError
        | anyio.EndOfStream
        | httpx2.TransportError
        | OSError,
    )


def unwrap_for_caller(exc: BaseException) -> BaseException:
    """What a caller should see for ``exc``: its first leaf, unless that leaf is a cancellation."""
    leaf = flatten_exception(exc)
    return leaf if isinstance(leaf, Exception) else exc


def describe_error(error: BaseException | None) -> str:
    """One line for ``error``: our own errors' detail, the SDK's code and message, else type and text."""
    if error is None:
        return "unknown error"
    if isinstance(error, ServerError):
        return error.detail
    if isinstance(error, FileNotFoundError):
        return f"command not found ({error.filename or error})"
    if isinstance(error, MCPError):
        return f"MCP error {error.code}: {error.message}"
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"


def first_error(error: Exception) -> str:
    """The first problem a parse failure names (pydantic's ``errors()``), short."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            first = errors()[0]
            return str(first.get("msg", error))[:300]
    return f"{type(error).__name__}: {error}"[:300]


# How long a failed request waits for its dead connection's owner to record why it ended (for the message).
OWNER_REPORT_SECONDS = 2.0


class OwnerState(Protocol):
    """What a :class:`FailureReader` reads and marks on the connection's owner task (``ClientOwner``)."""

    @property
    def last_error(self) -> BaseException | None: ...

    @property
    def is_legacy(self) -> bool: ...

    def note_error(self, error: BaseException) -> None: ...

    def mark_dead(self, error: BaseException, client: Client | None = None) -> None: ...

    @property
    def served(self) -> bool: ...

    def forgot_session(self, error: BaseException, client: Client | None = None) -> None: ...

    async def wait_stopped(self, timeout: float = ...) -> None: ...


class FailureReader:
    """Reads failures under one connection's requests into the errors their callers see."""

    def __init__(self, name: str, spec: ServerSpec, owner: OwnerState) -> None:
        self.name = name
        self.spec = spec
        self.owner = owner

    def read(self, exc: BaseException, client: Client, *, what: str, tool: str | None) -> BaseException:
        """The error for ``exc`` raised under ``what`` (``tool``: the call's tool) on ``client``."""
        error = unwrap_for_caller(exc)
        if (refused := self.token_refused(error, client, tool)) is not None:
            return refused
        if isinstance(error, ServerError):
            return error
        if (unreadable := self.unreadable_response(error, tool)) is not None:
            return unreadable
        if (gone := self.session_gone(error, client, tool)) is not None:
            return gone
        if (kind := post_failure(error)) is not None:
            return self.post_failed(kind, what, error, client, tool=tool)
        if is_connection_lost(error):
            self.owner.mark_dead(error, client)
            return self.lost(what, error, tool=tool)
        return error

    async def transport_failed(
        self, what: str, client: Client | None, *, tool: str | None = None
    ) -> ServerError:
        """The error for a request cancelled by the connection's own task group: the transport failed under it
        (e.g. an HTTP response cut mid-body). The reason is what the owner records as the client exits."""
        if client is not None:
            self.owner.mark_dead(ServerConnectionError(self.name, "the transport failed"), client)
        await self.owner.wait_stopped(OWNER_REPORT_SECONDS)
        reason = self.owner.last_error
        if (refused := self.token_refused(reason, client, tool)) is not None:
            return refused
        return self.lost(what, reason, tool=tool)

    def post_failed(
        self, kind: PostFailure, what: str, error: BaseException, client: Client, *, tool: str | None
    ) -> ServerError:
        """One request's contained POST failure (:class:`~langgraph_mcp.transports.http_stack.ContainedPosts`).

        A network error under it: only this request's HTTP connection failed, the session and its other calls live
        on. A refused connection: nothing was sent (any tool may be sent again), and the server is unreachable, so
        the connection is started again. A gateway's 502/503/504: the server behind the proxy may be down; a legacy
        session is started again, so a sticky proxy places the new session on a live replica."""
        if kind == "unsent":
            self.owner.mark_dead(error, client)
            done = f"the call to {tool!r} was not run" if tool is not None else "the request was not run"
            unsent = CallNotSentError(self.name, f"{describe_error(error)}; {done}", tool=tool)
            unsent.__cause__ = error
            return unsent
        if kind == "gateway":
            if self.owner.is_legacy:
                self.owner.mark_dead(error, client)
            return self.lost(what, error, tool=tool, how="no answer from the server through its gateway")
        return self.lost(what, error, tool=tool)

    def lost(
        self, what: str, cause: BaseException | None, *, tool: str | None, how: str = "connection lost"
    ) -> ServerError:
        """The error for a request whose connection failed under it (a call: it may or may not have run)."""
        detail = f"{how} during {what} ({describe_error(cause)})"
        if tool is not None:
            error: ServerError = CallInterruptedError(
                self.name, detail + "; the call may or may not have run on the server", tool=tool
            )
        else:
            error = ServerConnectionError(self.name, detail)
        error.__cause__ = cause
        return error

    def unreadable_response(self, error: BaseException, tool: str | None) -> ServerError | None:
        """A response the transport could not take: larger than ``max_result_bytes``, or not JSON-RPC at all."""
        if _compat.is_sse_event_too_large(error):
            return ResultTooLargeError(self.name, None, self.spec.max_result_bytes, tool=tool)
        if _compat.is_unparseable_http_response(error):
            detail = f"the server sent an invalid response: {error}"[:400]
            return InvalidResponseError(self.name, detail, tool=tool)
        return None

    def token_refused(
        self, error: BaseException | None, client: Client | None, tool: str | None
    ) -> ServerError | None:
        """A 401 on a live connection (the server ended the access token early): the server ran nothing. The
        connection is started again, refreshing the token first (the request is then sent again, any tool), or,
        with no refresh possible, asking the person to sign in (``AuthorizationRequiredError``)."""
        if not isinstance(error, AuthorizationRequiredError | RefreshFirst):
            return None
        self.owner.mark_dead(error, client)
        if isinstance(error, AuthorizationRequiredError):
            return error
        what = f"the call to {tool!r} was not run" if tool is not None else "the request was not run"
        return CallNotSentError(
            self.name, f"the server refused the access token; {what}; the token is refreshed first", tool=tool
        )

    def session_gone(self, error: BaseException, client: Client, tool: str | None) -> CallNotSentError | None:
        """A legacy HTTP 404 for our session (the server restarted or expired it): re-initialize on the next
        request. The server refused the request before running it, so the caller may send it again (any tool)."""
        if not self.spec.session_gone(error):
            return None
        what = f"the call to {tool!r} was not run" if tool is not None else "the request was not run"
        if self.owner.served:
            why = "the server no longer knows this session (restarted?)"
        else:
            why = (
                "the server forgot this session before answering any call on it: it runs as several replicas "
                "behind a load balancer or proxy without session affinity, which sent the session's requests to "
                "a replica that did not start it (a legacy 2025-11-25 session lives in one server process). Pin "
                "each session to the replica that issued it by its mcp-session-id header (e.g. HAProxy: stick "
                "store-response res.hdr(mcp-session-id) and stick match req.hdr(mcp-session-id)), or run one "
                "replica. (A server restart right after the session started reads the same.)"
            )
        lost = CallNotSentError(self.name, f"{why}; {what}; the session is re-initialized", tool=tool)
        lost.__cause__ = error
        self.owner.forgot_session(lost, client)
        return lost

    def invalid_message(self, error: Exception) -> InvalidResponseError:
        """The error for a message the SDK could not parse (and the connection's last error from now on)."""
        failure = InvalidResponseError(
            self.name,
            f"the server sent an invalid response: a message the MCP SDK cannot parse ({first_error(error)})",
        )
        failure.__cause__ = error
        self.owner.note_error(failure)
        return failure
