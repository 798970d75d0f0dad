"""The one notion of a *pending tool call* shared by the gate, the routers and the tool node.

A pending call is a tool call of the last ``AIMessage`` that no ``ToolMessage`` answers yet. It may run only if
its id is present and unique in that message: a ``ToolMessage`` answers exactly one ``tool_call_id``, so two calls
sharing an id (or calls without one) could never be told apart by the model, the approval gate or a checkpoint.
Such calls are *refused*, never run: each group of calls sharing an id (``""`` for a missing id) gets one error
``ToolMessage`` naming every call in it, so the model sees why and can call again with distinct ids.

The approval gate records what it judged in the ``AIMessage`` itself (``response_metadata["mcp_gate"]``, keyed by
tool call id: the server and tool it resolved the call to, and the signed decision), so the record survives
checkpoints and restarts. A record is a *claim*: anyone who can write the thread can write one. The tool node
acts on a record only through its signed binding (:mod:`langgraph_mcp.policy.binding`), and the gate and the
routers judge every call on every pass, whatever record it carries.

The calls of one turn may finish in different tasks of one step (one ``Send`` per call), and a conditional edge
after the tool node reads only its own task's view of the state: the state at the start of the step plus that
task's writes, never a sibling's. So the tool node notes, for its own task, its *batch*: the ids of every call
sent to the tool node in the same step (:func:`langgraph_mcp.graph.routing.note_batch`). A task whose batch covers
every unanswered call knows the rest are its siblings, finishing in this step (or resuming in it) - see
:func:`turn_done`. Each ``ToolMessage`` also shows its batch (``response_metadata["mcp_batch"]``), for people and
tools reading the thread; it is never read back (a client can write one).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage

from langgraph_mcp.approval.records import GateRecord, GateVerdict
from langgraph_mcp.errors import ConfigError

__all__ = [
    "AUDIT_KEY",
    "BATCH_KEY",
    "GATE_RECORD_KEY",
    "GateRecord",
    "GateVerdict",
    "PendingCalls",
    "RefusedCalls",
    "audit_context",
    "batch_of",
    "call_with_context",
    "calls_with_context",
    "gate_records",
    "gate_verdict",
    "is_send_payload",
    "last_ai_message",
    "messages_of",
    "pending_call",
    "pending_calls",
    "pending_tool_calls",
    "split_calls",
    "turn_done",
    "turn_of",
    "with_audit_context",
    "with_batch",
    "with_gate_records",
    "with_message_fields",
]

GATE_RECORD_KEY = "mcp_gate"
"""``AIMessage.response_metadata`` key of the approval gate's records (``{tool_call_id: GateRecord}``)."""
AUDIT_KEY = "mcp_audit"
"""``AIMessage.response_metadata`` key of the rule and principal each recorded call was judged with."""


BATCH_KEY = "mcp_batch"
"""``ToolMessage.response_metadata`` key: the ids of the calls sent to the tool node in the same step."""


def messages_of(state: Any, messages_key: str = "messages") -> list[AnyMessage]:
    """The message list of a graph state (dict, object with the attribute, or a plain list)."""
    if isinstance(state, list):
        return state
    messages = state.get(messages_key) if isinstance(state, dict) else getattr(state, messages_key, None)
    if messages is None:
        raise ConfigError(f"no {messages_key!r} key in the state given to the MCP tool node / router")
    return messages if type(messages) is list else list(messages)  # read, never changed: no copy of a list


def last_ai_message(messages: Sequence[AnyMessage]) -> AIMessage | None:
    return _last_ai(messages)[1]


def _last_ai(messages: Sequence[AnyMessage]) -> tuple[int, AIMessage | None]:
    """The last ``AIMessage`` and its index (``len(messages)`` if none): found from the end, so a long history
    is not walked."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            return index, message
    return len(messages), None


def _call_id(call: ToolCall) -> str:
    return call.get("id") or ""


@dataclass(frozen=True)
class RefusedCalls:
    """Calls that share one ``tool_call_id`` (``""``: calls without an id). None of them may run."""

    tool_call_id: str
    calls: tuple[ToolCall, ...]

    @property
    def reason(self) -> str:
        names = ", ".join(repr(c["name"]) for c in self.calls)
        if not self.tool_call_id:
            return (
                f"{len(self.calls)} tool call(s) ({names}) have no tool call id, so their results could not be "
                "told apart; none of them was run. Call the tools again, each with its own id."
            )
        return (
            f"{len(self.calls)} tool calls ({names}) share the tool call id {self.tool_call_id!r}, so a result "
            "(or an approval) could not be told apart; none of them was run. Call the tools again, each with "
            "its own id."
        )

    def message(self) -> ToolMessage:
        """The one error ``ToolMessage`` that answers this id for every call in the group."""
        return ToolMessage(
            content=f"Error: {self.reason}",
            name=self.calls[0]["name"],
            tool_call_id=self.tool_call_id,
            status="error",
        )


@dataclass(frozen=True)
class PendingCalls:
    """The pending calls of one turn: those that may run (unique ids) and the refused groups."""

    ai: AIMessage | None
    runnable: list[ToolCall]
    refused: list[RefusedCalls]

    def __bool__(self) -> bool:
        return bool(self.runnable or self.refused)

    def refusal_for(self, call: ToolCall) -> RefusedCalls | None:
        """The refused group ``call`` belongs to, if any."""
        for group in self.refused:
            if group.tool_call_id == _call_id(call):
                return group
        return None


def split_calls(calls: Sequence[ToolCall]) -> tuple[list[ToolCall], list[RefusedCalls]]:
    """Split calls into those with a present, unique id (model order) and the refused groups."""
    groups: dict[str, list[ToolCall]] = {}
    for call in calls:
        groups.setdefault(_call_id(call), []).append(call)
    runnable = [c for c in calls if _call_id(c) and len(groups[_call_id(c)]) == 1]
    refused = [RefusedCalls(i, tuple(g)) for i, g in groups.items() if not i or len(g) > 1]
    return runnable, refused


def _answered(messages: Sequence[AnyMessage], index: int) -> set[str]:
    """The ids the ToolMessages after ``messages[index]`` (the turn's ``AIMessage``) answer."""
    return {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}


def pending_calls(messages: Sequence[AnyMessage]) -> PendingCalls:
    """The pending calls of the last ``AIMessage``: unanswered calls split into runnable and refused."""
    index, ai = _last_ai(messages)
    if ai is None or not ai.tool_calls:
        return PendingCalls(ai, [], [])
    answered = _answered(messages, index)
    runnable, refused = split_calls(ai.tool_calls)
    return PendingCalls(
        ai,
        [c for c in runnable if _call_id(c) not in answered],
        [g for g in refused if g.tool_call_id not in answered],
    )


def pending_call(messages: Sequence[AnyMessage], call: ToolCall) -> PendingCalls:
    """What :func:`pending_calls` says about ``call``'s id alone: ``call`` if its id is pending and runnable,
    else its refused group if that is pending, else nothing.

    One pass over the turn's ids without grouping the whole turn, so each of a fan-out's ``n`` tasks does
    ``O(n)`` comparisons instead of splitting all ``n`` calls again."""
    index, ai = _last_ai(messages)
    if ai is None or not ai.tool_calls:
        return PendingCalls(ai, [], [])
    call_id = _call_id(call)
    if call_id in _answered(messages, index):
        return PendingCalls(ai, [], [])
    same = tuple(c for c in ai.tool_calls if _call_id(c) == call_id)
    if not same:
        return PendingCalls(ai, [], [])
    if not call_id or len(same) > 1:
        return PendingCalls(ai, [], [RefusedCalls(call_id, same)])
    return PendingCalls(ai, [call], [])


def pending_tool_calls(messages: Sequence[AnyMessage]) -> list[ToolCall]:
    """Every unanswered call of the last ``AIMessage`` (runnable or refused), in the model's order."""
    index, ai = _last_ai(messages)
    if ai is None or not ai.tool_calls:
        return []
    answered = _answered(messages, index)
    return [call for call in ai.tool_calls if _call_id(call) not in answered]


def turn_of(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The last ``AIMessage`` and the messages after it (what a tool call needs of the history)."""
    index, ai = _last_ai(messages)
    if ai is None:
        return []
    return list(messages[index:])


def call_with_context(
    call: ToolCall, turn: Sequence[AnyMessage], messages_key: str, batch: Sequence[ToolCall] = ()
) -> dict[str, Any]:
    """A ``Send`` payload for one call that carries its turn (LangGraph's ``ToolCallWithContext`` shape).

    The tool node reads the gate's records and the pending-call notion from ``state``; LangGraph's own
    ``ToolNode`` accepts the same shape (its state then holds this turn's messages only) and ignores ``batch``:
    every call sent to the tool node in the same step, ``call`` included.
    """
    return {
        "__type": "tool_call_with_context",
        "tool_call": call,
        "state": {messages_key: list(turn)},
        BATCH_KEY: sorted({_call_id(c) for c in batch} | {_call_id(call)}),
    }


def calls_with_context(
    calls: Sequence[ToolCall], turn: Sequence[AnyMessage], messages_key: str
) -> list[dict[str, Any]]:
    """One :func:`call_with_context` payload per call of ``calls``, all sent in one step (each one's batch is
    ``calls``): the batch is worked out once, not once per call."""
    batch = sorted({_call_id(c) for c in calls})
    return [
        {
            "__type": "tool_call_with_context",
            "tool_call": call,
            "state": {messages_key: list(turn)},
            BATCH_KEY: list(batch),
        }
        for call in calls
    ]


def batch_of(payload: Mapping[str, Any]) -> list[str]:
    """The batch a ``Send`` payload from :func:`call_with_context` carries (just its own call if none)."""
    batch = payload.get(BATCH_KEY)
    own = _call_id(cast(ToolCall, payload.get("tool_call") or {}))
    if isinstance(batch, list) and all(type(i) is str for i in batch):
        ids = set(batch)
        ids.add(own)
        return sorted(ids)
    return [own]


def with_batch(message: ToolMessage, batch: Sequence[str]) -> ToolMessage:
    """``message``, which the caller has just made, marked with its batch (see the module docstring)."""
    # Marked on the message itself, not a copy of it (a copy is ~20 us of every call), with a new metadata dict:
    # a message copied from another one (an interceptor's) shares its dict with that one.
    message.response_metadata = {**message.response_metadata, BATCH_KEY: list(batch)}
    return message


def turn_done(messages: Sequence[AnyMessage], batch: Collection[str] | None) -> bool:
    """Whether every call of the last ``AIMessage`` is answered once the current step's tasks have finished.

    True when no call is pending in this view, or when ``batch`` (the calls the tool node was sent in this step,
    as this task's own node noted them: never a stamp read from the thread, which a client can write) covers every
    call still pending: those are sibling tasks of this step (LangGraph finishes a step only once every task in it
    has, resumes included), so nothing is left for a later step.
    """
    pending = {_call_id(c) for c in pending_tool_calls(messages)}
    if not pending:
        return True
    return batch is not None and pending <= set(batch)


def gate_records(ai: AIMessage | None) -> dict[str, GateRecord] | None:
    """The gate's records in ``ai`` (``None``: no gate judged this message)."""
    if ai is None:
        return None
    records = ai.response_metadata.get(GATE_RECORD_KEY)
    return cast(dict[str, GateRecord], records) if isinstance(records, Mapping) else None


def with_message_fields(ai: AIMessage, update: dict[str, Any]) -> AIMessage:
    """A copy of ``ai`` with the same id and ``update`` applied (so ``add_messages`` replaces it in place)."""
    if type(ai) is AIMessage:  # keep every other field as it is
        return ai.model_copy(update=update)
    fields: dict[
        str, Any
    ] = {  # a chunk (or a subclass): a plain message, so stale chunk fields can't disagree
        "content": ai.content,
        "additional_kwargs": ai.additional_kwargs,
        "response_metadata": ai.response_metadata,
        "id": ai.id,
        "name": ai.name,
        "tool_calls": list(ai.tool_calls),
        "invalid_tool_calls": list(ai.invalid_tool_calls),
        "usage_metadata": ai.usage_metadata,
    }
    return AIMessage(**{**fields, **update})


def audit_context(ai: AIMessage | None) -> dict[str, dict[str, Any]]:
    """``{tool_call_id: {"rule", "principal"}}``: what the gate judged each call with, for its ``mcp_decision``
    record (informational only: never a reason to run anything)."""
    value = ai.response_metadata.get(AUDIT_KEY) if ai is not None else None
    return dict(value) if isinstance(value, dict) else {}


def with_audit_context(ai: AIMessage, context: Mapping[str, Mapping[str, Any]]) -> AIMessage:
    """A copy of ``ai`` (same id) whose audit context includes ``context``."""
    metadata = dict(ai.response_metadata)
    metadata[AUDIT_KEY] = {**audit_context(ai), **{k: dict(v) for k, v in context.items()}}
    return with_message_fields(ai, {"response_metadata": metadata})


def with_gate_records(ai: AIMessage, records: Mapping[str, GateRecord]) -> AIMessage:
    """A copy of ``ai`` (same id) whose gate records include ``records``."""
    metadata = dict(ai.response_metadata)
    metadata[GATE_RECORD_KEY] = {**(gate_records(ai) or {}), **records}
    return with_message_fields(ai, {"response_metadata": metadata})


def gate_verdict(
    record: GateRecord, audit: Mapping[str, Any] | None = None
) -> tuple[Literal["allow", "ask"], Literal["policy", "human", "remembered"]]:
    """The gate's verdict on a call it let through, and who decided: a human approved (or edited) it, a decision
    remembered from an earlier one (the audit context says so: informational, the binding is what runs it), or the
    policy allowed it."""
    if record["verdict"] == "approve" and (audit or {}).get("decided_by") == "remembered":
        return "ask", "remembered"
    if record["verdict"] in ("approve", "edit"):
        return "ask", "human"
    return "allow", "policy"


def is_send_payload(value: Any) -> bool:
    """Whether a node's input is the bare list of tool calls a ``Send`` carries (see ``route_tool_calls``)."""
    return (
        isinstance(value, list)
        and bool(value)
        and isinstance(value[-1], dict)
        and value[-1].get("type") == "tool_call"
    )
