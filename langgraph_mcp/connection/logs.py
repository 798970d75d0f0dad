"""A server's log messages (``notifications/message``): to the ``langgraph_mcp.server.<name>`` logger, and to the
calls in flight that listen (``McpToolNode`` streams them as ``{"type": "mcp_log", ...}`` on ``stream_mode="custom"``).

What a server sends depends on the era and the server's ``log_level`` option:

* legacy (≤ 2025-11-25): the server may send any level; with ``log_level`` set, ``logging/setLevel`` asks it for
  that level and above right after connecting;
* 2026-07-28: log delivery is a per-request opt-in; with ``log_level`` set, every request carries it in its
  ``_meta`` (``io.modelcontextprotocol/logLevel``) and the server sends messages of that request at that level and
  above; without it, nothing.

MCP names no request on a log message the client receives, so every call in flight on the connection that listens
gets it: with per-run credentials that is one user's calls only.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import warnings
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeAlias

import mcp.types as types
from mcp import Client
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

__all__ = ["LOG_SINK", "PYTHON_LEVELS", "LogSink", "ServerLogs", "log_event", "quiet_for"]

LogSink: TypeAlias = Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]

LOG_SINK: contextvars.ContextVar[LogSink | None] = contextvars.ContextVar(
    "langgraph_mcp_log_sink", default=None
)
"""Where the log messages of the call running in this context go (set by the tool node around a call)."""

PYTHON_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}
"""MCP (RFC 5424) log levels as Python logging levels."""


class ServerLogs:
    """One connection's log messages: logged, and handed to every listening call."""

    def __init__(self, server: str, *, quiet: bool = False) -> None:
        self.server = server
        self.logger = logging.getLogger(f"langgraph_mcp.server.{server}")
        self._sinks: list[LogSink] = []
        self.quiet = quiet
        """Nothing can arrive: a 2026-07-28-only server asked for no ``log_level`` sends no log messages, so a call
        has nothing to listen for (see :func:`quiet_for`)."""

    async def on_message(self, params: types.LoggingMessageNotificationParams) -> None:
        """The SDK's ``logging_callback``."""
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        self.logger.log(
            PYTHON_LEVELS.get(params.level, logging.INFO),
            "%s%s",
            f"[{params.logger}] " if params.logger else "",
            text,
            extra={"mcp_level": params.level, "mcp_logger": params.logger, "mcp_data": data},
        )
        for sink in list(self._sinks):
            try:
                await sink(params)
            except Exception:  # a listener's failure must never fail the server's connection
                self.logger.debug("a log listener failed", exc_info=True)

    @contextlib.contextmanager
    def listening(self, sink: LogSink | None) -> Iterator[None]:
        """Hand log messages to ``sink`` while the block runs (no-op for ``None``)."""
        if sink is None:
            yield
            return
        self._sinks.append(sink)
        try:
            yield
        finally:
            self._sinks.remove(sink)

    async def ask_for_level(self, client: Client, level: types.LoggingLevel | None) -> None:
        """Legacy sessions: ``logging/setLevel`` (modern requests carry the level themselves)."""
        capabilities = client.server_capabilities
        if level is None or capabilities is None or capabilities.logging is None:
            return
        if client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated in 2026-07-28, still the legacy way
                await client.set_logging_level(level)
        except Exception as exc:  # the server keeps its own level; logs still arrive, only unfiltered
            self.logger.debug("logging/setLevel %r was refused: %r", level, exc)


def quiet_for(mode: str, log_level: types.LoggingLevel | None) -> bool:
    """Whether a server configured with ``mode`` and ``log_level`` never sends a log message: 2026-07-28 only
    (``mode="modern"``) and no level asked for (the opt-in is per request; without it, nothing)."""
    return mode == "modern" and log_level is None


def log_event(params: types.LoggingMessageNotificationParams, **where: Any) -> dict[str, Any]:
    """The ``mcp_log`` custom-stream event for one message."""
    return {
        "type": "mcp_log",
        **where,
        "level": params.level,
        "logger": params.logger,
        "data": params.data,
    }
