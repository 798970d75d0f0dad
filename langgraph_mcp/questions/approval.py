"""The ``mcp_approval`` interrupt: what a human is shown about one tool call the policy asks about.

The gate (:mod:`langgraph_mcp.graph.gate`), the tool node's own asks (:mod:`langgraph_mcp.approval.judge`) and
``McpApprovalMiddleware`` all build it here, so a human sees the same question wherever it is asked.

In Agent Chat UI mode the payload also carries a card (see :mod:`langgraph_mcp.questions.cards` for why every card
allows ``edit`` only): a **How To Answer** box, the call's arguments as editable boxes, a **Reason** box (where the
policy allows ``reject`` or ``respond``), a ``Remember`` box where the payload offers ``remember``
(:func:`with_remember_field`), and last an empty **Decision** box. Nothing runs until the person types ``approve``
there (the call runs with the boxes as they stand: changed boxes are an ``edit``); ``reject`` refuses it (with the
Reason, if any), ``respond`` answers the model with the Reason instead. The policy's ``allowed_decisions`` say which
of those words the card takes and whether its boxes may be changed (``edit``);
:func:`langgraph_mcp.questions.decisions.decision_response_schema` reads the answer back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from langchain_core.messages import ToolCall

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.payloads import APPROVAL_INTERRUPT_TYPE, ApprovalInterrupt, DecisionType
from langgraph_mcp.policy.verdicts import Verdict
from langgraph_mcp.questions.cards import (
    DECISION_FIELD,
    HELP_KEY,
    REASON_FIELD,
    Word,
    card_config,
    free_key,
    words_help,
)

__all__ = [
    "REMEMBER_FIELD",
    "REMEMBER_NOT",
    "ApprovalCardKeys",
    "approval_card",
    "approval_card_keys",
    "approval_payload",
    "offered_words",
    "with_remember_field",
]

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
    now: float | None = None,
) -> ApprovalInterrupt:
    """The ``mcp_approval`` interrupt value for one call the policy asks about.

    It names the rule that asks and its reason; with ``now`` (the policy's clock) and a verdict that expires,
    ``expires_at``. Agent Chat UI mode adds its card (:func:`approval_card`).
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
    return payload


def approval_card(payload: ApprovalInterrupt) -> ApprovalInterrupt:
    """``payload`` plus LangChain's ``HITLRequest`` keys (one action request, one review config), so Agent Chat UI
    renders it: the card this module's doc describes."""
    name = payload["published_name"]
    card: ApprovalInterrupt = {
        **payload,
        "action_requests": [{"name": name, "args": {}, "description": payload["description"]}],
        "review_configs": [card_config(name)],
    }
    _arrange(card, {})
    return card


class ApprovalCardKeys(NamedTuple):
    """The names of an approval card's own boxes (each made unique among the tool's arguments)."""

    help: str
    reason: str
    decision: str


def approval_card_keys(payload: ApprovalInterrupt) -> ApprovalCardKeys:
    """The keys of ``payload``'s card boxes: :data:`~langgraph_mcp.questions.cards.HELP_KEY`, ``reason`` and
    ``decision``, each with ``_`` appended while the tool has an argument (or schema property) of that name."""
    schema = payload.get("input_schema") or {}
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    taken = {*payload["arguments"], *(properties if isinstance(properties, Mapping) else ()), REMEMBER_FIELD}
    return ApprovalCardKeys(
        free_key(HELP_KEY, taken), free_key(REASON_FIELD, taken), free_key(DECISION_FIELD, taken)
    )


def offered_words(allowed: list[DecisionType]) -> dict[Word, str]:
    """The words an approval card takes in its Decision box for a policy's ``allowed_decisions``."""
    words: dict[Word, str] = {}
    if "approve" in allowed or "edit" in allowed:
        words["approve"] = "approve"
    if "reject" in allowed:
        words["reject"] = "reject"
    if "respond" in allowed:
        words["respond"] = "respond"
    return words


def _help(payload: ApprovalInterrupt) -> list[str]:
    allowed = payload["allowed_decisions"]
    lines = ["Nothing runs until you type your decision in the Decision box (at the bottom) and Submit."]
    if "approve" in allowed and "edit" in allowed:
        lines.append("approve: runs this call with the boxes as they stand (edit them first to change it).")
    elif "approve" in allowed:
        lines.append("approve: runs this call as shown (its boxes may not be changed).")
    elif "edit" in allowed:
        lines.append("approve: runs this call after you changed its boxes (it may not run as shown).")
    if "reject" in allowed:
        lines.append("reject: refuses it; the model reads your Reason, if you give one.")
    if "respond" in allowed:
        lines.append(
            "respond: the model reads your Reason instead of the tool's result; the call does not run."
        )
    if payload.get("remember"):
        lines.append("Remember: see its box (leave it at no to be asked again).")
    return lines


def _arrange(payload: ApprovalInterrupt, extra: dict[str, Any]) -> None:
    """Lay out the card's boxes: help, the call's arguments, ``extra`` (the Remember box), Reason, Decision."""
    keys = approval_card_keys(payload)
    allowed = payload["allowed_decisions"]
    box: dict[str, Any] = {keys.help: words_help(_help(payload)), **payload["arguments"], **extra}
    if "reject" in allowed or "respond" in allowed:
        box[keys.reason] = ""
    box[keys.decision] = ""
    request = payload["action_requests"][0]
    request["args"] = box
    request["description"] = f"{payload['description']}\n\n" + "\n".join(_help(payload))


_SCOPE_WORDS = {"thread": "on this thread", "principal": "of this user, on any thread"}


def with_remember_field(payload: ApprovalInterrupt) -> None:
    """Give an Agent Chat UI card a ``Remember`` box (``"no - type thread ..."``) when the payload offers ``remember``.

    Only on a card whose tool has no argument of that name; the answer is read back by
    :func:`langgraph_mcp.questions.decisions.decision_response_schema` (with ``approve`` or ``reject`` typed in
    Decision).
    """
    offered = list(payload.get("remember") or [])
    requests = payload.get("action_requests") or []
    schema = payload.get("input_schema") or {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if (
        not offered
        or len(requests) != 1
        or REMEMBER_FIELD in payload["arguments"]
        or (isinstance(properties, dict) and REMEMBER_FIELD in properties)
    ):
        return
    calls = (
        "later calls with these arguments" if payload.get("remember_covers") == "same_args" else "later calls"
    )
    choices = " or ".join(f"{scope} ({_SCOPE_WORDS.get(scope, scope)})" for scope in offered)
    # The box says what to type: the description is behind a button in Agent Chat UI.
    _arrange(
        payload,
        {
            REMEMBER_FIELD: f"{REMEMBER_NOT} - type {choices} to decide {calls} of this tool the same way without asking"
        },
    )
    request = requests[0]
    request["description"] = (
        f"{request.get('description', '')}\n\nTo decide {calls} of this tool the same way without being asked, "
        f"type {choices} in the Remember box (and approve or reject in Decision); {REMEMBER_NOT!r} asks again "
        "next time."
    )
