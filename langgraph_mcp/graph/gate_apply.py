"""The approval gate's ``apply`` node: what the gate writes once every asked call has its decision.

``apply`` alone rewrites the ``AIMessage`` and adds the ``ToolMessage``\\s, so parallel edits of several calls of
one message never overwrite each other. It stamps the message with a record per call it lets through (server,
tool, verdict, signed binding: the tool node runs nothing else), applies edits to the arguments everywhere the
message repeats them (keeping the originals in ``response_metadata["mcp_approval_edits"]``), answers rejected,
expired, responded and denied calls with their ``ToolMessage`` (what a decision does to its call is
:func:`langgraph_mcp.approval.judge.effect`'s, at the time the answer came), and emits one ``mcp_decision`` audit record per
call that does not run (:mod:`langgraph_mcp.approval.audit`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage

from langgraph_mcp.approval.audit import Outcome, decision_record, emit_decision
from langgraph_mcp.approval.judge import denial_message, effect, shown_call
from langgraph_mcp.approval.memory import MEMORY_METADATA_KEY
from langgraph_mcp.catalog import ToolDefinition
from langgraph_mcp.errors import DecisionError
from langgraph_mcp.graph.gate_state import review_field
from langgraph_mcp.graph.messages import (
    GateRecord,
    gate_records,
    messages_of,
    pending_calls,
    with_audit_context,
    with_gate_records,
    with_message_fields,
)
from langgraph_mcp.payloads import ApprovalInterrupt, Decision, DecisionBinding, RememberedDecision

__all__ = ["apply_decisions"]


# ------------------------------------------------------------------------------------------------ apply


def apply_decisions(state: Any, messages_key: str) -> dict[str, Any]:
    """The ``apply`` node: the stamped (and edited) ``AIMessage`` and a ``ToolMessage`` per call that won't run.

    Raises :class:`~langgraph_mcp.errors.DecisionError` when a call that needed a human has no decision.
    """
    decisions: dict[str, Decision] = review_field(state, "decision")
    reviews: list[ApprovalInterrupt] = list(review_field(state, "payload").values())
    _require_decisions(reviews, decisions)
    pending = pending_calls(messages_of(state, messages_key))
    ai = pending.ai
    denied: dict[str, str] = review_field(state, "denied")
    records: dict[str, GateRecord] = review_field(state, "allowed")
    if ai is None or not (decisions or denied or records or pending.refused):
        return {}
    outcome = _Outcome(state, ai, records, {p["tool_call_id"]: p for p in reviews})
    out: list[AnyMessage] = [group.message() for group in pending.refused]
    out.extend(outcome.answers(decisions, denied))
    if outcome.edits or records or outcome.memory or gate_records(ai) is None:
        # Always stamp a judged message (even with no call let through): the tool node then runs only
        # calls this gate recorded, whatever else reaches it.
        out.insert(0, outcome.stamped())
    return {messages_key: out}


def _require_decisions(reviews: list[ApprovalInterrupt], decisions: Mapping[str, Decision]) -> None:
    undecided = [p["tool_call_id"] for p in reviews if p["tool_call_id"] not in decisions]
    if undecided:  # fail closed: a call that needed a human must never slip through undecided
        raise DecisionError(f"approval gate: no decision for tool call(s) {undecided}; nothing was run")


class _Outcome:
    """What ``apply`` gathers for one ``AIMessage``: the records of the calls it lets run, the edits, the audit."""

    def __init__(
        self, state: Any, ai: AIMessage, records: dict[str, GateRecord], shown: dict[str, ApprovalInterrupt]
    ) -> None:
        self.ai = ai
        self.records = records
        self.shown = shown
        self.answered: dict[str, float] = review_field(state, "answered_at")
        self.judged: dict[str, dict[str, Any]] = review_field(state, "judged")
        self.bindings: dict[str, DecisionBinding] = review_field(state, "binding")
        self.definitions: dict[str, ToolDefinition] = review_field(state, "shown")
        self.calls = {call.get("id") or "": call for call in ai.tool_calls}
        self.names = {call_id: call["name"] for call_id, call in self.calls.items()}
        self.args_of = {call.get("id") or "": call.get("args") for call in ai.tool_calls}
        self.edits: dict[str, dict[str, Any]] = {}
        self.memory: dict[str, RememberedDecision] = review_field(state, "memory")

    def answers(self, decisions: Mapping[str, Decision], denied: Mapping[str, str]) -> list[ToolMessage]:
        """The ``ToolMessage``\\s of the decided calls that do not run, then of the denied ones."""
        out: list[ToolMessage] = []
        for call_id, decision in decisions.items():
            message = self.decided(call_id, decision)
            if message is not None:
                out.append(message)
        for call_id, reason in denied.items():
            out.append(denial_message(self.names.get(call_id, ""), call_id, reason))
            self.audit(call_id, None, "denied")
        return out

    def decided(self, call_id: str, decision: Decision) -> ToolMessage | None:
        """Apply one human decision (:func:`~langgraph_mcp.approval.judge.effect`, judged when the answer came; a
        decision with no time recorded counts as late); the ``ToolMessage`` that answers the call instead of the
        tool, if any."""
        shown: Mapping[str, Any] = (
            self.shown.get(call_id) or {}
        )  # none: a remembered decision (nobody was shown)
        call = self.calls.get(call_id) or cast(
            ToolCall, {**shown_call(shown), "name": self.names.get(call_id, "")}
        )
        done = effect(call, decision, shown, now=self.answered.get(call_id, float("inf")), tool=None)
        if done.message is not None:
            self.audit(call_id, decision, done.outcome)
            return done.message
        assert done.arguments is not None and decision["type"] in ("approve", "edit")
        self.records[call_id] = self._record(call_id, "edit" if decision["type"] == "edit" else "approve")
        if decision["type"] == "edit":
            self.edits[call_id] = done.arguments
        return None

    def _record(self, call_id: str, verdict: Literal["approve", "edit"]) -> GateRecord:
        """Exactly what the human was shown: the tool node refuses to run anything else."""
        shown = self.shown[call_id]
        server = shown["server"]
        entry: GateRecord = {
            "server": server,
            "tool": shown["tool"] if server is not None else None,
            "verdict": verdict,
        }
        if call_id in self.bindings:
            entry["binding"] = self.bindings[call_id]
        if call_id in self.definitions:
            entry["definition"] = self.definitions[call_id]
        return entry

    def audit(self, call_id: str, decision: Decision | None, outcome: Outcome) -> None:
        """Emit the ``mcp_decision`` record of a call that does not run (``decision`` ``None``: the policy's)."""
        seen = self.judged.get(call_id) or {}
        emit_decision(
            decision_record(
                tool_call_id=call_id,
                server=seen.get("server"),
                tool=seen.get("tool") or self.names.get(call_id, ""),
                definition_hash=seen.get("definition_hash"),
                verdict=seen.get("verdict", "ask" if decision is not None else "deny"),
                decided_by=seen.get("decided_by") or ("human" if decision is not None else "policy"),
                rule=seen.get("rule", ""),
                args=self.args_of.get(call_id),
                principal=seen.get("principal"),
                decision=decision["type"] if decision is not None else None,
                outcome=outcome,
            )
        )

    def stamped(self) -> AIMessage:
        """The ``AIMessage`` with its edits, its gate records and the audit context of the calls let through."""
        ai = with_args(self.ai, self.edits) if self.edits else self.ai
        stamped = with_gate_records(ai, self.records)
        context = {
            cid: {
                "rule": self.judged[cid]["rule"],
                "principal": self.judged[cid]["principal"],
                **(
                    {"decided_by": "remembered"} if self.judged[cid].get("decided_by") == "remembered" else {}
                ),
            }
            for cid in self.records
            if cid in self.judged
        }
        stamped = with_audit_context(stamped, context) if context else stamped
        if not self.memory:
            return stamped
        # Thread memory without a store: kept in the thread, signed (graph/memory.py reads it back).
        metadata = dict(stamped.response_metadata)
        kept = [*(metadata.get(MEMORY_METADATA_KEY) or []), *(dict(e) for e in self.memory.values())]
        return with_message_fields(stamped, {"response_metadata": {**metadata, MEMORY_METADATA_KEY: kept}})


# ------------------------------------------------------------------------------------------------ editing


def with_args(ai: AIMessage, edits: Mapping[str, dict[str, Any]]) -> AIMessage:
    """A copy of ``ai`` (same id) whose calls in ``edits`` carry the edited args everywhere they appear."""
    calls = [
        cast(ToolCall, {**call, "args": edits[call_id]})
        if (call_id := call.get("id") or "") in edits
        else call
        for call in ai.tool_calls
    ]
    content: Any = ai.content
    if isinstance(content, list):  # provider tool-use blocks repeat the arguments (Anthropic, v1 blocks)
        content = [_edited_block(block, edits) for block in content]
    additional = dict(ai.additional_kwargs)
    raw_calls = additional.get("tool_calls")
    if isinstance(raw_calls, list):  # OpenAI-style raw calls: function.arguments is a JSON string
        additional["tool_calls"] = [_edited_raw_call(raw, edits) for raw in raw_calls]
    metadata = dict(ai.response_metadata)
    originals = dict(metadata.get("mcp_approval_edits") or {})
    for call in ai.tool_calls:
        if call.get("id") in edits:
            originals.setdefault(call["id"], call.get("args"))
    metadata["mcp_approval_edits"] = originals
    update = {
        "content": content,
        "additional_kwargs": additional,
        "response_metadata": metadata,
        "tool_calls": calls,
    }
    return with_message_fields(ai, update)


def _edited_block(block: Any, edits: Mapping[str, dict[str, Any]]) -> Any:
    """A content block with its edited arguments (``tool_use``: ``input``; ``tool_call``: ``args``)."""
    if isinstance(block, dict) and block.get("id") in edits:
        if block.get("type") == "tool_use":
            return {**block, "input": edits[block["id"]]}
        if block.get("type") == "tool_call":
            return {**block, "args": edits[block["id"]]}
    return block


def _edited_raw_call(raw: Any, edits: Mapping[str, dict[str, Any]]) -> Any:
    """An OpenAI-style raw call with its edited arguments as the JSON string it carries them in."""
    if isinstance(raw, dict) and raw.get("id") in edits and isinstance(raw.get("function"), dict):
        function = {**raw["function"], "arguments": json.dumps(edits[raw["id"]], ensure_ascii=False)}
        return {**raw, "function": function}
    return raw
