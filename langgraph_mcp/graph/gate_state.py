"""The approval gate subgraph's state: ``messages`` plus the private channels its nodes hand each other.

``check`` writes what it judged, every ``review`` task adds its own decision (the channels merge dicts, so
parallel reviews never overwrite each other), ``apply`` reads them all. The private channels stay inside the
subgraph: the parent only sees ``messages`` (:func:`gate_schemas` gives the input/output schema without them).
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from langgraph_mcp.catalog import ToolDefinition
from langgraph_mcp.graph.messages import GateRecord
from langgraph_mcp.payloads import ApprovalInterrupt, Decision, DecisionBinding, RememberedDecision

__all__ = [
    "ALLOWED",
    "ANSWERED",
    "BINDINGS",
    "DECISIONS",
    "DENIED",
    "JUDGED",
    "MEMORY",
    "REVIEWS",
    "SHOWN",
    "ReviewInput",
    "gate_schemas",
]

REVIEWS = "mcp_gate_reviews"
"""Private channel: the approval payloads ``check`` produced, in the model's call order."""
DECISIONS = "mcp_gate_decisions"
"""Private channel: ``{tool_call_id: Decision}``, merged from every review task."""
DENIED = "mcp_gate_denied"
"""Private channel: ``{tool_call_id: reason}`` for calls the policy denied."""
ALLOWED = "mcp_gate_allowed"
"""Private channel: ``{tool_call_id: GateRecord}`` for calls the policy allowed."""
JUDGED = "mcp_gate_judged"
"""Private channel: ``{tool_call_id: what was judged}`` (verdict, rule, principal, tool) for the audit record."""
ANSWERED = "mcp_gate_answered"
"""Private channel: ``{tool_call_id: when the decision came}`` (the policy's clock): what the decision does to its
call is :func:`langgraph_mcp.approval.judge.effect`'s, judged at that time."""
BINDINGS = "mcp_gate_bindings"
"""Private channel: ``{tool_call_id: DecisionBinding}``, signed by the review task that took the decision."""
SHOWN = "mcp_gate_shown"
"""Private channel: ``{tool_call_id: ToolDefinition}`` of the asked calls, as the policy judged them."""
MEMORY = "mcp_gate_memory"
"""Private channel: ``{tool_call_id: RememberedDecision}``, ``thread`` decisions to keep in the message (no store)."""


def _merge(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer of the private decision channels: each task adds its own keys."""
    return {**(left or {}), **(right or {})}


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
        {
            messages_key: messages_type,
            REVIEWS: list[ApprovalInterrupt],
            DECISIONS: Annotated[dict[str, Decision], _merge],
            DENIED: Annotated[dict[str, str], _merge],
            ALLOWED: Annotated[dict[str, GateRecord], _merge],
            ANSWERED: Annotated[dict[str, float], _merge],
            JUDGED: Annotated[dict[str, dict[str, Any]], _merge],
            BINDINGS: Annotated[dict[str, DecisionBinding], _merge],
            SHOWN: Annotated[dict[str, ToolDefinition], _merge],
            MEMORY: Annotated[dict[str, RememberedDecision], _merge],
        },
        total=False,
    )
    return state_schema, io_schema
