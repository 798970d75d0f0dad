"""One tool call's events on the graph's custom stream: progress (``mcp_progress``, also a ``tool-output-delta``
of the call's tool run under ``stream_mode="tools"``) and server logs (``mcp_log``).

The SDK calls back from the connection's task, while LangGraph's stream writer belongs to the graph task that runs
the call; so the writer is taken, with that task's context, when the call starts, and every event is written
in that context. Outside a graph run there is no writer and the events go nowhere (logs still reach the logger).

Both are let go when the call ends for this run — with a result, an error or a pause: a legacy call parked in its
question outlives the run, and the writer and context would keep the whole paused run (its loop, config and
callbacks) alive. A resumed run streams the rest of the call through its own ``CallStream``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

import mcp.types as types
from langgraph.config import get_stream_writer

from langgraph_mcp.connection.logs import LOG_SINK, LogSink, log_event

__all__ = ["CallStream"]


class CallStream:
    """The stream events of one call (``tool_call_id`` on ``server``'s ``tool``); build it in the graph task."""

    def __init__(
        self,
        tool_call_id: str,
        server: str,
        tool: str,
        *,
        output_delta: Callable[[Any], None] | None = None,
    ) -> None:
        self.where = {"tool_call_id": tool_call_id, "server": server, "tool": tool}
        self._writer = _stream_writer()
        self._output_delta = output_delta
        """The call's ``tool-output-delta`` writer (``stream_mode="tools"``; see :mod:`.runs`), if any."""
        self._context: contextvars.Context | None = contextvars.copy_context()
        self._token: contextvars.Token[LogSink | None] | None = None

    def _write(self, event: dict[str, Any]) -> None:
        if self._writer is not None and self._context is not None:
            self._context.run(self._writer, event)

    async def progress(self, value: float, total: float | None, message: str | None) -> None:
        """The progress callback for the call: a custom event, and a ``tool-output-delta`` of the call's run."""
        event = {"type": "mcp_progress", **self.where, "progress": value, "total": total, "message": message}
        self._write(event)
        if self._output_delta is not None and self._context is not None:
            self._context.run(self._output_delta, event)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self._write(log_event(params, **self.where))

    def open(self) -> CallStream:
        """The call as this run sees it: while the ``with`` block runs, the server's log messages for calls in this
        context go to the stream; when it ends, later events go nowhere and the run's writer and context are let
        go."""
        return self

    def __enter__(self) -> None:
        self._token = LOG_SINK.set(self.log if self._writer is not None else None)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            LOG_SINK.reset(self._token)
        self._writer = self._output_delta = self._context = None


def _stream_writer() -> Callable[[Any], None] | None:
    try:
        return get_stream_writer()
    except (RuntimeError, KeyError):  # no runnable context, or a config without a graph run (a direct invoke)
        return None
