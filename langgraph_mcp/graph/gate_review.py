"""The approval gate's ``review`` tasks: one ``mcp_approval`` interrupt per asked call, and the edge that sends them.

Each task asks about its own call (so each paused call has its own interrupt id), checks the answer before it is
saved (``interrupt(..., response_schema=...)``), and adds only its own decision to the gate's merging channels.
An approval is signed here, in the task that received it through the interrupt; one that came after the
verdict's ``expires_at`` is recorded as expired instead (it counts as a rejection).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Send, interrupt

from langgraph_mcp.graph.gate_check import GateCheck
from langgraph_mcp.graph.gate_state import BINDINGS, DECISIONS, EXPIRED, REVIEWS, ReviewInput
from langgraph_mcp.humans.decisions import (
    DecisionResponse,
    decision_response_schema,
    only_decision,
    validate_decision,
)
from langgraph_mcp.payloads import Decision

__all__ = ["GateReview"]


class GateReview:
    """The ``review`` node of one gate and the edge in front of it (``check`` → review → ``apply``)."""

    def __init__(self, gate: GateCheck) -> None:
        self.gate = gate

    def route(self, state: Any) -> str | list[Send]:
        """A ``Send`` per call still waiting for a decision (compat mode: the first only), else ``apply``."""
        decided = state.get(DECISIONS) or {}
        todo = [p for p in state.get(REVIEWS) or [] if p["tool_call_id"] not in decided]
        if not todo:
            return "apply"
        if self.gate.compat:
            todo = todo[:1]
        return [Send("review", {"payload": p}) for p in todo]

    def review(self, state: ReviewInput, config: RunnableConfig) -> dict[str, Any]:
        """Ask about one call; the decision (signed when it lets the call run) for ``apply``."""
        gate = self.gate
        payload = state["payload"]
        answer = interrupt(payload, response_schema=decision_response_schema(payload, compat=gate.compat))
        decision: Decision
        if isinstance(answer, DecisionResponse):
            decision = answer.decision()
        else:  # defensive: a plain value (validated again; it was checked before it was saved)
            decision = validate_decision(payload, only_decision(payload, answer) if gate.compat else answer)
        call_id = payload["tool_call_id"]
        if decision["type"] in ("approve", "edit") and "expires_at" in payload:
            now = gate.policy.clock()  # when the answer came: this task runs again on the resume
            if now > payload["expires_at"]:
                return {DECISIONS: {call_id: decision}, EXPIRED: {call_id: now}}
        out: dict[str, Any] = {DECISIONS: {call_id: decision}}
        server, definition_hash = payload["server"], payload.get("definition_hash")
        signable = server is not None and server in gate.servers.names and definition_hash is not None
        if decision["type"] in ("approve", "edit") and signable:
            assert server is not None and definition_hash is not None
            # Signed here, in the task that received the human's answer through the interrupt: a decision
            # written into the gate's channels or the message by anyone else carries no valid signature.
            args = decision["edited_action"]["args"] if decision["type"] == "edit" else payload["arguments"]
            binding = gate.sign(
                decision["type"], call_id, server, payload["tool"], definition_hash, args, config
            )
            out[BINDINGS] = {call_id: binding}
        return out
