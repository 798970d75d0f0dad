"""What the tool node checks right before ``tools/call``: the policy on the current definition, or a genuine decision.

A call runs only if (a) the policy, evaluated on the tool's definition as listed *now*, allows it, or (b) a human
decided to approve (or edit) it through this graph's interrupt, and that decision is bound to exactly this call:
thread, tool call id, server identity, definition hash and the digest of the arguments about to be sent
(:mod:`langgraph_mcp.policy.binding`). What reached the node — message metadata, ``update_state`` as any node,
``Command(goto)`` — is never a decision by itself.

When neither holds, the node does not run the call. By default (``on_unproven="ask"``) it asks: an
``mcp_approval`` interrupt of its own, raised as the first interrupt of the call's task, whose reason says why the
node asks (and, after a change, ``changed`` says what changed: before → after). The answer is genuine by
construction: LangGraph hands an interrupt's resume value only to the task that raised it, and keeps it in the
checkpoint, so a resume on another worker finds it. With ``on_unproven="error"`` the call gets an error
``ToolMessage`` saying why instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

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
from langgraph_mcp.approval.oversight import Signer
from langgraph_mcp.approval.owners import Owner, owner_of, owner_verdict
from langgraph_mcp.approval.records import GateRecord
from langgraph_mcp.calls.results import TEXT_SEPARATOR
from langgraph_mcp.catalog import McpTool, ToolResolution, args_digest
from langgraph_mcp.credentials import warn_client_principal
from langgraph_mcp.payloads import ApprovalInterrupt, Decision, DecisionBinding, DefinitionChange
from langgraph_mcp.policy.binding import binding_problem, definition_changes
from langgraph_mcp.policy.policy import ApprovalPolicy, Verdict
from langgraph_mcp.questions.agent_chat_ui import QuestionShapes
from langgraph_mcp.questions.approval import approval_payload
from langgraph_mcp.questions.decisions import DecisionResponse

__all__ = [
    "REMEMBERED_KEY",
    "Effect",
    "NodeDecision",
    "OnUnproven",
    "Proof",
    "ask_node_approval",
    "ask_payload",
    "effect",
    "judged_verdict",
    "mind_client_principal",
    "not_run",
    "prove",
    "remembered_note",
    "shown_call",
    "strictest",
    "with_remembered_note",
]

OnUnproven: TypeAlias = Literal["ask", "error"]
"""What the tool node does with a call it cannot prove: ask a human (its own interrupt), or answer with an error."""


def strictest(verdicts: list[Verdict]) -> Verdict:
    """The strictest of several policies' verdicts on one call: a deny, else an ask, else an allow."""
    for kind in ("deny", "ask"):
        for verdict in verdicts:
            if verdict.kind == kind:
                return verdict
    return verdicts[0]


def judged_verdict(
    policies: list[ApprovalPolicy], call: ToolCall, owner: Owner, config: Any = None
) -> tuple[Verdict, str | None]:
    """The verdict of ``policies`` (the strictest) on ``call`` to ``owner``, and the principal it was judged for
    (the first policy's)."""
    if config is None:
        config = _config()
    principal = policies[0].principal_for(config)
    verdicts = [owner_verdict(p, call, owner, principal=p.principal_for(config)) for p in policies]
    return strictest(verdicts), principal


def _config() -> Any:
    try:
        return get_config()
    except RuntimeError:  # called outside a graph
        return None


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
    decided: DecisionBinding | None = None
    """The verified binding that proves it, when a decision (not the policy alone) does: the package's own record
    of who decided (its signed ``verdict``: ``approve``, ``edit`` or ``remembered``)."""
    denied: bool = field(init=False)
    """The policy denies it."""
    by_policy: bool = field(init=False)
    """The policy alone runs it (else a human's decision does: see ``may_send_again`` in the call driver)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "denied", self.verdict.denied)
        object.__setattr__(self, "by_policy", self.verdict.allowed)


def prove(
    signer: Signer,
    policies: list[ApprovalPolicy],
    call: ToolCall,
    resolution: ToolResolution,
    record: GateRecord | None,
    thread_id: str,
) -> Proof:
    """Check ``call`` (to the tool ``resolution`` found, as listed now) against the policies (the strictest verdict
    counts) and the record's signed binding, verified with ``signer``'s key for the tool's server."""
    owner = owner_of(resolution)
    tool = owner.tool
    verdict, _ = judged_verdict(policies, call, owner)
    if verdict.allowed or verdict.denied or tool is None:
        return Proof(verdict, verdict.allowed)
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
    binding = record["binding"]
    problem = binding_problem(
        binding,
        signer.key,
        thread_id=thread_id,
        tool_call_id=call.get("id") or "",
        tool=tool,
        identity=signer.server_identity(tool.server),
        arguments=call.get("args"),
    )
    if problem is None:
        return Proof(verdict, True, decided=binding)
    changes = definition_changes(record.get("definition"), tool.definition) if "definition" in problem else []
    return Proof(verdict, False, problem, changes)


# ------------------------------------------------------------------------------ the question and the answer


def ask_payload(
    call: ToolCall,
    tool: McpTool | None,
    verdict: Verdict,
    policy: ApprovalPolicy,
    *,
    shapes: QuestionShapes,
    config: Any = None,
) -> ApprovalInterrupt:
    """The ``mcp_approval`` payload every path asks with: the call, the rule and its reason, ``expires_at`` (the
    policy's clock), and the principal with where it comes from (:class:`~langgraph_mcp.payloads.PrincipalInfo`)."""
    if config is None:
        config = _config()
    payload = shapes.approval(approval_payload(call, tool, verdict, now=policy.clock()))
    principal = policy.principal_for(config)
    origin = policy.principal_origin_for(config)
    if principal is not None and origin is not None:
        payload["principal"] = {"id": principal, "origin": origin}
    return payload


def mind_client_principal(payload: ApprovalInterrupt) -> None:
    """Warn (once) when a card offers to remember a decision for a principal the client asserted."""
    who = payload.get("principal")
    if who is not None and who["origin"] == "client" and "principal" in (payload.get("remember") or []):
        warn_client_principal("a decision remembered for this user")


@dataclass(frozen=True)
class Effect:
    """What a human's decision does to its call: run it with ``arguments``, or answer it with ``message``."""

    decision: Decision
    arguments: dict[str, Any] | None = None
    message: ToolMessage | None = None
    outcome: Literal["ran", "rejected", "expired", "failed"] = "ran"
    """The record's outcome when the call does not run (``ran`` while it is to run)."""


def effect(
    call: ToolCall, decision: Decision, shown: Mapping[str, Any], *, now: float, tool: McpTool | None
) -> Effect:
    """What ``decision``, given to the card ``shown`` (the payload as it was when the call paused), does to
    ``call`` to ``tool`` as listed now: every path applies it the same way.

    * an approve or edit given after ``shown["expires_at"]`` counts as a rejection (the rule's ``expires_after``);
    * an approve or edit of a tool whose definition is no longer the one shown does not run (asked again on the
      next call: a changed definition re-asks);
    * approve runs the call as it is; edit with the edited arguments; reject answers with the reason; respond with
      the human's text."""
    name, call_id = call["name"], call.get("id") or ""
    if decision["type"] in ("approve", "edit"):
        expires_at = shown.get("expires_at")
        if isinstance(expires_at, int | float) and now > expires_at:
            return Effect(
                decision, message=expiry_message(name, call_id, cast(Any, shown), now), outcome="expired"
            )
        hash_shown = shown.get("definition_hash")
        if tool is not None and isinstance(hash_shown, str) and hash_shown != tool.definition_hash:
            why = "the tool's definition changed while the approval was pending; call it again to have it reviewed"
            return Effect(decision, message=not_run(call, why), outcome="failed")
        if tool is not None and args_digest(shown.get("arguments")) != args_digest(call.get("args")):
            return Effect(
                decision,
                message=not_run(call, "the call changed while the approval was pending"),
                outcome="failed",
            )
    if decision["type"] == "approve":
        return Effect(decision, arguments=dict(call.get("args") or {}))
    if decision["type"] == "edit":
        return Effect(decision, arguments=dict(decision["edited_action"]["args"]))
    if decision["type"] == "reject":
        return Effect(
            decision, message=rejection_message(name, call_id, decision.get("message")), outcome="rejected"
        )
    return Effect(
        decision,
        message=ToolMessage(content=decision["message"], name=name, tool_call_id=call_id),
        outcome="rejected",
    )


def shown_call(payload: Mapping[str, Any]) -> ToolCall:
    """The call an ``mcp_approval`` payload shows (its published name, arguments and tool call id)."""
    return {
        "name": str(payload.get("published_name") or payload.get("tool") or ""),
        "args": dict(payload.get("arguments") or {}),
        "id": str(payload.get("tool_call_id") or ""),
        "type": "tool_call",
    }


REMEMBERED_KEY = "mcp_remembered"
"""``ToolMessage.response_metadata`` key of a call that ran under a remembered approval: what the package knows of
it (``decided_by``, ``rule``, and where known ``scope``, ``owner``, ``decided_at``)."""


def remembered_note(remembered: Mapping[str, Any]) -> str:
    """The short note a call run under a remembered approval carries in its ToolMessage's text."""
    where = {"thread": " on this thread", "principal": " for this user"}.get(str(remembered.get("scope")), "")
    return f"(Ran under a remembered approval{where}; nobody was asked this time.)"


def with_remembered_note(message: ToolMessage, remembered: Mapping[str, Any]) -> ToolMessage:
    """``message`` of a call that ran under a remembered approval, saying so (metadata and a short note)."""
    note = remembered_note(remembered)
    content = message.content
    if isinstance(content, str):
        new_content: Any = f"{content}\n\n{note}" if content else note
    else:
        new_content = [
            *content,
            {"type": "text", "text": f"{TEXT_SEPARATOR}{note}"},
        ]  # a later block: its own line
    metadata = {**message.response_metadata, REMEMBERED_KEY: dict(remembered)}
    return message.model_copy(update={"content": new_content, "response_metadata": metadata})


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
    effect: Effect | None = None
    """What the decision did (``None``: nobody was asked)."""
    index: int = 0
    """The approval's place among the task's interrupts (the call's questions come after it)."""


def _stored_decision(payload: ApprovalInterrupt, value: Any, shapes: QuestionShapes) -> bool:
    try:
        shapes.decision(payload, value)
    except Exception:  # DecisionError, or a value of another shape altogether
        return False
    return True


async def ask_node_approval(
    call: ToolCall,
    tool: McpTool,
    proof: Proof,
    policy: ApprovalPolicy,
    *,
    shapes: QuestionShapes,
    on_unproven: OnUnproven,
    start: int = 0,
    approved_at: int | None = None,
) -> NodeDecision:
    """Ask the human about ``call`` with the node's own interrupt (or answer with an error: ``on_unproven``).

    Raises ``GraphInterrupt`` to pause. ``start``: how many interrupts this task run has made before (a sign-in);
    the approval comes after them and after any stored answer of a pause that came before it was needed; the
    call's questions come after the approval. ``approved_at``: where this execution's approval was answered, as
    its consumed marker recorded it (:func:`~langgraph_mcp.approval.once.approval_index`), if known."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:  # called outside a graph
        configurable = {}
    payload = ask_payload(call, tool, proof.verdict, policy, shapes=shapes)
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
    at = start
    later = stored[start:]
    if later:
        # The task may have paused before this approval was needed (a sign-in, a server's question; or it was
        # proven then and is not now: another worker's key, a changed policy). Pauses chain: those answers stay
        # theirs, the approval is asked after them, and the call's questions come after the approval. Where the
        # approval was answered is told by what was asked first, so an answer given to the approval itself is
        # checked by its own response_schema below (a wrong one is refused, the same interrupt stays pending).
        found = await _approval_place(call, payload, later, start, approved_at, fresh, configurable, shapes)
        for _ in range(found):  # consumed without a schema: validated when saved, for their own questions
            interrupt(None)
        at = start + found
    answer = interrupt(payload, response_schema=shapes.decision_model(payload))
    decision: Decision = (
        answer.decision() if isinstance(answer, DecisionResponse) else shapes.decision(payload, answer)
    )
    shown: Mapping[str, Any] | None = None
    if fresh == at:  # a decision given just now, for the payload shown when the task paused
        value = await shown_interrupt_value(configurable, at)
        shown = value if isinstance(value, Mapping) else None
    if shown is None:  # applied when it was given (this task ran on it then): not judged a second time
        done = effect(call, decision, payload, now=float("-inf"), tool=None)
    else:
        done = effect(call, decision, shown, now=policy.clock(), tool=tool)
    return NodeDecision(done.arguments, done.message, done, at)


async def _approval_place(
    call: ToolCall,
    payload: ApprovalInterrupt,
    later: list[Any],
    start: int,
    approved_at: int | None,
    fresh: int | None,
    configurable: Mapping[str, Any],
    shapes: QuestionShapes,
) -> int:
    """Where, among the task's stored answers after ``start`` (``later``), its approval was answered;
    ``len(later)`` when it was not (yet): it is asked after them.

    Known from the execution's consumed marker (``approved_at``), or from what was shown for the answer given
    just now (an ``mcp_approval`` of this call: the answer is that approval's, right or wrong). Else, on a card
    (whose answer to a question looks like a decision, ``{"decisions": [...]}``), a first answer that is a
    decision for this card is the approval asked before the call's questions (the order of a call that needed it
    from the start), unless the answer given just now is that very one and was shown for something else;
    anything else is asked again. In the plain shapes a question's answer is never a decision: the first stored
    answer that is one is the approval."""
    if approved_at is not None and start <= approved_at < start + len(later):
        return approved_at - start
    if fresh is not None and fresh >= start:
        shown = await shown_interrupt_value(configurable, fresh)
        if isinstance(shown, Mapping) and shown.get("type") == "mcp_approval":
            if shown.get("tool_call_id") == call.get("id"):
                return fresh - start
        elif fresh == start and isinstance(shown, Mapping):  # the only candidate answered something else
            return len(later)
    if not shapes.cards:
        return next((i for i, v in enumerate(later) if _stored_decision(payload, v, shapes)), len(later))
    if _stored_decision(payload, later[0], shapes):
        return 0
    return len(later)


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
