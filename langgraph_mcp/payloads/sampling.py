"""A server's request for a completion (``mcp_sampling``), the completion's review, and the decisions they take."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from langgraph_mcp.payloads.base import ToolQuestion

SAMPLING_INTERRUPT_TYPE: Literal["mcp_sampling"] = "mcp_sampling"
"""``type`` of the payload raised when a server asks the client's model for a completion (``sampling/createMessage``)
and the server's ``sampling_policy`` is ``"ask"``."""

SAMPLING_REVIEW_INTERRUPT_TYPE: Literal["mcp_sampling_review"] = "mcp_sampling_review"
"""``type`` of the payload that shows the model's completion before it goes back (``review_completion=True``)."""


class SamplingMessage(TypedDict):
    """One message of a sampling request, as the server sent it (``content`` is an MCP content block)."""

    role: Literal["user", "assistant"]
    content: dict[str, Any]


class _Completion(ToolQuestion):
    """What a server's request for a completion carries, asked about before or after the model runs."""

    server: str
    messages: list[SamplingMessage]
    system_prompt: str | None
    max_tokens: int
    """What the model will be allowed: the server's ``maxTokens``, capped by ``sampling_max_tokens``."""


class SamplingInterrupt(_Completion):
    """Payload of an ``mcp_sampling`` interrupt: a server asks the client's model for a completion mid-call
    (cards: one, ``args.prompt`` the messages' text)."""

    type: Literal["mcp_sampling"]
    model_preferences: dict[str, Any] | None
    requested_max_tokens: int
    """What the server asked for."""


class SamplingApprove(TypedDict):
    """Run the model on the server's messages as they are."""

    type: Literal["approve"]


class SamplingEdit(TypedDict):
    """Run the model on these messages instead (text content only)."""

    type: Literal["edit"]
    messages: list[SamplingMessage]


class SamplingReject(TypedDict):
    """Refuse: the server gets a refusal, never a completion."""

    type: Literal["reject"]
    message: NotRequired[str]


SamplingDecision: TypeAlias = SamplingApprove | SamplingEdit | SamplingReject


def is_sampling_interrupt(value: object) -> bool:
    """True for an ``mcp_sampling`` payload."""
    return isinstance(value, dict) and value.get("type") == SAMPLING_INTERRUPT_TYPE


class SamplingReviewInterrupt(_Completion):
    """Payload of an ``mcp_sampling_review`` interrupt (``review_completion=True``): the model's completion for
    ``messages`` (the server's, or the human's edit of them), shown before it goes back to the server. The
    completion is kept in the checkpoint: a re-run shows the same text and never calls the model again. Cards:
    one, ``args.completion`` the text (edit it to send other text)."""

    type: Literal["mcp_sampling_review"]
    completion: str
    """The model's text: what the server gets on ``approve``."""
    model: str
    completion_key: str
    """Names this completion among the call's (the kept copy is found by it on a re-run)."""


class CompletionApprove(SamplingApprove):
    """Send the model's completion to the server as it is."""


class CompletionEdit(TypedDict):
    """Send this text to the server instead of the model's."""

    type: Literal["edit"]
    text: str


class CompletionReject(SamplingReject):
    """Refuse: the server gets a refusal, never the completion."""


CompletionDecision: TypeAlias = CompletionApprove | CompletionEdit | CompletionReject


def is_sampling_review_interrupt(value: object) -> bool:
    """True for an ``mcp_sampling_review`` payload."""
    return isinstance(value, dict) and value.get("type") == SAMPLING_REVIEW_INTERRUPT_TYPE
