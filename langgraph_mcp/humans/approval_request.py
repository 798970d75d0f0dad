"""The ``mcp_approval`` interrupt: what a human is shown about one tool call the policy asks about.

The gate (:mod:`langgraph_mcp.graph.gate`), the tool node's own asks (:mod:`langgraph_mcp.approval.judge`) and
``McpApprovalMiddleware`` all build it here, so a human sees the same question wherever it is asked. In Agent Chat
UI mode a card whose payload offers ``remember`` also gets a ``Remember`` box (:func:`with_remember_field`): Agent
Chat UI's buttons send a bare approve, so typing a scope there (and Submit) is how a person asks for it.
"""

from __future__ import annotations

import json

from langchain_core.messages import ToolCall

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.humans.verdicts import Verdict
from langgraph_mcp.payloads import APPROVAL_INTERRUPT_TYPE, ApprovalInterrupt

__all__ = ["REMEMBER_FIELD", "REMEMBER_NOT", "approval_payload", "with_remember_field"]

_MAX_DESCRIBED_ARGS = 2_000

REMEMBER_FIELD = "remember"
"""The Agent Chat UI card's extra box (shown as "Remember") where a person types a ``remember`` scope."""

REMEMBER_NOT = "no"
"""What the ``Remember`` box starts with (followed by what to type instead): ask again next time."""


def _describe(call: ToolCall, tool: McpTool | None, verdict: Verdict) -> str:
    name = call["name"]
    args = json.dumps(call.get("args") or {}, ensure_ascii=False, default=str)
    if len(args) > _MAX_DESCRIBED_ARGS:
        args = args[:_MAX_DESCRIBED_ARGS] + "..."
    if tool is None:
        head = f"Tool call {name!r} needs approval ({verdict.reason})."
    else:
        what = f" {tool.description.strip()}" if tool.description.strip() else ""
        head = (
            f"Tool call {name!r} (MCP server {tool.server!r}, tool {tool.name!r}) needs approval "
            f"({verdict.reason}).{what}"
        )
    return f"{head}\n\nArgs: {args}"


def approval_payload(
    call: ToolCall,
    tool: McpTool | None,
    verdict: Verdict,
    *,
    compat: bool = False,
    now: float | None = None,
) -> ApprovalInterrupt:
    """The ``mcp_approval`` interrupt value for one call the policy asks about.

    It names the rule that asks and its reason; with ``now`` (the policy's clock) and a verdict that expires,
    ``expires_at``. With ``compat=True`` it also carries LangChain's ``HITLRequest`` keys (one action request,
    one review config), so Agent Chat UI renders it.
    """
    name = call["name"]
    args = dict(call.get("args") or {})
    description = _describe(call, tool, verdict)
    payload: ApprovalInterrupt = {
        "type": APPROVAL_INTERRUPT_TYPE,
        "tool_call_id": call.get("id") or "",
        "server": tool.server if tool is not None else None,
        "tool": tool.name if tool is not None else name,
        "published_name": name,
        "arguments": args,
        "hints": tool.hints if tool is not None else None,
        "reason": verdict.reason,
        "allowed_decisions": list(verdict.allowed_decisions),
        "description": description,
    }
    if verdict.rule:
        payload["rule"] = verdict.rule
    if verdict.expires_after is not None and now is not None:
        payload["expires_at"] = now + verdict.expires_after
    if tool is not None:
        payload["input_schema"] = tool.input_schema
        payload["definition_hash"] = tool.definition_hash
    if compat:
        payload["action_requests"] = [{"name": name, "args": args, "description": description}]
        payload["review_configs"] = [
            {"action_name": name, "allowed_decisions": list(verdict.allowed_decisions)}
        ]
    return payload


_SCOPE_WORDS = {"thread": "on this thread", "principal": "of this user, on any thread"}


def with_remember_field(payload: ApprovalInterrupt) -> None:
    """Give an Agent Chat UI card a ``Remember`` box (``"no - type thread ..."``) when the payload offers ``remember``.

    Only on a card a person can edit (``edit`` allowed) whose tool has no argument of that name; the answer is
    read back by :func:`langgraph_mcp.humans.decisions.decision_response_schema`.
    """
    offered = list(payload.get("remember") or [])
    requests = payload.get("action_requests") or []
    schema = payload.get("input_schema") or {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if (
        not offered
        or len(requests) != 1
        or "edit" not in payload["allowed_decisions"]
        or REMEMBER_FIELD in requests[0]["args"]
        or (isinstance(properties, dict) and REMEMBER_FIELD in properties)
    ):
        return
    request = requests[0]
    calls = (
        "later calls with these arguments" if payload.get("remember_covers") == "same_args" else "later calls"
    )
    choices = " or ".join(f"{scope} ({_SCOPE_WORDS.get(scope, scope)})" for scope in offered)
    # The box says what to type: the description is behind a button in Agent Chat UI.
    request["args"] = {
        **request["args"],
        REMEMBER_FIELD: f"{REMEMBER_NOT} - type {choices} to approve {calls} of this tool without asking",
    }
    request["description"] = (
        f"{request.get('description', '')}\n\nTo approve {calls} of this tool too without being asked, type "
        f"{choices} in the Remember box and Submit; {REMEMBER_NOT!r} asks again next time."
    ).lstrip()
