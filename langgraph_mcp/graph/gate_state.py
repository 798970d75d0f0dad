"""The approval gate subgraph's state: ``messages`` plus one private channel, ``{tool_call_id: Review}``.

``check`` writes what it judged of each call, every ``review`` task adds its own call's decision (the channel
merges per call, so parallel reviews never overwrite each other), ``apply`` reads it all. The private channel stays
inside the subgraph: the parent only sees ``messages`` (:func:`gate_schemas` gives the input/output schema without
it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from langgraph_mcp.catalog import ToolDefinition
from langgraph_mcp.graph.messages import GateRecord
from langgraph_mcp.payloads import ApprovalInterrupt, Decision, DecisionBinding, RememberedDecision

__all__ = ["REVIEW", "Review", "ReviewInput", "gate_schemas", "of_calls", "review_field", "reviews_of"]

REVIEW = "mcp_gate_review"
"""Private channel: ``{tool_call_id: Review}``, merged per call from ``check`` and every review task."""


class Review(TypedDict, total=False):
    """What the gate knows of one call of the turn it judges."""

    judged: dict[str, Any]
    """What was judged (verdict, rule, principal, server, tool, definition hash) for the audit record."""
    payload: ApprovalInterrupt
    """The ``mcp_approval`` payload it asks with (an ``ask``)."""
    shown: ToolDefinition
    """The definition the policy judged, of an asked call."""
    denied: str
    """Why the policy denied it."""
    allowed: GateRecord
    """The record of a call the policy (or a remembered approval) lets run."""
    decision: Decision
    """The human's decision (or a remembered rejection)."""
    answered_at: float
    """When the decision came (the policy's clock): what it does is judged at that time."""
    binding: DecisionBinding
    """The signed binding of an approve or edit, signed by the review task that took it."""
    memory: RememberedDecision
    """A ``thread`` decision to keep in the message (no store)."""


def _merge(left: dict[str, Review] | None, right: dict[str, Review] | None) -> dict[str, Review]:
    """Reducer of the private channel: each write adds fields to its own calls."""
    out = dict(left or {})
    for call_id, review in (right or {}).items():
        merged: Review = {**out.get(call_id, {}), **review}
        out[call_id] = merged
    return out


def of_calls(field: str, values: Mapping[str, Any]) -> dict[str, Review]:
    """A write of one ``Review`` field for several calls: ``{tool_call_id: {field: value}}``."""
    return {call_id: {field: value} for call_id, value in values.items()}  # type: ignore[misc]


def reviews_of(state: Any) -> dict[str, Review]:
    """The channel's value (``{}`` before ``check`` wrote it)."""
    return dict(state.get(REVIEW) or {})


def review_field(state: Any, field: str) -> dict[str, Any]:
    """``{tool_call_id: value}`` of one ``Review`` field, for the calls that have it, in call order."""
    return {call_id: review[field] for call_id, review in reviews_of(state).items() if field in review}  # type: ignore[literal-required]


class ReviewInput(TypedDict):
    """What ``check`` sends each ``review`` task: the one payload it asks about."""

    payload: ApprovalInterrupt
    principal: NotRequired[str | None]
    """Whose call it is (as judged): a ``"principal"`` decision is remembered for them."""


def gate_schemas(messages_key: str) -> tuple[Any, Any]:
    """``(state schema, input/output schema)`` of a gate over ``messages_key``."""
    messages_type = Annotated[list[AnyMessage], add_messages]
    typed_dict: Any = TypedDict  # the message key is only known at run time
    io_schema = typed_dict("ApprovalGateIO", {messages_key: messages_type})
    state_schema = typed_dict(
        "ApprovalGateState",
        {messages_key: messages_type, REVIEW: Annotated[dict[str, Review], _merge]},
        total=False,
    )
    return state_schema, io_schema
