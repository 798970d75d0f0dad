"""The ``mcp_approval`` interrupt: what a human is shown about one tool call the policy asks about.

The gate (:mod:`langgraph_mcp.graph.gate`), the tool node's own asks (:mod:`langgraph_mcp.graph.proof`) and
``McpApprovalMiddleware`` all build it here, so a human sees the same question wherever it is asked.
"""

from __future__ import annotations

import json

from langchain_core.messages import ToolCall

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.humans.verdicts import Verdict
from langgraph_mcp.payloads import APPROVAL_INTERRUPT_TYPE, ApprovalInterrupt

__all__ = ["approval_payload"]

_MAX_DESCRIBED_ARGS = 2_000


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
