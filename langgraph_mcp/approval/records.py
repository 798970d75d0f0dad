"""What the approval gate writes into an ``AIMessage`` about each call it judged (a *claim*: anyone who can write
the thread can write one; only its signed binding ever counts, see :mod:`langgraph_mcp.approval.judge`)."""

from __future__ import annotations

from typing import Literal, NotRequired, TypeAlias, TypedDict

from langgraph_mcp.catalog import ToolDefinition
from langgraph_mcp.payloads import DecisionBinding, RememberedDecision

__all__ = ["GateRecord", "GateVerdict"]

GateVerdict: TypeAlias = Literal["allow", "approve", "edit"]


class GateRecord(TypedDict):
    """What the approval gate let through for one tool call: the tool node runs exactly this, or nothing."""

    server: str | None
    """The MCP server the call was resolved to; ``None`` when it was judged as a call to no MCP server."""
    tool: str | None
    """The server's own tool name; ``None`` with ``server``."""
    verdict: GateVerdict
    """Why it may run: the policy allowed it, or a human approved (or edited) it."""
    binding: NotRequired[DecisionBinding]
    """The signed decision the tool node checks before it sends the call (see
    :mod:`langgraph_mcp.policy.binding`); without one the record proves nothing."""
    remembered: NotRequired[RememberedDecision]
    """The remembered decision that let it through (a claim like the rest: the tool node checks its seal)."""
    definition: NotRequired[ToolDefinition]
    """The tool's definition as judged, so a re-ask after it changed can say what changed."""
