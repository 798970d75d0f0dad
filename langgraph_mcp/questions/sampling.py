"""A server's sampling request as a human sees it (the ``mcp_sampling`` payload) and the decisions checked on resume.

Pure: no I/O. The request becomes a JSON-shaped payload (the messages as the server sent them, the system prompt,
the model preferences, the token budget after the client's cap); a decision is ``approve``, ``edit`` (new messages,
text only) or ``reject``, checked by :class:`SamplingDecisionModel` before LangGraph saves it, so a wrong one is
refused and the same interrupt stays answerable. With ``review_completion=True`` the model's completion is shown
too (the ``mcp_sampling_review`` payload), decided by :class:`CompletionDecisionModel`: ``approve``, ``edit`` (the
text the server gets) or ``reject``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeVar, cast

import mcp.types as types
from pydantic import BaseModel, ConfigDict, Field, model_validator

from langgraph_mcp.errors import AnswerError, AnswerRefusedError
from langgraph_mcp.payloads import (
    SAMPLING_INTERRUPT_TYPE,
    SAMPLING_REVIEW_INTERRUPT_TYPE,
    ActionRequest,
    CompletionDecision,
    ReviewConfig,
    SamplingDecision,
    SamplingInterrupt,
    SamplingMessage,
    SamplingReject,
    SamplingReviewInterrupt,
)
from langgraph_mcp.questions.cards import (
    DECISION_FIELD,
    HELP_KEY,
    REASON_FIELD,
    Word,
    card_config,
    card_word,
    words_help,
)
from langgraph_mcp.questions.schemas import refused_on_card

__all__ = [
    "CompletionDecisionModel",
    "HitlCompletionDecisionModel",
    "HitlSamplingDecisionModel",
    "SamplingDecisionModel",
    "review_card",
    "review_card_model",
    "review_payload",
    "sampling_card",
    "sampling_card_model",
    "sampling_payload",
    "sampling_texts",
]


def sampling_payload(
    params: types.CreateMessageRequestParams,
    *,
    tool_call_id: str,
    server: str,
    tool: str,
    published_name: str,
    max_tokens_cap: int,
) -> SamplingInterrupt:
    """The ``mcp_sampling`` interrupt payload for one request."""
    preferences = params.model_preferences
    return {
        "type": SAMPLING_INTERRUPT_TYPE,
        "tool_call_id": tool_call_id,
        "server": server,
        "tool": tool,
        "published_name": published_name,
        "messages": [
            cast(SamplingMessage, m.model_dump(mode="json", by_alias=True, exclude_none=True))
            for m in params.messages
        ],
        "system_prompt": params.system_prompt,
        "model_preferences": (
            preferences.model_dump(mode="json", by_alias=True, exclude_none=True) if preferences else None
        ),
        "max_tokens": min(params.max_tokens, max_tokens_cap),
        "requested_max_tokens": params.max_tokens,
    }


class _TextBlock(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["text"]
    text: str = Field(max_length=200_000)


class _EditedMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: _TextBlock


def _misfit(
    kind: str, field: str, edited: object, message: object, *, needs: str, changes: str
) -> str | None:
    """What is wrong with an approve / edit (with ``field``) / reject (with an optional message) decision, if
    anything (both review points, before and after the model runs, take this shape)."""
    if kind == "edit" and edited is None:
        return f"an 'edit' decision needs {field!r} ({needs})"
    if kind != "edit" and edited is not None:
        return f"a {kind!r} decision takes no {field!r} (use 'edit' to change {changes})"
    if kind != "reject" and message is not None:
        return "only a 'reject' decision takes a 'message'"
    return None


class SamplingDecisionModel(BaseModel):
    """The resume value of an ``mcp_sampling`` interrupt: ``{"type": "approve"}``, ``{"type": "edit", "messages":
    [{"role": "user", "content": {"type": "text", "text": ...}}, ...]}`` or ``{"type": "reject"[, "message"]}``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["approve", "edit", "reject"]
    messages: list[_EditedMessage] | None = Field(default=None, min_length=1, max_length=200)
    message: str | None = Field(default=None, max_length=2000)

    @model_validator(mode="after")
    def _fits_its_type(self) -> SamplingDecisionModel:
        needs = "the messages the model should answer"
        problem = _misfit(self.type, "messages", self.messages, self.message, needs=needs, changes="them")
        if problem is not None:
            raise ValueError(problem)
        return self

    def decision(self) -> SamplingDecision:
        return cast(SamplingDecision, self.model_dump(mode="json", exclude_none=True))


def sampling_texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(role, text)`` per message; non-text content is named, not sent (the model gets text only)."""
    out: list[tuple[str, str]] = []
    for message in messages:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        parts = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'content')} omitted]")
        out.append((str(message.get("role", "user")), "\n".join(parts)))
    return out


# --------------------------------------------------------------------------------------------- Agent Chat UI


_Payload = TypeVar("_Payload", SamplingInterrupt, SamplingReviewInterrupt)


_WORDS: dict[Word, str] = {"approve": "approve", "reject": "reject"}


def _with_card(payload: _Payload, args: dict[str, Any], description: str, what: str) -> _Payload:
    """``payload`` plus the ``HITLRequest`` keys of its one card: a help box, ``args``, Reason and Decision (the
    card allows ``edit`` only: the word typed in Decision decides, see :mod:`langgraph_mcp.questions.cards`)."""
    lines = [
        "Nothing is sent until you type your decision in the Decision box (at the bottom) and Submit.",
        f"approve: {what}.",
        "reject: refuses it; the server reads your Reason, if you give one.",
    ]
    boxes = {HELP_KEY: words_help(lines), **args, REASON_FIELD: "", DECISION_FIELD: ""}
    described = f"{description}\n\n" + "\n".join(lines)
    action: ActionRequest = {"name": payload["published_name"], "args": boxes, "description": described}
    config: ReviewConfig = card_config(payload["published_name"])
    return cast(_Payload, {**payload, "action_requests": [action], "review_configs": [config]})


def _card_decision(value: object, shown: Mapping[str, str | None]) -> object:
    """``{"decisions": [decision]}`` for an Agent Chat UI card's answer (its boxes, with a word in Decision):
    ``reject`` (with the Reason), ``approve`` (an edit when a box differs from ``shown``, the boxes as the card
    showed them). Any other value is returned as it is; an empty Decision or another word is refused in words."""
    decisions = value.get("decisions") if isinstance(value, Mapping) else None
    only = decisions[0] if isinstance(decisions, list) and len(decisions) == 1 else None
    action = only.get("edited_action") if isinstance(only, Mapping) and only.get("type") == "edit" else None
    args = action.get("args") if isinstance(action, Mapping) else None
    if not isinstance(args, Mapping) or DECISION_FIELD not in args:
        return value
    try:
        word = card_word(args[DECISION_FIELD], _WORDS)
    except AnswerError as error:
        raise _refused(DECISION_FIELD, str(error)) from None
    typed = args.get(REASON_FIELD)
    reason = typed.strip() if isinstance(typed, str) else ""
    if word == "reject":
        return {"decisions": [_rejection(reason or None)]}
    if reason:
        raise _refused(
            REASON_FIELD,
            "Decision says approve but Reason holds text (a reason goes with reject): clear Reason to approve, "
            "or type reject in Decision",
        )
    if all(text is not None and args.get(box) == text for box, text in shown.items()):
        return {"decisions": [{"type": "approve"}]}
    kept = {k: v for k, v in args.items() if k not in (HELP_KEY, REASON_FIELD, DECISION_FIELD)}
    return {
        "decisions": [{"type": "edit", "edited_action": {**cast(Mapping[str, Any], action), "args": kept}}]
    }


def _prompt(payload: SamplingInterrupt | SamplingReviewInterrupt) -> str:
    """The messages' text, one per line."""
    return "\n".join(text for _, text in sampling_texts([dict(m) for m in payload["messages"]]))


def _rejection(message: str | None) -> SamplingReject:
    reject: SamplingReject = {"type": "reject"}
    if message:
        reject["message"] = message
    return reject


def sampling_card(payload: SamplingInterrupt) -> SamplingInterrupt:
    """``payload`` plus the ``HITLRequest`` keys (Agent Chat UI mode): one card whose args are the prompt (the
    messages' text, one per line) and the system prompt; editing the card's ``prompt`` is editing the messages."""
    return _with_card(
        payload,
        {"prompt": _prompt(payload), "system_prompt": payload["system_prompt"] or ""},
        f"Server {payload['server']!r} asks your model for a completion (up to {payload['max_tokens']} tokens) "
        f"while running {payload['tool']!r}.",
        "your model answers the Prompt box as it stands (edit it first to change what is asked)",
    )


class _EditedPromptArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    prompt: str = Field(min_length=1, max_length=200_000)
    system_prompt: str | None = Field(default=None, max_length=200_000)


class _EditedPrompt(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    args: _EditedPromptArgs


class _HitlSamplingDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["approve", "edit", "reject"]
    edited_action: _EditedPrompt | None = None
    message: str | None = Field(default=None, max_length=2000)

    @model_validator(mode="after")
    def _fits_its_type(self) -> _HitlSamplingDecision:
        if (self.type == "edit") != (self.edited_action is not None):
            raise ValueError("'edit' needs an 'edited_action' with args.prompt, and only 'edit' takes one")
        return self


class HitlSamplingDecisionModel(BaseModel):
    """The Agent Chat UI resume value of a sampling card: ``{"decisions": [one decision]}``; an ``edit``'s
    ``edited_action.args.prompt`` becomes the one user message the model answers."""

    model_config = ConfigDict(extra="forbid")

    decisions: list[_HitlSamplingDecision] = Field(min_length=1, max_length=1)
    shown_system_prompt: ClassVar[str | None] = None
    """The card's system prompt (:func:`sampling_card_model`): an edit that changes it is refused."""
    shown_prompt: ClassVar[str | None] = None
    """The card's prompt as shown: approving it unchanged is an ``approve`` (the server's messages as sent)."""

    @model_validator(mode="before")
    @classmethod
    def _from_the_card(cls, value: object) -> object:
        return _card_decision(value, {"prompt": cls.shown_prompt, "system_prompt": cls.shown_system_prompt})

    @model_validator(mode="after")
    def _keeps_the_system_prompt(self) -> HitlSamplingDecisionModel:
        only = self.decisions[0]
        edited = only.edited_action.args.system_prompt if only.edited_action is not None else None
        if _changed(only.type, edited, type(self).shown_system_prompt):
            raise _refused(
                "system_prompt",
                "the card's system_prompt is the server's and can't be edited: edit 'prompt' (what the model is "
                "asked) instead, or reject",
            )
        return self

    def decision(self) -> SamplingDecision:
        only = self.decisions[0]
        if only.type == "edit" and only.edited_action is not None:
            text = only.edited_action.args.prompt
            return {"type": "edit", "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
        if only.type == "reject":
            return _rejection(only.message)
        return {"type": "approve"}


# ---------------------------------------------------------------------------------------- completion review


def review_payload(
    request: SamplingInterrupt, messages: list[dict[str, Any]], completion: str, model: str, key: str
) -> SamplingReviewInterrupt:
    """The ``mcp_sampling_review`` payload: the completion the model gave for ``messages`` (the request's, or the
    human's edit of them)."""
    return {
        "type": SAMPLING_REVIEW_INTERRUPT_TYPE,
        "tool_call_id": request["tool_call_id"],
        "server": request["server"],
        "tool": request["tool"],
        "published_name": request["published_name"],
        "messages": cast(Any, messages),
        "system_prompt": request["system_prompt"],
        "completion": completion,
        "model": model,
        "max_tokens": request["max_tokens"],
        "completion_key": key,
    }


class CompletionDecisionModel(BaseModel):
    """The resume value of an ``mcp_sampling_review`` interrupt: ``{"type": "approve"}``, ``{"type": "edit", "text":
    ...}`` (the server gets this text instead) or ``{"type": "reject"[, "message"]}``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["approve", "edit", "reject"]
    text: str | None = Field(default=None, max_length=200_000)
    message: str | None = Field(default=None, max_length=2000)

    @model_validator(mode="after")
    def _fits_its_type(self) -> CompletionDecisionModel:
        needs = "what the server gets instead of the completion"
        problem = _misfit(self.type, "text", self.text, self.message, needs=needs, changes="the completion")
        if problem is not None:
            raise ValueError(problem)
        return self

    def decision(self) -> CompletionDecision:
        return cast(CompletionDecision, self.model_dump(mode="json", exclude_none=True))


def review_card(payload: SamplingReviewInterrupt) -> SamplingReviewInterrupt:
    """``payload`` plus the ``HITLRequest`` keys (Agent Chat UI mode): one card whose args are the completion and
    the prompt it answers; editing the card's ``completion`` is sending that text instead."""
    return _with_card(
        payload,
        {"completion": payload["completion"], "prompt": _prompt(payload)},
        f"Your model ({payload['model']}) wrote this completion for server {payload['server']!r} while it runs "
        f"{payload['tool']!r}.",
        "the server gets the Completion box as it stands (edit it first to send other text)",
    )


class _EditedCompletionArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    completion: str = Field(max_length=200_000)
    prompt: str | None = Field(default=None, max_length=200_000)


class _EditedCompletion(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    args: _EditedCompletionArgs


class _HitlCompletionDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["approve", "edit", "reject"]
    edited_action: _EditedCompletion | None = None
    message: str | None = Field(default=None, max_length=2000)

    @model_validator(mode="after")
    def _fits_its_type(self) -> _HitlCompletionDecision:
        if (self.type == "edit") != (self.edited_action is not None):
            raise ValueError(
                "'edit' needs an 'edited_action' with args.completion, and only 'edit' takes one"
            )
        return self


class HitlCompletionDecisionModel(BaseModel):
    """The Agent Chat UI resume value of a completion card: ``{"decisions": [one decision]}``; an ``edit``'s
    ``edited_action.args.completion`` is the text the server gets."""

    model_config = ConfigDict(extra="forbid")

    decisions: list[_HitlCompletionDecision] = Field(min_length=1, max_length=1)
    shown_prompt: ClassVar[str | None] = None
    """The card's prompt (:func:`review_card_model`): the model has answered it, so an edit that changes it is
    refused."""
    shown_completion: ClassVar[str | None] = None
    """The card's completion as shown: approving it unchanged is an ``approve``."""

    @model_validator(mode="before")
    @classmethod
    def _from_the_card(cls, value: object) -> object:
        return _card_decision(value, {"completion": cls.shown_completion, "prompt": cls.shown_prompt})

    @model_validator(mode="after")
    def _keeps_the_prompt(self) -> HitlCompletionDecisionModel:
        only = self.decisions[0]
        edited = only.edited_action.args.prompt if only.edited_action is not None else None
        if _changed(only.type, edited, type(self).shown_prompt):
            raise _refused(
                "prompt",
                "the card's prompt was already answered by the model and can't be edited: edit 'completion' (the "
                "text the server gets) instead, or reject",
            )
        return self

    def decision(self) -> CompletionDecision:
        only = self.decisions[0]
        if only.type == "edit" and only.edited_action is not None:
            return {"type": "edit", "text": only.edited_action.args.completion}
        if only.type == "reject":
            return _rejection(only.message)
        return {"type": "approve"}


def _changed(kind: str, edited: str | None, shown: str | None) -> bool:
    """Whether an edit changed a card argument that is shown but not editable (``None``: not known)."""
    return kind == "edit" and shown is not None and edited is not None and edited != shown


def _refused(field: str, words: str) -> AnswerRefusedError:
    """A card edit refused in words only (see :class:`~langgraph_mcp.errors.AnswerRefusedError`): pydantic lets it
    through unwrapped, and LangGraph still reads it as a refused resume value, so the same interrupt stays pending."""
    return refused_on_card([(field, words)], AnswerError(words, field=field))


def _card_arg(card: Mapping[str, Any], name: str) -> str | None:
    """Argument ``name`` of the card's one action request, as shown (``None`` when the payload has no card)."""
    requests = card.get("action_requests")
    first = requests[0] if isinstance(requests, list) and requests else None
    args = first.get("args") if isinstance(first, Mapping) else None
    value = args.get(name) if isinstance(args, Mapping) else None
    return value if isinstance(value, str) else None


def sampling_card_model(card: Mapping[str, Any]) -> type[HitlSamplingDecisionModel]:
    """The decision model of one sampling card (:func:`sampling_card`): :class:`HitlSamplingDecisionModel`, refusing
    an edit that changes the card's ``system_prompt``."""
    return _sampling_card_model(_card_arg(card, "system_prompt"), _card_arg(card, "prompt"))


def review_card_model(card: Mapping[str, Any]) -> type[HitlCompletionDecisionModel]:
    """The decision model of one completion card (:func:`review_card`): :class:`HitlCompletionDecisionModel`,
    refusing an edit that changes the card's ``prompt``."""
    return _review_card_model(_card_arg(card, "prompt"), _card_arg(card, "completion"))


@functools.lru_cache(maxsize=256)
def _sampling_card_model(shown: str | None, prompt: str | None) -> type[HitlSamplingDecisionModel]:
    if shown is None and prompt is None:
        return HitlSamplingDecisionModel
    namespace = {"shown_system_prompt": shown, "shown_prompt": prompt, "__module__": __name__}
    return type("HitlSamplingDecisionModel", (HitlSamplingDecisionModel,), namespace)


@functools.lru_cache(maxsize=256)
def _review_card_model(shown: str | None, completion: str | None) -> type[HitlCompletionDecisionModel]:
    if shown is None and completion is None:
        return HitlCompletionDecisionModel
    namespace = {"shown_prompt": shown, "shown_completion": completion, "__module__": __name__}
    return type("HitlCompletionDecisionModel", (HitlCompletionDecisionModel,), namespace)
