"""What is waiting for a human, and one ``Command`` answering it: ``pending_interrupts``, ``resume_command``.

A graph with MCP tools pauses for these kinds of questions: ``mcp_approval`` (the approval gate asks about a
tool call), ``mcp_elicitation`` (a server asks the user for input mid-call), ``mcp_authorization`` (a sign-in),
``mcp_sampling`` (a server asks the client's model for a completion) and ``mcp_sampling_review`` (that completion,
shown before it goes back; ``review_completion=True``). Several can be pending at
once, each in its own task with its own interrupt id; LangGraph resumes them all with one
``Command(resume={interrupt_id: value, ...})``. This module builds that command from answers keyed by the
model's ``tool_call_id`` (or by interrupt id), and checks every value against the interrupt it answers
*before* anything is sent::

    out = graph.invoke(inputs, config)                  # paused
    command = resume_command(
        out["__interrupt__"],
        decisions={"call_1": {"type": "approve"}, "call_2": {"type": "reject", "message": "not today"}},
        answers={"call_3": {"<request key>": {"action": "accept", "content": {"date": "2026-10-01"}}}},
    )
    graph.invoke(command, config)

``pending`` may be the ``__interrupt__`` list of an ``invoke``/``stream`` output (or the output dict
itself), a ``GraphOutput`` (``version="v2"``), a ``StateSnapshot`` (``graph.get_state(config)``, with or
without ``subgraphs=True``: interrupts raised inside subgraphs, such as the approval gate's, are listed on
the parent snapshot too), a list of ``Interrupt``\\s, the ``{"id", "value"}`` dicts the LangGraph SDK
returns, or what :func:`pending_interrupts` and :func:`pending_for_thread` return.
:func:`pending_for_thread` reads a thread's pending interrupts directly.

Approvals and elicitations of one tool call are told apart by the argument they come in (``decisions`` or
``answers``), so the same ``tool_call_id`` can be used for both. ``decisions`` also answers a pending sampling
request (``{"type": "approve"}``, ``{"type": "edit", "messages": [...]}``, ``{"type": "reject"}``) or completion
review (``{"type": "edit", "text": ...}`` sends that text instead). A decision for an Agent Chat UI card (its
payload has ``action_requests``) is wrapped as ``{"decisions": [decision]}`` automatically.

**Question kinds are a registry** (:class:`QuestionKind`, :func:`register_question_kind`): each kind names its
payload ``type``, its one pydantic answer model (what the node passes as ``interrupt(payload,
response_schema=...)``, whose JSON Schema clients are shown, and what an answer is checked with here), and the
argument of :func:`resume_command` that takes its answer. The five kinds above are registered at the bottom of this
module; a new kind (a graph node of your own that asks through ``interrupt``) is one more registration.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, cast

from langgraph.types import Command, Interrupt, StateSnapshot
from pydantic import BaseModel, ValidationError

from langgraph_mcp.errors import AnswerError, AnswerRefusedError, DecisionError, ResumeError, ResumeTypeError
from langgraph_mcp.payloads import (
    APPROVAL_INTERRUPT_TYPE,
    AUTHORIZATION_INTERRUPT_TYPE,
    ELICITATION_INTERRUPT_TYPE,
    SAMPLING_INTERRUPT_TYPE,
    SAMPLING_REVIEW_INTERRUPT_TYPE,
    ApprovalInterrupt,
    AuthorizationInterrupt,
    ElicitationInterrupt,
    SamplingInterrupt,
    SamplingReviewInterrupt,
)
from langgraph_mcp.questions.agent_chat_ui import shapes_of
from langgraph_mcp.questions.answers import answers_response_schema, validate_answers
from langgraph_mcp.questions.decisions import clean_answer, only_decision
from langgraph_mcp.questions.sign_in import check_sign_in_answer, sign_in_response_schema

__all__ = [
    "AnswerArgument",
    "PendingKind",
    "PendingMcpInterrupt",
    "QuestionKind",
    "apending_for_thread",
    "pending_for_thread",
    "pending_interrupts",
    "question_kinds",
    "register_question_kind",
    "resume_command",
    "unregister_question_kind",
]

PendingKind: TypeAlias = Literal["approval", "elicitation", "authorization", "sampling", "sampling_review"]
"""The built-in kinds (a registered kind adds its own name)."""
PendingPayload: TypeAlias = (
    ApprovalInterrupt
    | ElicitationInterrupt
    | AuthorizationInterrupt
    | SamplingInterrupt
    | SamplingReviewInterrupt
    | Mapping[str, Any]  # a registered kind's payload
)
AnswerArgument: TypeAlias = Literal["decisions", "answers", "sign_ins"]
"""The argument of :func:`resume_command` that answers a kind."""

_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class PendingMcpInterrupt:
    """One MCP interrupt waiting for a human: what a UI or CLI lists and answers."""

    interrupt_id: str
    kind: str
    """``"approval"`` (answer with a decision), ``"elicitation"`` (answer every request key), ``"authorization"``
    (a sign-in: answer with the callback URL, or decline), ``"sampling"`` (a server's request for a completion) or
    ``"sampling_review"`` (the completion, before it goes back); the last two are answered with a decision; or the
    name of a registered :class:`QuestionKind`."""
    tool_call_id: str
    payload: PendingPayload

    @property
    def approval(self) -> ApprovalInterrupt:
        """The payload as an approval (raises ``ResumeTypeError``, a ``TypeError``, for an elicitation)."""
        if self.kind != "approval":
            raise ResumeTypeError(f"interrupt {self.interrupt_id} is an elicitation, not an approval")
        return cast(ApprovalInterrupt, self.payload)

    @property
    def elicitation(self) -> ElicitationInterrupt:
        """The payload as an elicitation (raises ``ResumeTypeError``, a ``TypeError``, for an approval)."""
        if self.kind != "elicitation":
            raise ResumeTypeError(f"interrupt {self.interrupt_id} is an {self.kind}, not an elicitation")
        return cast(ElicitationInterrupt, self.payload)

    @property
    def authorization(self) -> AuthorizationInterrupt:
        """The payload as a sign-in (raises ``ResumeTypeError``, a ``TypeError``, for any other kind)."""
        if self.kind != "authorization":
            raise ResumeTypeError(f"interrupt {self.interrupt_id} is an {self.kind}, not a sign-in")
        return cast(AuthorizationInterrupt, self.payload)

    @property
    def sampling(self) -> SamplingInterrupt:
        """The payload as a sampling request (raises ``ResumeTypeError``, a ``TypeError``, for any other kind)."""
        if self.kind != "sampling":
            raise ResumeTypeError(f"interrupt {self.interrupt_id} is an {self.kind}, not a sampling request")
        return cast(SamplingInterrupt, self.payload)

    @property
    def sampling_review(self) -> SamplingReviewInterrupt:
        """The payload as a completion review (raises ``ResumeTypeError``, a ``TypeError``, for any other kind)."""
        if self.kind != "sampling_review":
            raise ResumeTypeError(f"interrupt {self.interrupt_id} is an {self.kind}, not a completion review")
        return cast(SamplingReviewInterrupt, self.payload)

    @property
    def is_card(self) -> bool:
        """True for an approval or sampling card in LangChain ``HITLRequest`` mode (answered as
        ``{"decisions": [...]}``), read from the payload (:func:`~.agent_chat_ui.shapes_of`)."""
        return _KINDS[self.kind].argument == "decisions" and shapes_of(self.payload).cards


@dataclass(frozen=True)
class QuestionKind:
    """One kind of MCP interrupt: how :func:`pending_interrupts` recognizes it and :func:`resume_command` answers it."""

    kind: str
    """Its name in :attr:`PendingMcpInterrupt.kind` (``"approval"``, ...)."""
    payload_type: str
    """The ``type`` of its payload (``"mcp_approval"``, ...): how a pending interrupt is recognized."""
    argument: AnswerArgument
    """The argument of :func:`resume_command` its answers come in (``decisions=`` for a card with decision
    types, so one ``Command`` can answer it together with approvals)."""
    answer_model: Callable[[Mapping[str, Any]], type[BaseModel]]
    """The one pydantic answer model for a payload: the node asks with ``interrupt(payload,
    response_schema=answer_model(payload))`` (LangGraph checks a resume with it before saving it, and shows its
    JSON Schema), and :func:`resume_command` checks an answer with it first."""
    take: Callable[[PendingMcpInterrupt, object, str], object] | None = None
    """How :func:`resume_command` takes an answer (``(item, value, argument)`` → the value sent; raises
    :class:`~langgraph_mcp.errors.ResumeError` in words); default: validated with :attr:`answer_model` and sent
    as its JSON dump (see :func:`model_answer`)."""

    def answer(self, item: PendingMcpInterrupt, value: object, argument: str) -> object:
        """``value`` checked for ``item`` and normalized, or :class:`~langgraph_mcp.errors.ResumeError`."""
        if self.take is not None:
            return self.take(item, value, argument)
        return model_answer(item, self.answer_model(item.payload), value, argument)


_KINDS: dict[str, QuestionKind] = {}
_BY_TYPE: dict[str, QuestionKind] = {}


def register_question_kind(kind: QuestionKind) -> QuestionKind:
    """Make :func:`pending_interrupts` list payloads of ``kind.payload_type`` and :func:`resume_command` answer
    them; raises :class:`~langgraph_mcp.errors.ResumeError` when the name or payload type is taken."""
    for taken, key, what in ((_KINDS, kind.kind, "kind"), (_BY_TYPE, kind.payload_type, "payload type")):
        if key in taken and taken[key] is not kind:
            raise ResumeError(f"question {what} {key!r} is already registered")
    _KINDS[kind.kind] = _BY_TYPE[kind.payload_type] = kind
    return kind


def unregister_question_kind(name: str) -> None:
    """Forget a registered kind (for tests that add one): its interrupts are no longer listed or answered."""
    kind = _KINDS.pop(name, None)
    if kind is not None:
        _BY_TYPE.pop(kind.payload_type, None)


def question_kinds() -> Mapping[str, QuestionKind]:
    """Every registered kind by name, in registration order (the built-in ones first)."""
    return _KINDS


def _kinds_answered_by(argument: str) -> tuple[str, ...]:
    return tuple(name for name, kind in _KINDS.items() if kind.argument == argument)


def model_answer(item: PendingMcpInterrupt, model: type[BaseModel], value: object, argument: str) -> object:
    """``value`` validated with ``model`` (the interrupt's ``response_schema``) and dumped as JSON; raises
    :class:`~langgraph_mcp.errors.ResumeError` naming the tool call, the interrupt and every problem."""
    cause: Exception
    try:
        return model.model_validate(value).model_dump(mode="json", exclude_none=True)
    except AnswerRefusedError as exc:  # refused on a card, in words
        problems, cause = str(exc), exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'answer'}: {error['msg']}" for error in exc.errors()
        )
        cause = exc
    schema = json.dumps(model.model_json_schema(), separators=(",", ":"))
    raise ResumeError(
        f"{argument}[{item.tool_call_id!r}]: {item.kind} (interrupt {item.interrupt_id}): {problems}; "
        f"expected a value of this JSON Schema: {schema}"
    ) from cause


# ------------------------------------------------------------------------------------------------ reading


def _raw_interrupts(pending: object) -> Iterable[tuple[str, object]]:
    """``(id, value)`` of every interrupt in ``pending``, in the order found (duplicates included)."""
    if pending is None:
        return
    if isinstance(pending, Interrupt):
        yield pending.id, pending.value
        return
    if isinstance(pending, PendingMcpInterrupt):  # what pending_interrupts / pending_for_thread return
        yield pending.interrupt_id, pending.payload
        return
    if isinstance(pending, StateSnapshot):
        yield from _raw_interrupts(list(pending.interrupts))
        for task in pending.tasks:
            yield from _raw_interrupts(list(task.interrupts))
            if isinstance(task.state, StateSnapshot):
                yield from _raw_interrupts(task.state)
        return
    interrupts = getattr(pending, "interrupts", None)
    if interrupts is not None and not isinstance(pending, Mapping):  # GraphOutput (version="v2")
        yield from _raw_interrupts(list(interrupts))
        return
    if isinstance(pending, Mapping):
        if "__interrupt__" in pending:  # an invoke output or an "updates" stream chunk
            yield from _raw_interrupts(list(pending["__interrupt__"] or ()))
            return
        if "id" in pending and "value" in pending:  # the LangGraph SDK's Interrupt dict
            yield str(pending["id"]), pending["value"]
            return
        if isinstance(pending.get("interrupts"), list):  # the LangGraph SDK's thread state
            yield from _raw_interrupts(pending["interrupts"])
            return
        # An invoke output (or a run's final values) without "__interrupt__": the run did not pause.
        return
    if isinstance(pending, list | tuple):
        for item in pending:
            yield from _raw_interrupts(item)
        return
    raise ResumeTypeError(
        "pending must be interrupts (invoke output, GraphOutput, StateSnapshot, or a list of Interrupt); "
        f"got {type(pending).__name__}"
    )


def pending_interrupts(pending: object) -> list[PendingMcpInterrupt]:
    """The MCP interrupts (every registered :class:`QuestionKind`) in ``pending``, typed, each once, in order.

    Interrupts of other kinds (raised by your own nodes, unless registered) are left out.
    """
    seen: set[str] = set()
    out: list[PendingMcpInterrupt] = []
    for interrupt_id, value in _raw_interrupts(pending):
        if interrupt_id in seen:
            continue
        payload_type = value.get("type") if isinstance(value, dict) else None
        kind = _BY_TYPE.get(payload_type) if isinstance(payload_type, str) else None
        if kind is None:
            continue
        seen.add(interrupt_id)
        payload = cast(PendingPayload, value)
        out.append(
            PendingMcpInterrupt(interrupt_id, kind.kind, str(payload.get("tool_call_id", "")), payload)
        )
    return out


class _ReadsState(Protocol):
    def get_state(self, config: Any, *, subgraphs: bool = False) -> StateSnapshot: ...


class _AReadsState(Protocol):
    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> StateSnapshot: ...


def pending_for_thread(graph: _ReadsState, config: Any) -> list[PendingMcpInterrupt]:
    """The MCP interrupts pending on a thread (``config``: ``{"configurable": {"thread_id": ...}}``)."""
    return pending_interrupts(graph.get_state(config, subgraphs=True))


async def apending_for_thread(graph: _AReadsState, config: Any) -> list[PendingMcpInterrupt]:
    """Async :func:`pending_for_thread` (use it with async checkpointers)."""
    return pending_interrupts(await graph.aget_state(config, subgraphs=True))


# ------------------------------------------------------------------------------------------------ answering


def _describe_pending(items: list[PendingMcpInterrupt]) -> str:
    if not items:
        return "nothing is pending"
    shown = ", ".join(f"{p.tool_call_id!r} ({p.kind}, interrupt {p.interrupt_id})" for p in items)
    return f"pending: {shown}"


def _argument_of(kind: str) -> str:
    return _KINDS[kind].argument


def _resolve(
    key: object, kinds: tuple[str, ...], pending: list[PendingMcpInterrupt], argument: str
) -> PendingMcpInterrupt:
    """The pending interrupt that ``key`` (an interrupt id or a tool_call_id) names for one of ``kinds``."""
    kind = kinds[0]  # "approval" for decisions= (which also answers sampling requests and completion reviews)
    if not isinstance(key, str):
        raise ResumeError(f"{argument}: keys must be tool_call_ids or interrupt ids (strings), got {key!r}")
    by_id = [p for p in pending if p.interrupt_id == key]
    if by_id:
        found = by_id[0]
        if found.kind not in kinds:
            raise ResumeError(
                f"{argument}[{key!r}]: interrupt {key} (tool call {found.tool_call_id!r}) is an "
                f"{found.kind}, not an {kind}; give its value in {_argument_of(found.kind)}="
            )
        return found
    by_call = [p for p in pending if p.tool_call_id == key and p.kind in kinds]
    if len(by_call) == 1:
        return by_call[0]
    if len(by_call) > 1:
        ids = ", ".join(p.interrupt_id for p in by_call)
        raise ResumeError(
            f"{argument}[{key!r}]: tool call {key!r} has {len(by_call)} pending {kind}s (interrupts {ids}); "
            "key the value by interrupt id instead"
        )
    wrong_kind = [p for p in pending if p.tool_call_id == key]
    if wrong_kind:
        raise ResumeError(
            f"{argument}[{key!r}]: tool call {key!r} has no pending {kind}; it is waiting for an "
            f"{wrong_kind[0].kind} (interrupt {wrong_kind[0].interrupt_id}), give that value in "
            f"{_argument_of(wrong_kind[0].kind)}="
        )
    if _INTERRUPT_ID.fullmatch(key):
        raise ResumeError(
            f"{argument}[{key!r}]: interrupt {key} is not pending (already answered, or from another run); "
            f"{_describe_pending(pending)}"
        )
    raise ResumeError(
        f"{argument}[{key!r}]: no pending {kind} for tool call {key!r}; {_describe_pending(pending)}"
    )


def _approval_value(item: PendingMcpInterrupt, decision: object, argument: str) -> object:
    payload = item.approval
    try:
        if isinstance(decision, Mapping) and "decisions" in decision and "type" not in decision:
            decision = only_decision(payload, decision)  # already LangChain's HITLResponse shape
        clean = clean_answer(payload, decision)  # an added type's answer is sent as itself
    except DecisionError as exc:
        raise ResumeError(f"{argument}[{item.tool_call_id!r}]: {exc}") from exc
    return shapes_of(payload).answer(clean)


_SAMPLING_SHAPES = {
    ("sampling", False): '{"type": "approve"}, {"type": "edit", "messages": [{"role": "user", "content": '
    '{"type": "text", "text": "..."}}]} or {"type": "reject"}',
    ("sampling_review", False): '{"type": "approve"}, {"type": "edit", "text": "..."} or {"type": "reject"}',
    ("sampling", True): '{"type": "approve"}, {"type": "edit", "edited_action": {"name": NAME, "args": '
    '{"prompt": "..."}}} or {"type": "reject"}',
    (
        "sampling_review",
        True,
    ): '{"type": "approve"}, {"type": "edit", "edited_action": {"name": NAME, "args": '
    '{"completion": "..."}}} or {"type": "reject"}',
}


def sampling_decision(item: PendingMcpInterrupt, decision: object, argument: str = "decisions") -> object:
    """A sampling or completion-review decision, checked with the model the interrupt's ``response_schema`` is
    (normalized); raises :class:`~langgraph_mcp.errors.ResumeError` saying what was wrong and what fits."""
    review = item.kind == "sampling_review"
    shapes = shapes_of(item.payload)
    model = shapes.review_model(item.payload) if review else shapes.sampling_model(item.payload)
    decision = shapes.answer(decision)
    cause: Exception
    try:
        return model.model_validate(decision).model_dump(mode="json", exclude_none=True)
    except AnswerRefusedError as exc:  # a card edit refused in words (an edit of a shown-only argument)
        problems, cause = str(exc), exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'decision'}: {error['msg']}"
            for error in exc.errors()
        )
        cause = exc
    shape = _SAMPLING_SHAPES[(item.kind, shapes.cards)].replace(
        "NAME", json.dumps(str(item.payload.get("published_name", "")))
    )
    what = "completion review" if review else "sampling request"
    raise ResumeError(
        f"{argument}[{item.tool_call_id!r}]: {what} of MCP server {item.payload.get('server', '?')!r} "
        f"(interrupt {item.interrupt_id}): {problems}; expected {shape}"
    ) from cause


def _elicitation_value(item: PendingMcpInterrupt, answers: object, argument: str) -> object:
    payload = item.elicitation
    try:
        return validate_answers(payload["requests"], answers)
    except AnswerError as exc:
        key = f" (request key {exc.key!r})" if exc.key else ""
        raise ResumeError(
            f"{argument}[{item.tool_call_id!r}]{key}: tool call {item.tool_call_id!r} "
            f"({payload.get('published_name', '?')}): {exc}"
        ) from exc


def _sign_in_value(item: PendingMcpInterrupt, answer: object, argument: str) -> object:
    payload = item.authorization
    try:
        return check_sign_in_answer(payload, answer)
    except AnswerError as exc:
        raise ResumeError(
            f"{argument}[{item.tool_call_id!r}]: sign-in of {payload['principal']!r} to MCP server "
            f"{payload['server']!r}: {exc}"
        ) from exc


def resume_command(
    pending: object,
    *,
    answers: Mapping[str, object] | None = None,
    decisions: Mapping[str, object] | None = None,
    sign_ins: Mapping[str, object] | None = None,
) -> Command[Any]:
    """One ``Command(resume={interrupt_id: value, ...})`` answering some or all of the pending MCP interrupts.

    ``decisions`` maps a ``tool_call_id`` (or interrupt id) of a pending approval to a
    :data:`~langgraph_mcp.payloads.Decision`; ``answers`` maps one of a pending elicitation to its answers,
    ``{request_key: {"action": ...}}``. Every value is checked against its interrupt first (decision type
    allowed, edited args fit the tool's inputSchema; every request key answered and each answer fits its
    schema) and sent normalized. ``sign_ins`` maps one of a pending sign-in (``mcp_authorization``) to
    ``{"callback_url": "<the full address the browser was sent to>"}`` or ``{"action": "decline"}``; the callback
    must carry that sign-in's ``state``. ``decisions`` also answers a pending sampling request (approve / edit the
    messages / reject) or completion review (approve / edit the text / reject), checked like the interrupt's
    ``response_schema``. Interrupts left unanswered stay pending.

    Raises :class:`~langgraph_mcp.errors.ResumeError`, naming the offending tool call (and request key), for
    an id that is not pending (unknown, or already answered), a value of the wrong kind, an invalid value, an
    interrupt answered twice, or nothing to answer.
    """
    items = pending_interrupts(pending)
    resume: dict[str, object] = {}
    answered_by: dict[str, str] = {}
    arguments: tuple[tuple[AnswerArgument, Mapping[str, object] | None], ...] = (
        ("decisions", decisions),
        ("answers", answers),
        ("sign_ins", sign_ins),
    )
    for argument, values in arguments:
        if values is None:
            continue
        kinds = _kinds_answered_by(argument)
        if not isinstance(values, Mapping):
            raise ResumeError(
                f"{argument} must be a mapping of tool_call_id (or interrupt id) to a value, "
                f"got {type(values).__name__}"
            )
        for key, value in values.items():
            item = _resolve(key, kinds, items, argument)
            if item.interrupt_id in resume:
                raise ResumeError(
                    f"{argument}[{key!r}]: tool call {item.tool_call_id!r} (interrupt {item.interrupt_id}) "
                    f"is already answered by {answered_by[item.interrupt_id]}"
                )
            resume[item.interrupt_id] = _KINDS[item.kind].answer(item, value, argument)
            answered_by[item.interrupt_id] = f"{argument}[{key!r}]"
    if not resume:
        raise ResumeError(
            f"nothing to resume: give decisions=, answers= and/or sign_ins=; {_describe_pending(items)}"
        )
    return Command(resume=resume)


# ------------------------------------------------------------------------------------------------ the kinds


for _kind in (
    QuestionKind(
        "approval",
        APPROVAL_INTERRUPT_TYPE,
        "decisions",
        lambda p: shapes_of(p).decision_model(cast(ApprovalInterrupt, p)),
        _approval_value,
    ),
    QuestionKind(
        "elicitation",
        ELICITATION_INTERRUPT_TYPE,
        "answers",
        lambda p: answers_response_schema(cast(ElicitationInterrupt, p)["requests"]),
        _elicitation_value,
    ),
    QuestionKind(
        "authorization",
        AUTHORIZATION_INTERRUPT_TYPE,
        "sign_ins",
        sign_in_response_schema,
        _sign_in_value,
    ),
    QuestionKind(
        "sampling",
        SAMPLING_INTERRUPT_TYPE,
        "decisions",
        lambda p: shapes_of(p).sampling_model(p),
        sampling_decision,
    ),
    QuestionKind(
        "sampling_review",
        SAMPLING_REVIEW_INTERRUPT_TYPE,
        "decisions",
        lambda p: shapes_of(p).review_model(p),
        sampling_decision,
    ),
):
    register_question_kind(_kind)
