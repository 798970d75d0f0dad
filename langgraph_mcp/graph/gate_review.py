"""The approval gate's ``review`` tasks: one ``mcp_approval`` interrupt per asked call, and the edge that sends them.

Each task asks about its own call (so each paused call has its own interrupt id), checks the answer before it is
saved (``interrupt(..., response_schema=...)``), and adds only its own decision to the gate's merging channels.
An approval is signed here, in the task that received it through the interrupt; what a decision does to its call
(an approval after the verdict's ``expires_at`` counts as a rejection) is the judge's
(:func:`langgraph_mcp.approval.judge.effect`), here and in ``apply``, at the time the answer came. A decision given with
``remember`` is kept here too (:mod:`langgraph_mcp.approval.memory`): in the graph's store, or, for ``thread``
without one, handed to ``apply`` to keep in the message.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.types import Send, interrupt

from langgraph_mcp.approval.judge import effect, shown_call
from langgraph_mcp.approval.memory import aremember, remember, signed_entry
from langgraph_mcp.graph.gate_check import GateCheck
from langgraph_mcp.graph.gate_state import REVIEW, ReviewInput, review_field, reviews_of
from langgraph_mcp.payloads import ApprovalInterrupt, Decision, RememberedDecision
from langgraph_mcp.questions.decisions import DecisionResponse
from langgraph_mcp.servers.identities import current_store

__all__ = ["GateReview"]


class GateReview:
    """The ``review`` node of one gate and the edge in front of it (``check`` → review → ``apply``)."""

    def __init__(self, gate: GateCheck) -> None:
        self.gate = gate

    def route(self, state: Any) -> str | list[Send]:
        """A ``Send`` per call still waiting for a decision (one at a time in Agent Chat UI mode), else ``apply``."""
        todo = [r["payload"] for r in reviews_of(state).values() if "payload" in r and "decision" not in r]
        if not todo:
            return "apply"
        if self.gate.shapes.one_at_a_time:
            todo = todo[:1]
        judged = review_field(state, "judged")
        return [
            Send(
                "review", {"payload": p, "principal": (judged.get(p["tool_call_id"]) or {}).get("principal")}
            )
            for p in todo
        ]

    def review(self, state: ReviewInput, config: RunnableConfig) -> dict[str, Any]:
        """Ask about one call; the decision (signed when it lets the call run) for ``apply``."""
        out, entry = self._review(state, config)
        if entry is not None and not remember(current_store(), entry):
            out[REVIEW][entry["tool_call_id"]]["memory"] = entry
        return out

    async def areview(self, state: ReviewInput, config: RunnableConfig) -> dict[str, Any]:
        """:meth:`review` in async runs (the store's async API)."""
        out, entry = self._review(state, config)
        if entry is not None and not await aremember(current_store(), entry):
            out[REVIEW][entry["tool_call_id"]]["memory"] = entry
        return out

    def _review(
        self, state: ReviewInput, config: RunnableConfig
    ) -> tuple[dict[str, Any], RememberedDecision | None]:
        gate = self.gate
        payload = state["payload"]
        answer = interrupt(payload, response_schema=gate.shapes.decision_model(payload))
        decision: Decision
        if isinstance(answer, DecisionResponse):
            decision = answer.decision()
        else:  # defensive: a plain value (validated again; it was checked before it was saved)
            decision = gate.shapes.decision(payload, answer)
        call_id = payload["tool_call_id"]
        now = gate.policy.clock()  # when the answer came: this task runs again on the resume
        out: dict[str, Any] = {REVIEW: {call_id: {"decision": decision, "answered_at": now}}}
        done = effect(shown_call(payload), decision, payload, now=now, tool=None)
        if done.outcome == "expired":
            return out, None
        server, definition_hash = payload["server"], payload.get("definition_hash")
        signable = server is not None and server in gate.servers.names and definition_hash is not None
        if done.arguments is not None and signable:
            assert server is not None and definition_hash is not None
            # Signed here, in the task that received the human's answer through the interrupt: a decision
            # written into the gate's channels or the message by anyone else carries no valid signature.
            verdict: Literal["approve", "edit"] = "edit" if decision["type"] == "edit" else "approve"
            binding = gate.sign(
                verdict, call_id, server, payload["tool"], definition_hash, done.arguments, config
            )
            out[REVIEW][call_id]["binding"] = binding
        return out, self._entry(state, decision, config) if signable else None

    def _entry(
        self, state: ReviewInput, decision: Decision, config: RunnableConfig
    ) -> RememberedDecision | None:
        """The signed entry of a decision given with ``remember`` (the payload offered that scope: checked)."""
        scope = decision.get("remember")
        payload = state["payload"]
        server, definition_hash = payload["server"], payload.get("definition_hash")
        if scope not in ("thread", "principal") or server is None or definition_hash is None:
            return None
        thread_id = str(config.get("configurable", {}).get("thread_id") or "")
        owner = thread_id if scope == "thread" else state.get("principal")
        if not owner:
            return None
        gate = self.gate
        return signed_entry(
            gate.signer.key,
            scope=scope,
            owner=owner,
            server=server,
            identity=gate.signer.server_identity(server),
            tool=payload["tool"],
            definition_hash=definition_hash,
            decision=decision,
            arguments=payload["arguments"],
            same_args=payload.get("remember_covers") == "same_args",
            rule=payload.get("rule", ""),
            now=gate.policy.clock(),
            tool_call_id=payload["tool_call_id"],
            published_name=payload["published_name"],
            owner_origin=_origin(payload) if scope == "principal" else None,
        )


def _origin(payload: ApprovalInterrupt) -> str | None:
    who = payload.get("principal")
    return who["origin"] if who is not None else None
