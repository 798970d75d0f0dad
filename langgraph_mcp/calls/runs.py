"""One MCP call as a LangChain tool run: ``on_tool_start``, then ``on_tool_end`` or ``on_tool_error``, in the
callback tree of the run that makes it — what LangSmith traces, ``astream_events`` and ``stream_mode="tools"`` read.

The conventions are ``langchain_core.tools.BaseTool.arun``'s: the run's config gives the callbacks, tags and
metadata; ``serialized`` is ``{"name", "description"}``; ``inputs`` are the arguments sent and ``tool_call_id`` is
passed along (``stream_mode="tools"`` keys its events by it); an exception, a pause (``GraphInterrupt``) included,
ends the run with ``on_tool_error`` and a result with ``on_tool_end``. When nobody listens (no callback handler in
the config) no run is made at all.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, BaseCallbackManager
from langchain_core.callbacks.manager import AsyncCallbackManager
from langchain_core.messages import ToolMessage

from langgraph_mcp._compat import tool_output_writer

__all__ = ["ToolRun", "judged_as", "judgement", "listening", "start_tool_run"]

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
