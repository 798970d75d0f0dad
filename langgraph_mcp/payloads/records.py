"""What is kept or streamed about calls, not asked: decision records, remembered decisions, MCP task handles."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from langgraph_mcp.payloads.approval import RememberScope
from langgraph_mcp.payloads.base import DecisionType

DECISION_EVENT_TYPE: Literal["mcp_decision"] = "mcp_decision"
"""``type`` of the custom stream event (and audit log record) written once per judged tool call."""


class DecisionRecord(TypedDict):
    """What was decided about one tool call and what became of it: a ``stream_mode="custom"`` event and a
    record on the ``langgraph_mcp.audit`` logger."""

    type: Literal["mcp_decision"]
    tool_call_id: str
    server: str | None
    """``None`` for a call that goes to no MCP server (or whose server was never established)."""
    tool: str
    """The server's own tool name (the published name when there is no server)."""
    verdict: Literal["allow", "ask", "deny"]
    """The policy's verdict."""
    decided_by: Literal["policy", "human", "remembered"]
    rule: str
    """The id of the rule that gave the verdict."""
    definition_hash: str | None
    """:func:`langgraph_mcp.catalog.definition_hash` of the tool as judged; ``None`` without a tool."""
    args_digest: str
    """:func:`langgraph_mcp.catalog.args_digest` of the arguments judged (for an edit: the edited ones)."""
    principal: str | None
    decision: DecisionType | None
    """The human's decision; ``None`` when nobody was asked."""
    outcome: Literal["ran", "rejected", "denied", "expired", "failed"]
    """``ran``: the tool answered; ``failed``: it was sent on but ended in an error (or was refused by the
    tool node); ``rejected``: a human rejected it or answered in its place; ``denied``: the policy refused
    it; ``expired``: the approval came too late."""


class RememberedDecision(TypedDict):
    """A decision given with ``remember``, as kept (in the LangGraph store, or in the thread's messages without one):
    signed with the servers' approval key, so an entry written by anyone else never counts
    (:mod:`langgraph_mcp.approval.memory`)."""

    v: Literal[1]
    scope: RememberScope
    owner: str
    """The thread id (``thread``) or the principal (``principal``) it belongs to."""
    server: str
    server_identity: str
    tool: str
    """The server's own tool name."""
    definition_hash: str
    """The definition it was decided about: a changed definition voids it."""
    args_digest: str | None
    """Only calls with these arguments (the rule's ``remember = "same_args"``); ``None``: any arguments."""
    decision: Literal["approve", "reject"]
    message: str | None
    """A reject's reason (``None`` for an approve, or a reject without one)."""
    rule: str
    """The rule that asked when it was decided."""
    decided_at: float
    """Seconds since the epoch (the policy's clock)."""
    tool_call_id: str
    """The call it was decided on."""
    published_name: NotRequired[str]
    """The tool's published name (what the model called) when it was decided."""
    owner_origin: NotRequired[Literal["authenticated", "client"]]
    """For a ``principal`` entry: where the principal came from (see :class:`~langgraph_mcp.payloads.PrincipalInfo`)."""
    key_id: str
    signature: str


TASK_HANDLE_TYPE: Literal["mcp_task"] = "mcp_task"
"""``type`` of a saved MCP task handle (in the checkpoint, see :class:`TaskHandle`)."""

TASK_STATUS_EVENT_TYPE: Literal["mcp_task_status"] = "mcp_task_status"
"""``type`` of the ``stream_mode="custom"`` event written when a task's status changes."""


class TaskHandle(TypedDict):
    """A task a server created for a tool call (MCP Tasks), as saved in the graph's checkpoint: a node that runs
    again polls this task instead of calling the tool again."""

    type: Literal["mcp_task"]
    server: str
    tool: str
    """The server's own tool name."""
    task_id: str
    tool_call_id: str
    identity: str
    """A digest of the credentials the task was created with (never the secrets): it is only polled with them."""
    poll_interval_ms: float | None


class TaskStatusEvent(TypedDict):
    """Written to ``stream_mode="custom"`` each time a task's status (or status message) changes."""

    type: Literal["mcp_task_status"]
    tool_call_id: str
    server: str
    tool: str
    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    status_message: str | None
