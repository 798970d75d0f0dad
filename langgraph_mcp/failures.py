"""How a failure under a request is read: the leaf of an ``ExceptionGroup``, whether the connection is lost, and
a one-line description of it for an error message."""

from __future__ import annotations

import contextlib

import anyio
import httpx2
import mcp.types as types
from mcp import MCPError

from langgraph_mcp.errors import ServerError


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
        return exc.code == types.CONNECTION_CLOSED
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
