"""Who sees one call while it runs: callbacks (its LangChain tool run), the graph's stream (progress and server
logs) and OpenTelemetry (its span) — each made only when someone is there to see it.

**The tool run.** ``on_tool_start``, then ``on_tool_end`` or ``on_tool_error``, in the callback tree of the run that
makes the call — what LangSmith traces, ``astream_events`` and ``stream_mode="tools"`` read. The conventions are
``langchain_core.tools.BaseTool.arun``'s: the run's config gives the callbacks, tags and metadata; ``serialized`` is
``{"name", "description"}``; ``inputs`` are the arguments sent and ``tool_call_id`` is passed along
(``stream_mode="tools"`` keys its events by it); an exception, a pause (``GraphInterrupt``) included, ends the run
with ``on_tool_error`` and a result with ``on_tool_end``. When nobody listens (no callback handler in the config) no
run is made at all.

**The stream.** Progress (``mcp_progress``, also a ``tool-output-delta`` of the call's tool run under
``stream_mode="tools"``) and server logs (``mcp_log``) on the graph's custom stream. The SDK calls back from the
connection's task, while LangGraph's stream writer belongs to the graph task that runs the call; so the writer is
taken, with that task's context, when the call starts, and every event is written in that context. Outside a graph
run there is no writer and the events go nowhere (logs still reach the logger). Both are let go when the call ends
for this run — with a result, an error or a pause: a legacy call parked in its question outlives the run, and the
writer and context would keep the whole paused run (its loop, config and callbacks) alive. A resumed run streams the
rest of the call through its own ``CallStream``.

**The span.** One OpenTelemetry span per call, only while a tracer provider is set (:func:`call_span`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import mcp.types as types
from langchain_core.callbacks import AsyncCallbackManagerForToolRun, BaseCallbackManager
from langchain_core.callbacks.manager import AsyncCallbackManager
from langchain_core.messages import ToolMessage
from langgraph.config import get_stream_writer
from opentelemetry import trace

from langgraph_mcp._compat import tool_output_writer
from langgraph_mcp.connection.connection import era_of
from langgraph_mcp.connection.logs import LOG_SINK, LogSink, log_event

__all__ = [
    "CallStream",
    "ToolRun",
    "call_span",
    "judged_as",
    "judgement",
    "listening",
    "server_metadata",
    "start_tool_run",
]

_TRACER = trace.get_tracer("langgraph_mcp")

# ------------------------------------------------------------------------------------------------ the tool run

_JUDGED: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "langgraph_mcp_judged", default=None
)


@contextlib.contextmanager
def judged_as(metadata: Mapping[str, Any]) -> Iterator[None]:
    """While the block runs the one call it runs carries ``metadata`` (how it was judged) on its tool run: set by
    ``McpApprovalMiddleware`` around the call it let through (informational only: never a reason to run)."""
    token = _JUDGED.set(metadata)
    try:
        yield
    finally:
        _JUDGED.reset(token)


def judgement() -> Mapping[str, Any] | None:
    """The metadata :func:`judged_as` set for the call running in this context, if any."""
    return _JUDGED.get()


def server_metadata(transport: str, protocol_version: str | None) -> dict[str, Any]:
    """What a call's tool run says about its server: its transport and, once connected in this loop, the negotiated
    protocol version and its era."""
    return {
        "mcp_transport": transport,
        "mcp_era": era_of(protocol_version),
        "mcp_protocol_version": protocol_version,
    }


def listening(config: Mapping[str, Any] | None) -> bool:
    """Whether any callback handler would see a run made with ``config`` (cheap: the no-listener path)."""
    callbacks = config.get("callbacks") if config else None
    if callbacks is None:
        return False
    if isinstance(callbacks, BaseCallbackManager):
        return bool(callbacks.handlers)
    return bool(callbacks)


class ToolRun:
    """An open tool run, ended by the first :meth:`ended` or :meth:`failed` (later ones do nothing)."""

    def __init__(self, manager: AsyncCallbackManagerForToolRun) -> None:
        self._manager = manager
        self._open = True
        self.output_delta: Callable[[Any], None] | None = tool_output_writer()
        """The run's ``tool-output-delta`` writer when the graph streams ``"tools"`` (else ``None``)."""

    @property
    def run_id(self) -> str:
        return str(self._manager.run_id)

    async def ended(self, message: ToolMessage) -> None:
        if not self._open:
            return
        self._open, self.output_delta = False, None
        await self._manager.on_tool_end(message, name=message.name)

    async def failed(self, error: BaseException, *, tool_call_id: str) -> None:
        if not self._open:
            return
        self._open, self.output_delta = False, None
        await self._manager.on_tool_error(error, tool_call_id=tool_call_id)


async def start_tool_run(
    config: Mapping[str, Any] | None,
    *,
    name: str,
    description: str,
    inputs: dict[str, Any],
    tool_call_id: str,
    metadata: dict[str, Any],
) -> ToolRun | None:
    """Start the tool run of one call under ``config``'s run, or ``None`` when nobody listens."""
    if config is None or not listening(config):
        return None
    manager = AsyncCallbackManager.configure(
        config.get("callbacks"),
        None,
        False,
        config.get("tags"),
        None,
        config.get("metadata"),
        metadata,
    )
    run_manager = await manager.on_tool_start(
        {"name": name, "description": description},
        str(inputs),
        name=name,
        inputs=inputs,
        tool_call_id=tool_call_id,
    )
    return ToolRun(run_manager)


# ------------------------------------------------------------------------------------------------ the stream


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


# ------------------------------------------------------------------------------------------------ the span


def call_span(published_name: str) -> Any:
    """The OpenTelemetry span of one tool call (current while it runs, so the SDK's ``tools/call`` span is its
    child and the W3C ``traceparent`` the SDK puts in the request's ``_meta`` joins the server to this trace).

    Only when tracing is on: until ``trace.set_tracer_provider`` (or ``OTEL_PYTHON_TRACER_PROVIDER``) gives a real
    provider, the call has no span of its own (the one OpenTelemetry would make records nothing) and a caller's
    current span, if any, is what the SDK propagates; checked per call, so a provider set later is honoured."""
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return _NO_SPAN
    return _TRACER.start_as_current_span(
        f"mcp tool call {published_name}", record_exception=False, set_status_on_exception=False
    )


_NO_SPAN = contextlib.nullcontext(trace.INVALID_SPAN)
"""What :func:`call_span` gives while tracing is off: a span that records nothing (reusable: it holds no state)."""


_NO_SPAN = contextlib.nullcontext(trace.INVALID_SPAN)
"""What :func:`call_span` gives while tracing is off: a span that records nothing (reusable: it holds no state)."""
