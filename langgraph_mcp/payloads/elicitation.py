"""An MCP server's questions mid-call (``mcp_elicitation``) and the answers they take."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from langgraph_mcp.payloads.base import ToolQuestion

ELICITATION_INTERRUPT_TYPE: Literal["mcp_elicitation"] = "mcp_elicitation"
"""``type`` of the payload raised when an MCP server asks the user for input mid-call."""


class FormRequest(TypedDict):
    """A form the server wants filled in (MCP ``elicitation/create`` in form mode)."""

    mode: Literal["form"]
    message: str
    """What the server says to the user."""
    requested_schema: dict[str, Any]
    """The flat JSON object schema of the answer (``requestedSchema``), exactly as the server sent it."""
    sensitive: list[str]
    """Field names that look secret (passwords, tokens, card numbers): hide them while typing."""
    asks_for_secrets: NotRequired[bool]
    """True when ``sensitive`` is not empty: warn the user, since MCP servers must not ask for secrets by form
    (absent in payloads saved by older versions: then read ``sensitive``)."""


class UrlRequest(TypedDict):
    """A URL the user should open (MCP elicitation in URL mode). Never opened automatically."""

    mode: Literal["url"]
    message: str
    url: str
    host: str
    """Where a browser would really go (WHATWG URL parsing), so a UI can show it; ``""`` when there is none."""
    scheme: NotRequired[str]
    """The URL's scheme, lower-cased (``https``, ``javascript``, ...)."""
    openable: NotRequired[bool]
    """Only ``True`` for an ``http``/``https`` URL with a valid host: never offer any other URL as a link
    (absent in payloads saved by older versions: treat as ``False`` unless the scheme is http(s))."""
    warning: NotRequired[str]
    """Why the URL is not offered as a link, or what is suspicious about it, in words for the user."""


ElicitationRequest: TypeAlias = FormRequest | UrlRequest


class ElicitationInterrupt(ToolQuestion):
    """Payload of an ``mcp_elicitation`` interrupt: one round of questions from one paused tool call (cards: one
    action request per question, in the order of ``requests``)."""

    type: Literal["mcp_elicitation"]
    server: str
    arguments: dict[str, Any]
    round: int
    """1 for the first round of questions of this call, 2 for the next, ..."""
    requests: dict[str, ElicitationRequest]
    """Questions keyed by the server's own opaque keys; answer every key."""
    previous_answers: NotRequired[ElicitationAnswers]
    """Set when the server changed a question it had asked before: the answer given then, which no longer fits
    (shown as context, never sent; fields the new question marks sensitive are left out)."""
    held_by: NotRequired[str]
    """Legacy (2025-11-25): an opaque token for where the call waits, held open, for this answer (machine, process,
    connection, session). A resume elsewhere reads it to tell whether that first attempt can still complete (the
    re-issue rule of ``langgraph_mcp.calls.paused``); nothing to show a person."""


class AcceptAnswer(TypedDict):
    """The user answered. ``content`` is required for a form, and must be absent for a URL request."""

    action: Literal["accept"]
    content: NotRequired[dict[str, Any]]


class DeclineAnswer(TypedDict):
    """The user explicitly said no."""

    action: Literal["decline"]


class CancelAnswer(TypedDict):
    """The user dismissed the question without choosing."""

    action: Literal["cancel"]


ElicitationAnswer: TypeAlias = AcceptAnswer | DeclineAnswer | CancelAnswer
ElicitationAnswers: TypeAlias = dict[str, ElicitationAnswer]
"""The resume value of an ``mcp_elicitation`` interrupt: one answer per request key."""


def is_elicitation_interrupt(value: object) -> bool:
    """True for an ``mcp_elicitation`` payload (works on values read back from any checkpointer)."""
    return isinstance(value, dict) and value.get("type") == ELICITATION_INTERRUPT_TYPE
