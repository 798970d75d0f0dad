"""What the tool node checks right before ``tools/call``: the policy on the current definition, or a genuine decision.

A call runs only if (a) the policy, evaluated on the tool's definition as listed *now*, allows it, or (b) a human
decided to approve (or edit) it through this graph's interrupt, and that decision is bound to exactly this call:
thread, tool call id, server identity, definition hash and the digest of the arguments about to be sent
(:mod:`langgraph_mcp.humans.binding`). What reached the node — message metadata, ``update_state`` as any node,
``Command(goto)`` — is never a decision by itself.

When neither holds, the node does not run the call. By default (``on_unproven="ask"``) it asks: an
``mcp_approval`` interrupt of its own, raised as the first interrupt of the call's task, whose reason says why the
node asks (and, after a change, ``changed`` says what changed: before → after). The answer is genuine by
construction: LangGraph hands an interrupt's resume value only to the task that raised it, and keeps it in the
checkpoint, so a resume on another worker finds it. With ``on_unproven="error"`` the call gets an error
``ToolMessage`` saying why instead.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from langchain_core.messages import ToolCall, ToolMessage
from langgraph.config import get_config
from langgraph.types import interrupt

from langgraph_mcp._compat import (
    fresh_resume_index,
    has_checkpointer,
    shown_interrupt_value,
    stored_resume_values,
    task_scratchpad,
)
from langgraph_mcp.approval.owners import owner_of, owner_verdict
from langgraph_mcp.approval.records import GateRecord
from langgraph_mcp.catalog import McpTool, ToolResolution, args_digest, canonical_json
from langgraph_mcp.humans.approval_request import approval_payload
from langgraph_mcp.humans.binding import binding_problem, definition_changes
from langgraph_mcp.humans.decisions import (
    DecisionResponse,
    decision_response_schema,
    only_decision,
    validate_decision,
)
from langgraph_mcp.humans.policy import ApprovalPolicy, Verdict
from langgraph_mcp.payloads import ApprovalInterrupt, Decision, DefinitionChange
from langgraph_mcp.servers.access import ServerAccess

__all__ = [
    "NodeDecision",
    "OnUnproven",
    "Proof",
    "ask_node_approval",
    "not_run",
    "policy_verdict",
    "prove",
]

OnUnproven: TypeAlias = Literal["ask", "error"]
"""What the tool node does with a call it cannot prove: ask a human (its own interrupt), or answer with an error."""

_MEMO_SIZE = 4_096
_POLICIES = 64


def _snapshot(values: Mapping[str, Any]) -> dict[str, Any]:
    # Containers are copied (deeply: a [tools] entry's decisions list too), so a change made in place shows.
    return {k: copy.deepcopy(v) if isinstance(v, dict | list | set) else v for k, v in values.items()}


def _private(policy: ApprovalPolicy) -> dict[str, Any]:
    # ``_compiled`` is derived from ``rules`` (compared among the fields) and filled on first use.
    return {k: v for k, v in (policy.__pydantic_private__ or {}).items() if k != "_compiled"}


class _Remembered:
    """The proofs remembered for one policy object, valid while it holds exactly what it held when they began.

    Every field and private attribute is compared (not only what a verdict reads today), so whatever the policy
    comes to read is covered; rules are frozen and compared as the tuple they are."""

    __slots__ = ("fields", "policy", "private", "proofs", "reads_args", "reads_principal")

    def __init__(self, policy: ApprovalPolicy) -> None:
        self.policy = policy
        self.fields = _snapshot(policy.__dict__)
        self.private = _snapshot(_private(policy))
        self.reads_args = any(rule.args for rule in policy.rules)
        """Some rule has argument conditions (a superset of "a rule for this call reads them")."""
        self.reads_principal = any(rule.principal for rule in policy.rules)
        """Some rule has a principal condition: otherwise no verdict depends on who runs the graph."""
        self.proofs: dict[Hashable, Proof] = {}

    def holds(self, policy: ApprovalPolicy) -> bool:
        return self.policy is policy and policy.__dict__ == self.fields and _private(policy) == self.private

    def key(self, call: ToolCall, tool: McpTool | None, principal: str | None) -> Hashable:
        """Everything else a verdict reads: the name, the tool as listed, the principal, the arguments if a rule
        reads arguments."""
        target = (
            None
            if tool is None
            else (tool.server, tool.name, tool.published_name, tool.definition_hash, tool.trusted)
        )
        args = canonical_json(call.get("args") or {}) if self.reads_args else None
        return (call["name"], target, principal, args)


_remembered: dict[int, _Remembered] = {}


def _remembered_for(policy: ApprovalPolicy) -> _Remembered | None:
    if type(policy) is not ApprovalPolicy:  # a subclass may decide from anything: evaluated every time
        return None
    memo = _remembered.get(id(policy))
    if memo is None or not memo.holds(policy):
        if len(_remembered) >= _POLICIES:
            _remembered.clear()
        memo = _remembered[id(policy)] = _Remembered(policy)
    return memo


def _policy_proof(
    policy: ApprovalPolicy, call: ToolCall, tool: McpTool | None, principal_of: Callable[[], str | None]
) -> Proof:
    """The remembered proof; ``principal_of`` is asked only when a verdict may depend on the principal."""
    memo = _remembered_for(policy)
    key: Hashable | None = None
    principal = principal_of() if memo is None or memo.reads_principal else None
    if memo is not None:
        try:
            key = memo.key(call, tool, principal)
            hit = memo.proofs.get(key)
        except TypeError:  # something in it is unhashable: evaluate
            key = hit = None
        if hit is not None:
            return hit
    if memo is not None and not memo.reads_principal:
        principal = principal_of()  # evaluated as ever (no rule reads it: the same verdict for anyone)
    verdict = policy.verdict(call, tool, principal=principal)
    proof = Proof(verdict, verdict.allowed)
    # No verdict_key: a predicate may decide the call (code may read anything), so it is evaluated every time.
    if (
        memo is not None
        and key is not None
        and policy.verdict_key(call, tool, principal=principal) is not None
    ):
        if len(memo.proofs) >= _MEMO_SIZE:
            memo.proofs.clear()
        memo.proofs[key] = proof
    return proof


def policy_verdict(
    policy: ApprovalPolicy, call: ToolCall, tool: McpTool | None, principal: str | None
) -> Verdict:
    """``policy.verdict(call, tool)``, remembered while the policy holds what it held, under everything else the
    verdict reads (see :class:`_Remembered`); a call a predicate may decide is evaluated every time."""
    return _policy_proof(policy, call, tool, lambda: principal).verdict


def _principal(policy: ApprovalPolicy) -> str | None:
    try:
        config: Any = get_config()
    except RuntimeError:  # called outside a graph
        config = None
    return policy.principal_for(config)


@dataclass(frozen=True)
class Proof:
    """Whether one call may run now, and if not, why."""

    verdict: Verdict
    """The policy's verdict on the current definition."""
    proven: bool
    """The policy allows it, or a genuine decision bound to exactly this call does."""
    problem: str = ""
    """Why a decision on record does not count (empty when there was none to check)."""
    changes: list[DefinitionChange] = field(default_factory=list)
    """What changed in the tool's definition since the decision on record was taken."""
    denied: bool = field(init=False)
    """The policy denies it."""
    by_policy: bool = field(init=False)
    """The policy alone runs it (else a human's decision does: see ``may_send_again`` in the call driver)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "denied", self.verdict.denied)
        object.__setattr__(self, "by_policy", self.verdict.allowed)


def prove(
    servers: ServerAccess,
    policy: ApprovalPolicy,
    call: ToolCall,
    resolution: ToolResolution,
    record: GateRecord | None,
    thread_id: str,
) -> Proof:
    """Check ``call`` (to the tool ``resolution`` found, as listed now) against the policy and the record's signed
    binding. A call allowed or denied by the policy alone gets the proof remembered for an equal call."""
    if len(resolution.tools) == 1 and not resolution.unknown:  # one owner, established: the policy alone
        tool: McpTool | None = resolution.tools[0]
        proof = _policy_proof(policy, call, tool, functools.partial(_principal, policy))
    else:  # a collision or an owner that could not be established: never remembered
        owner = owner_of(resolution)
        tool = owner.tool
        verdict = owner_verdict(policy, call, owner, principal=_principal(policy))
        proof = Proof(verdict, verdict.allowed)
    if proof.proven or proof.denied or tool is None:
        return proof
    verdict = proof.verdict
    if record is None:
        return Proof(verdict, False, "no decision about this call was taken by this graph's approval gate")
    if "binding" not in record:
        target = (
            f"server {record.get('server')!r}, tool {record.get('tool')!r}"
            if record.get("server") is not None
            else "a call whose server was unknown"
        )
        return Proof(
            verdict, False, f"the gate's record of it (judged as {target}) carries no signed decision"
        )
    problem = binding_problem(
        record["binding"],
        servers.approval_key,
        thread_id=thread_id,
        tool_call_id=call.get("id") or "",
        tool=tool,
        identity=servers.server_identity(tool.server),
        arguments=call.get("args"),
    )
    if problem is None:
        return Proof(verdict, True)
    changes = definition_changes(record.get("definition"), tool.definition) if "definition" in problem else []
    return Proof(verdict, False, problem, changes)


def unproven_reason(proof: Proof) -> str:
    return f"{proof.verdict.reason}; the tool node asks because {proof.problem}"


def not_run(call: ToolCall, why: str) -> ToolMessage:
    return ToolMessage(
        content=f"Error: the call to {call['name']!r} was not run: {why}.",
        name=call["name"],
        tool_call_id=call.get("id") or "",
        status="error",
    )


@dataclass(frozen=True)
class NodeDecision:
    """The human's answer to the node's own approval interrupt: the args to send, or the message to return."""

    arguments: dict[str, Any] | None
    message: ToolMessage | None


def _stored_decision(payload: ApprovalInterrupt, value: Any, compat: bool) -> bool:
    try:
        validate_decision(payload, only_decision(payload, value) if compat else value)
    except Exception:  # DecisionError, or a value of another shape altogether
        return False
    return True


async def ask_node_approval(
    call: ToolCall, tool: McpTool, proof: Proof, *, compat: bool, on_unproven: OnUnproven
) -> NodeDecision:
    """Ask the human about ``call`` with the node's own interrupt (or answer with an error: ``on_unproven``).

    Raises ``GraphInterrupt`` to pause. The interrupt is the task's first: a call's questions come after it."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:  # called outside a graph
        configurable = {}
    payload = approval_payload(call, tool, proof.verdict, compat=compat)
    payload["reason"] = unproven_reason(proof)
    payload["description"] = payload["description"].replace(proof.verdict.reason, payload["reason"], 1)
    if proof.changes:
        payload["changed"] = proof.changes
    if on_unproven == "error":
        return NodeDecision(None, not_run(call, f"it needs a human's approval ({payload['reason']})"))
    if not has_checkpointer(configurable):
        why = (
            f"it needs a human's approval ({payload['reason']}), but the graph has no checkpointer to pause on: "
            "compile it with one, e.g. graph.compile(checkpointer=InMemorySaver())"
        )
        return NodeDecision(None, not_run(call, why))
    scratchpad = task_scratchpad(configurable)
    stored = stored_resume_values(scratchpad) if scratchpad is not None else []
    fresh = fresh_resume_index(scratchpad, configurable) if scratchpad is not None else None
    if stored and fresh != 0 and not _stored_decision(payload, stored[0], compat):
        # The task paused before without this approval in front (it was proven then, and is not now: the
        # definition, the key or the policy changed while it waited). Its stored answers belong to questions.
        why = (
            f"it needs a human's approval ({payload['reason']}), which it did not need when it paused; "
            "call it again to have it reviewed"
        )
        return NodeDecision(None, not_run(call, why))
    answer = interrupt(payload, response_schema=decision_response_schema(payload, compat=compat))
    decision: Decision = (
        answer.decision()
        if isinstance(answer, DecisionResponse)
        else validate_decision(payload, only_decision(payload, answer) if compat else answer)
    )
    if fresh == 0:  # a decision given just now, for the payload shown when the task paused: still this call?
        shown = await shown_interrupt_value(configurable, 0)
        if isinstance(shown, Mapping) and (
            shown.get("definition_hash") != tool.definition_hash
            or args_digest(shown.get("arguments")) != args_digest(call.get("args"))
        ):
            why = "the tool's definition or the call changed while the approval was pending; call it again"
            return NodeDecision(None, not_run(call, why))
    return NodeDecision(*_apply(call, decision))


def _apply(call: ToolCall, decision: Decision) -> tuple[dict[str, Any] | None, ToolMessage | None]:
    call_id, name = call.get("id") or "", call["name"]
    if decision["type"] == "approve":
        return dict(call.get("args") or {}), None
    if decision["type"] == "edit":
        return dict(decision["edited_action"]["args"]), None
    if decision["type"] == "reject":
        return None, rejection_message(name, call_id, decision.get("message"))
    return None, ToolMessage(content=decision["message"], name=name, tool_call_id=call_id)


# ------------------------------------------------------------------------------ what a decision does: messages


def rejection_message(call_name: str, tool_call_id: str, message: str | None) -> ToolMessage:
    """The error ``ToolMessage`` the model gets for a call a human rejected."""
    text = f"A human reviewer rejected this call to {call_name!r}; it was not run."
    if message and message.strip():
        text += f" Reason: {message.strip()}"
    return ToolMessage(content=text, name=call_name, tool_call_id=tool_call_id, status="error")


def expiry_message(call_name: str, tool_call_id: str, payload: ApprovalInterrupt, now: float) -> ToolMessage:
    """The error ``ToolMessage`` for a call approved after its approval expired (the rule's ``expires_after``)."""
    late = now - payload.get("expires_at", now)
    rule = f" (rule {payload['rule']!r})" if payload.get("rule") else ""
    text = (
        f"The approval of this call to {call_name!r} expired: it came {late:.0f} s after the deadline the "
        f"policy sets{rule}, so it counts as a rejection; the call was not run. Ask again if it is still needed."
    )
    return ToolMessage(content=text, name=call_name, tool_call_id=tool_call_id, status="error")


def denial_message(call_name: str, tool_call_id: str, reason: str) -> ToolMessage:
    """The error ``ToolMessage`` for a call the gate denied without asking anyone."""
    text = f"The approval gate denied this call to {call_name!r}; it was not run. Reason: {reason}"
    return ToolMessage(content=text, name=call_name, tool_call_id=tool_call_id, status="error")
