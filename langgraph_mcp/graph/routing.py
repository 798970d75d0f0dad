"""The conditional edges around the tool node: one ``Send`` per pending tool call, and back to the model once per
turn (after every call of the last AI message has its ToolMessage)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from langgraph.config import get_config
from langgraph.constants import END
from langgraph.types import Send

from langgraph_mcp.graph.messages import calls_with_context, messages_of, pending_calls, turn_done, turn_of

__all__ = ["ToolCallRouter", "ToolCallsDone", "note_batch", "route_tool_calls"]


class ToolCallRouter:
    """Conditional-edge function: one ``Send`` per pending tool call to the tool node, else ``otherwise``.

    Each ``Send`` carries the call with its turn (LangGraph's ``ToolCallWithContext``), so the tool node checks
    it against the approval gate's records. Calls sharing an id (or without one) are sent once per id, and the
    node answers them with an error instead of running them.

    ``route_tool_calls`` is the default instance (tool node ``"tools"``, otherwise ``END``); build your own with
    ``ToolCallRouter(node="mcp_tools", otherwise="agent")``.
    """

    def __init__(self, node: str = "tools", otherwise: str = END, *, messages_key: str = "messages") -> None:
        self.node = node
        self.otherwise = otherwise
        self.messages_key = messages_key

    def __call__(self, state: Any) -> Sequence[Send] | str:
        messages = messages_of(state, self.messages_key)
        pending = pending_calls(messages)
        if not pending:
            return self.otherwise
        turn = turn_of(messages)
        calls = [*pending.runnable, *(group.calls[0] for group in pending.refused)]
        return [Send(self.node, payload) for payload in calls_with_context(calls, turn, self.messages_key)]


class ToolCallsDone:
    """Conditional edge after the tool node: go on to ``next`` once every call of the last AI message has its
    ToolMessage, so ``next`` (the model) runs exactly once per turn; until then go nowhere (the remaining calls
    are on their way: in sibling tasks of this step, or after the approval gate).

    The edge runs in each tool task and sees only that task's writes, not its siblings'; it goes on when the
    calls still unanswered in its view are all siblings of this step, as the tool node of this very task noted them
    (:func:`note_batch`; never a stamp read from the thread, see :func:`langgraph_mcp.graph.messages.turn_done`).
    Every such sibling then chooses ``next`` too, and LangGraph runs ``next`` once, in the step after all of
    them (paused ones included) have finished."""

    def __init__(self, next: str = "agent", *, messages_key: str = "messages") -> None:
        self.next = next
        self.messages_key = messages_key

    def __call__(self, state: Any) -> list[str]:
        return [self.next] if turn_done(messages_of(state, self.messages_key), _noted_batch()) else []


_BATCHES_KEPT = 4_096
_batches: OrderedDict[tuple[str, str], frozenset[str]] = OrderedDict()
"""``(thread id, task checkpoint namespace) -> the tool node's batch``: what the tool node's task noted for the
edge after it, in this process (the edge runs in the same task, right after the node)."""


def _task_key() -> tuple[str, str] | None:
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:  # outside a graph
        return None
    namespace = configurable.get("checkpoint_ns")
    return (str(configurable.get("thread_id", "")), str(namespace)) if namespace else None


def note_batch(batch: Sequence[str]) -> None:
    """Note, for the running task, the calls sent to the tool node in this step (read by :class:`ToolCallsDone`)."""
    key = _task_key()
    if key is None:
        return
    _batches[key] = frozenset(batch)
    _batches.move_to_end(key)
    while len(_batches) > _BATCHES_KEPT:
        _batches.popitem(last=False)


def _noted_batch() -> frozenset[str] | None:
    key = _task_key()
    return _batches.get(key) if key is not None else None


route_tool_calls = ToolCallRouter()
"""Route each pending tool call to the ``"tools"`` node in its own task; ``END`` when there is none."""
