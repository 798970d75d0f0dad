"""What every Agent Chat UI card of this package offers, and reading the one answer a card can send.

Agent Chat UI answers a card with the decision *selected* on it, whichever button is pressed. When a card allows
``approve`` the card opens with Approve selected, and its Reject box selects ``reject`` only once it holds text: an
empty or whitespace "Submit rejection" sends ``{"type": "approve"}``, the same bytes as the Approve button, so no
server-side check can tell them apart. After an edit, the same empty "Submit rejection" sends the edit. So a card
that allows ``approve`` or ``reject`` beside ``edit`` lets a person who means "no" send a "yes".

Every card this package emits therefore allows exactly one decision, ``edit`` (:data:`CARD_DECISIONS`): Agent
Chat UI shows one "Edit" box group and one Submit button, no Approve button, no Reject box, and what it sends is
always the card's boxes as they stand. What the person decides is the word they type in the card's **Decision**
box (:data:`DECISION_FIELD`, empty when the card opens): ``approve`` (or ``accept``), ``reject`` (or ``decline``),
and on some cards ``cancel`` or ``respond``. An empty Decision box, a word the card does not offer, Reset (which
empties the box again) and Ctrl/Cmd+Enter before a word is typed are refused in words, and the card stays: nothing
is sent to any server. "Mark as Resolved" sends ``Command(goto=END)`` as a new run's input, which LangGraph ignores
(it logs that the input "wrote to unknown channel branch:to:__end__"): the paused task runs again and asks the same
question, so nothing runs either.

Programs (``resume_command``, the CLI) keep answering cards with LangChain's plain decisions; only an edit that
carries the card's Decision box is read by its word (:func:`card_word`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Literal, TypeAlias

from langgraph_mcp.errors import AnswerError
from langgraph_mcp.payloads import DecisionType, ReviewConfig

__all__ = [
    "CARD_DECISIONS",
    "DECISION_FIELD",
    "HELP_KEY",
    "REASON_FIELD",
    "REDRAW_WARNING",
    "Word",
    "as_shown",
    "card_config",
    "card_word",
    "free_key",
    "untouched",
    "words_help",
]

CARD_DECISIONS: list[DecisionType] = ["edit"]
"""What every card allows Agent Chat UI to send: the card's boxes as they stand (see the module's docstring)."""

HELP_KEY = "how_to_answer"
"""A card's first box: what to type and where, because Agent Chat UI shows only the args' names and values on
the card (the description sits behind a button). It is not a field: its value is ignored on the way back."""

DECISION_FIELD = "decision"
"""The box (shown as "Decision", empty at first) where a person types what they decide."""

REASON_FIELD = "reason"
"""The box (shown as "Reason") for a rejection's reason, or a ``respond``'s answer, where a card has one."""

REDRAW_WARNING = (
    "Agent Chat UI redraws this card when the page around it changes (a few seconds after a new thread starts, or "
    "Hide Tool Calls) and undoes what you typed: check every box before Submit."
)
"""The last line of every card's help box. Agent Chat UI re-initialises a card whenever the thread view renders
again (its hook resets on a new interrupt object, and the SDK makes a new one on every read); the server sends
nothing then. See ``docs/agent-chat-ui.md`` (why typed text can vanish from a card). A redraw also empties the Decision box, so it never turns into a
"yes" by itself."""

Word: TypeAlias = Literal["approve", "reject", "cancel", "respond"]
"""What a person can decide on a card (a form's ``accept``/``decline`` read as ``approve``/``reject``)."""

_SYNONYMS: dict[str, Word] = {
    "approve": "approve",
    "approved": "approve",
    "accept": "approve",
    "yes": "approve",
    "reject": "reject",
    "rejected": "reject",
    "decline": "reject",
    "no": "reject",
    "cancel": "cancel",
    "respond": "respond",
}


def free_key(base: str, taken: Collection[str]) -> str:
    """``base``, with ``_`` appended until no key in ``taken`` has that name (a tool's own argument keeps its name)."""
    key = base
    while key in taken:
        key += "_"
    return key


def card_config(action_name: str) -> ReviewConfig:
    """The review config of every card: ``edit`` only (:data:`CARD_DECISIONS`)."""
    return {"action_name": action_name, "allowed_decisions": list(CARD_DECISIONS)}


def card_word(typed: object, offered: Mapping[Word, str]) -> Word:
    """The decision a person typed in a card's Decision box, one of ``offered`` (word → what the card calls it).

    Case and surrounding spaces don't matter, and ``accept``/``yes`` read as ``approve``, ``decline``/``no`` as
    ``reject``. Anything else, an empty box included, raises :class:`~langgraph_mcp.errors.AnswerError` whose text
    says what to type.
    """
    text = typed.strip().lower() if isinstance(typed, str) else ""
    word = _SYNONYMS.get(text)
    if word is not None and word in offered:
        return word
    shown_words = list(offered.values())
    choices = (
        " or ".join(shown_words)
        if len(shown_words) < 3
        else ", ".join(shown_words[:-1]) + f" or {shown_words[-1]}"
    )
    if (
        not text
    ):  # two wordings, so that Agent Chat UI (which hides a toast repeating the last one) shows both
        what = "holds only spaces" if isinstance(typed, str) and typed else "is empty"
        raise AnswerError(
            f"Decision {what}, so nothing was sent: type {choices} in the Decision box, then Submit"
        )
    shown = typed if isinstance(typed, str) else repr(typed)
    raise AnswerError(f"Decision: {shown.strip()!r} is not a choice here: type {choices}, then Submit")


def as_shown(value: object) -> str:
    """The text Agent Chat UI puts in a card's box for ``value`` (a string or number as it is, anything else as
    compact JSON), so that a box sent back untouched can be told from an edit without knowing the value's type."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def untouched(shown: Mapping[str, Any], sent: Mapping[str, Any]) -> dict[str, Any]:
    """``sent`` with every box that still reads as ``shown`` showed it put back to the shown value itself."""
    return {
        key: shown[key]
        if key in shown and isinstance(value, str) and value == as_shown(shown[key])
        else value
        for key, value in sent.items()
    }


def words_help(lines: Iterable[str]) -> str:
    """A card's help box: ``lines``, then :data:`REDRAW_WARNING`."""
    return "\n".join([*lines, REDRAW_WARNING])
