"""Tool-call interceptors: async functions wrapped around every MCP tool call, composed onion-style.

The shape users of ``langchain-mcp-adapters`` know: ``async def interceptor(request, handler) -> result``. The
first interceptor given to ``McpServers(..., interceptors=[...])`` is the outermost. An interceptor may change the
request (``request.override(args=..., headers=...)``) and call ``handler``, call it several times (retry), or not
at all and return its own result (short-circuit): a ``CallToolResult`` or a ``ToolMessage``.

They wrap the whole call as the driver runs it, so on a resume (fast or durable path) they run again and see the
call that is really sent. A LangGraph interrupt raised inside the call (a server asking a question) passes through
them untouched: once the handler has raised one, whatever the interceptor does with it, the interrupt is what
leaves the composition, and a second ``handler(...)`` call raises it again instead of re-sending the call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import mcp.types as types
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime, get_runtime

from langgraph_mcp.calls.asker import InterruptAsker
from langgraph_mcp.calls.call import CallTarget
from langgraph_mcp.calls.driver import run_call
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.connection.connection import ProgressCallback
from langgraph_mcp.credentials import current_config
from langgraph_mcp.errors import InterceptorError

__all__ = [
    "McpToolCallRequest",
    "ToolCallHandler",
    "ToolCallInterceptor",
    "ToolCallOutcome",
    "as_call_result",
    "call_intercepted",
    "compose",
    "current_runtime",
]

_UNSET: Any = object()


@dataclass(frozen=True)
class McpToolCallRequest:
    """One MCP tool call as an interceptor sees it. Immutable: :meth:`override` returns a changed copy."""

    server: str
    """The configured server name."""
    name: str
    """The server's own tool name (what goes on the wire)."""
    published_name: str
    """The name the model called (``<server>_<tool>`` by default)."""
    args: dict[str, Any]
    """The arguments that will be sent."""
    headers: dict[str, str]
    """The HTTP headers the call will be sent with (this run's resolved headers); ignored for stdio and
    in-process servers. Calls with different headers use different connections (see "Serving many users")."""
    tool_call_id: str = ""
    """The id of the model's tool call (empty for a plain ``McpServers.call_tool``)."""
    config: RunnableConfig | None = None
    """The run's config (``configurable`` holds per-run values), or ``None`` outside a graph."""
    runtime: Runtime[Any] | None = None
    """The run's LangGraph ``Runtime`` (context, store, stream writer), or ``None`` outside a graph."""
    tool: McpTool | None = field(default=None, repr=False, compare=False)
    """The catalog entry (schemas, annotations)."""

    def override(
        self, *, args: dict[str, Any] = _UNSET, headers: dict[str, str] = _UNSET
    ) -> McpToolCallRequest:
        """A copy with new ``args`` and/or ``headers`` (each replaces the old value as a whole)."""
        changes: dict[str, Any] = {}
        if args is not _UNSET:
            changes["args"] = dict(args)
        if headers is not _UNSET:
            changes["headers"] = {str(k): str(v) for k, v in headers.items()}
        return dataclasses.replace(self, **changes)


ToolCallOutcome: TypeAlias = types.CallToolResult | ToolMessage
ToolCallHandler: TypeAlias = Callable[[McpToolCallRequest], Awaitable[ToolCallOutcome]]
ToolCallInterceptor: TypeAlias = Callable[[McpToolCallRequest, ToolCallHandler], Awaitable[ToolCallOutcome]]


def compose(interceptors: Sequence[ToolCallInterceptor], handler: ToolCallHandler) -> ToolCallHandler:
    """``handler`` wrapped by ``interceptors``, the first outermost. Interrupts always come out unchanged."""
    if not interceptors:
        return handler

    async def run(request: McpToolCallRequest) -> ToolCallOutcome:
        paused: list[GraphBubbleUp] = []
        answered: list[bool] = []  # the handler returned a result (the call ran) at least once

        async def innermost(req: McpToolCallRequest) -> ToolCallOutcome:
            if paused:
                raise paused[0]
            try:
                outcome = await handler(req)
            except GraphBubbleUp as exc:
                paused.append(exc)
                raise
            answered.append(True)
            return outcome

        def layer(interceptor: ToolCallInterceptor, inner: ToolCallHandler) -> ToolCallHandler:
            async def wrapped(req: McpToolCallRequest) -> ToolCallOutcome:
                if paused:
                    raise paused[0]
                try:
                    outcome = await interceptor(req, inner)
                except GraphBubbleUp:
                    raise
                except Exception:
                    if paused:
                        raise paused[0] from None
                    raise
                if paused:
                    raise paused[0]
                if not isinstance(outcome, types.CallToolResult | ToolMessage):
                    raise _wrong_outcome(interceptor, outcome, req, ran=bool(answered))
                return outcome

            return wrapped

        chain: ToolCallHandler = innermost
        for interceptor in reversed(interceptors):
            chain = layer(interceptor, chain)
        return await chain(request)

    return run


def _wrong_outcome(
    interceptor: ToolCallInterceptor, outcome: object, request: McpToolCallRequest, *, ran: bool
) -> InterceptorError:
    name = getattr(interceptor, "__qualname__", None) or repr(interceptor)
    got = "None" if outcome is None else f"a {type(outcome).__name__} ({outcome!r:.80})"
    ran_text = (
        "the tool ran on the server, but its result is lost"
        if ran
        else "the tool was not run (the interceptor did not get a result from its handler)"
    )
    return InterceptorError(
        f"interceptor {name!r} returned {got} for the call to {request.published_name!r}, not a CallToolResult "
        f"or a ToolMessage; {ran_text}. Return the handler's result, or a CallToolResult or ToolMessage of its own",
        tool_ran=ran,
    )


def current_runtime() -> Runtime[Any] | None:
    """The running graph's ``Runtime``, or ``None`` outside a graph run."""
    try:
        return get_runtime()
    except (RuntimeError, KeyError):
        return None


async def call_intercepted(
    interceptors: Sequence[ToolCallInterceptor],
    target: CallTarget,
    arguments: dict[str, Any],
    *,
    tool_call_id: str,
    asker: InterruptAsker | None,
    progress: ProgressCallback | None = None,
    approved: bool = False,
) -> ToolCallOutcome:
    """Run one tool call through ``interceptors`` (the innermost handler is the driver's ``run_call``); a request
    an interceptor sends with other headers goes to the target for those headers (another connection).
    ``approved``: a human approved the call (see :func:`~.driver.may_send_again`)."""
    if not interceptors:
        return await run_call(
            target, arguments, tool_call_id=tool_call_id, asker=asker, progress=progress, approved=approved
        )
    tool = target.tool
    request = McpToolCallRequest(
        server=tool.server,
        name=tool.name,
        published_name=tool.published_name,
        args=dict(arguments),
        headers=target.headers,
        tool_call_id=tool_call_id,
        config=current_config(),
        runtime=current_runtime(),
        tool=tool,
    )

    async def send(req: McpToolCallRequest) -> ToolCallOutcome:
        return await run_call(
            target.for_headers(req.headers),
            req.args,
            tool_call_id=tool_call_id,
            asker=asker,
            progress=progress,
            approved=approved,
        )

    return await compose(interceptors, send)(request)


def as_call_result(outcome: ToolCallOutcome) -> types.CallToolResult:
    """An interceptor's ``ToolMessage`` as a ``CallToolResult`` (text of its content; error status kept)."""
    if isinstance(outcome, types.CallToolResult):
        return outcome
    content = outcome.content
    if isinstance(content, str):
        texts = [content]
    else:
        texts = [
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str) or block.get("type") == "text"
        ]
    return types.CallToolResult(
        content=[types.TextContent(text=text) for text in texts if text],
        is_error=outcome.status == "error",
    )
