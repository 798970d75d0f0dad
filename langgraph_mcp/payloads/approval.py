"""A tool call waiting for a human's decision (``mcp_approval``), the decisions, and the binding of one to a call."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from langgraph_mcp.payloads.base import DecisionType, ToolQuestion

APPROVAL_INTERRUPT_TYPE: Literal["mcp_approval"] = "mcp_approval"
"""``type`` of the payload raised when the approval gate asks a human about a tool call."""

RememberScope: TypeAlias = Literal["thread", "principal"]
"""How far a remembered decision reaches: later calls on this thread, or every thread of this principal."""
REMEMBER_SCOPES: tuple[RememberScope, ...] = ("thread", "principal")


class DeclaredHints(TypedDict, total=False):
    """Tool annotations exactly as the server declared them (absent keys were not declared)."""

    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class EffectiveHints(TypedDict):
    """Tool annotations with the MCP spec defaults filled in for what the server did not declare."""

    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class ApprovalHints(TypedDict):
    effective: EffectiveHints
    declared: DeclaredHints


class ApprovalInterrupt(ToolQuestion):
    """Payload of an ``mcp_approval`` interrupt: one tool call waiting for a human decision (cards: one item)."""

    type: Literal["mcp_approval"]
    server: str | None
    """``None`` for a tool call that does not go to an MCP server."""
    arguments: dict[str, Any]
    hints: ApprovalHints | None
    reason: str
    """Why the call needs approval, e.g. ``"destructiveHint (spec default)"``."""
    allowed_decisions: list[DecisionType]
    description: str
    rule: NotRequired[str]
    """The id of the policy rule that asks (a ``[[rules]]`` id, ``tools:<pattern>``, ``hints:destructive``, ...;
    absent in payloads saved by older versions)."""
    expires_at: NotRequired[float]
    """Seconds since the epoch: an approval given after this counts as a rejection (the rule's
    ``expires_after``); absent when the approval does not expire."""
    input_schema: NotRequired[dict[str, Any]]
    """The tool's inputSchema, so a UI (and ``resume_command``) can check edited arguments."""
    definition_hash: NotRequired[str]
    """``langgraph_mcp.catalog.definition_hash`` of the tool as shown: the decision is bound to it."""
    changed: NotRequired[list[DefinitionChange]]
    """Asked again because the tool's definition changed since a decision about this call: what changed."""
    remember: NotRequired[list[RememberScope]]
    """The ``remember`` scopes an ``approve`` or ``reject`` may carry for this call (absent or empty: none; a locked
    rule, a rule with ``remember = "off"`` and a call to no MCP server offer none)."""
    remember_covers: NotRequired[Literal["any_args", "same_args"]]
    """What a remembered answer covers: later calls with any arguments, or only with these (the rule's
    ``remember``); present with ``remember``."""
    remember_unavailable: NotRequired[dict[str, str]]
    """Scopes not offered here and why (e.g. ``principal`` without a LangGraph store), so a UI can say so."""
    principal: NotRequired[PrincipalInfo]
    """Who runs the graph, and where that comes from (absent when there is no principal)."""


class PrincipalInfo(TypedDict):
    """The principal a call is judged for, and where it comes from: ``authenticated`` (an operator's
    ``principal_for``, LangGraph Server's custom auth) or ``client`` (``configurable.user_id``, which any client of
    the run sets as it likes)."""

    id: str
    origin: Literal["authenticated", "client"]


class DefinitionChange(TypedDict):
    """One part of a tool's definition that differs from what a decision was made about."""

    field: Literal["name", "description", "inputSchema", "outputSchema", "annotations"]
    before: Any
    after: Any


BindingVerdict: TypeAlias = Literal["allow", "approve", "edit", "remembered"]


class DecisionBinding(TypedDict):
    """A decision bound to exactly one call, signed (HMAC-SHA256) where it was taken.

    The tool node runs a call on a binding only if the signature verifies with its key and every field matches
    the call about to be sent (see :mod:`langgraph_mcp.policy.binding`)."""

    v: Literal[1]
    verdict: BindingVerdict
    """``allow``: the policy allowed it (on this definition); ``approve``/``edit``: a human did; ``remembered``: a
    remembered approval did."""
    thread_id: str
    tool_call_id: str
    server: str
    """The server's configured name."""
    server_identity: str
    """The name plus a digest of where it is reached (transport, URL or command line)."""
    tool: str
    """The server's own tool name."""
    definition_hash: str
    args_digest: str
    """``langgraph_mcp.catalog.args_digest`` of the arguments to be sent (the edited ones after an edit)."""
    key_id: str
    """Which key signed it (a digest of the key, never the key)."""
    signature: str


class EditedAction(TypedDict):
    name: str
    args: dict[str, Any]


class ApproveDecision(TypedDict):
    type: Literal["approve"]
    remember: NotRequired[RememberScope]
    """Apply this approval to later calls of the same tool (same definition) without asking: see
    :mod:`langgraph_mcp.approval.memory`. Only a scope the payload's ``remember`` offers."""


class EditDecision(TypedDict):
    type: Literal["edit"]
    edited_action: EditedAction


class RejectDecision(TypedDict):
    type: Literal["reject"]
    message: NotRequired[str]
    remember: NotRequired[RememberScope]
    """Reject later calls of the same tool (same definition) without asking, with the same message."""


class RespondDecision(TypedDict):
    type: Literal["respond"]
    message: str


Decision: TypeAlias = ApproveDecision | EditDecision | RejectDecision | RespondDecision
"""The resume value of an ``mcp_approval`` interrupt (LangChain's decision shapes)."""


class HITLResponse(TypedDict):
    """Compatibility mode resume value (what Agent Chat UI sends): exactly one decision."""

    decisions: list[Decision]


def is_approval_interrupt(value: object) -> bool:
    """True for an ``mcp_approval`` payload."""
    return isinstance(value, dict) and value.get("type") == APPROVAL_INTERRUPT_TYPE
