"""Where replies to pending interrupts come from: an answers file, ``--yes``, the terminal, or nowhere.

Responders are tried in order for each pending item; the first that has a reply wins, and an item nobody
answers stays pending (the thread is left waiting and can be resumed later).

Answers file (``--answers FILE``): a JSON object keyed by ``tool_call_id`` (or by the published tool name,
when only one pending call has it); each value is the reply for that call's interrupt, shaped by what it waits
for::

    {
      "call_delete_file_1": {"type": "approve"},
      "call_book_trip_1": {"langgraph_mcp.examples.demo_server:ask_date": {"action": "accept",
                                                                        "content": {"date": "2030-05-01"}}},
      "demo_pay_deposit": {"pay": {"action": "decline"}}
    }

A server's sampling request takes ``{"type": "approve"}``, ``{"type": "edit", "messages": [{"role": "user",
"content": {"type": "text", "text": "..."}}]}`` or ``{"type": "reject"}``; a completion under review
(``review_completion``) ``{"type": "approve"}``, ``{"type": "edit", "text": "..."}`` or ``{"type": "reject"}``.

For a call that pauses more than once (an approval, then a question; or several rounds of questions), give a
list of replies: they are used in order. For an elicitation, a value of the form ``{"action": ...}`` (without
request keys) answers every request of the round with that action.

``--yes`` approves every approval, fills every form with its defaults or a sensible value per type (a date
field gets tomorrow's date), accepts URL requests (never opening them), and approves sampling requests and
completions.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from rich.console import Console

from langgraph_mcp.cli.pending import PendingMcpInterrupt, Reply, published_name
from langgraph_mcp.cli.prompts import ask_approval, ask_elicitation, ask_sign_in
from langgraph_mcp.cli.sampling import ask_sampling, check_sampling_answer
from langgraph_mcp.errors import AnswerError, AnswersFileError, DecisionError, ResumeError
from langgraph_mcp.payloads import (
    ApprovalInterrupt,
    ElicitationAnswer,
    ElicitationInterrupt,
    ElicitationRequest,
)
from langgraph_mcp.questions.answers import validate_answers
from langgraph_mcp.questions.decisions import clean_answer
from langgraph_mcp.questions.elicitation import field_options
from langgraph_mcp.questions.sign_in import check_sign_in_answer

__all__ = [
    "AnswersFile",
    "AnswersFileError",
    "AutoResponder",
    "InteractiveResponder",
    "Responder",
    "first_reply",
    "responder_chain",
    "sample_value",
]


class Responder(Protocol):
    """Gives a reply to one pending item, or ``None`` when it has none."""

    def reply(self, item: PendingMcpInterrupt) -> Reply | None: ...


def responder_chain(
    console: Console, *, answers: AnswersFile | None = None, yes: bool = False, no_input: bool = False
) -> list[Responder]:
    """The responders of one command, in order: the answers file, ``--yes``, then the terminal (unless
    ``--no-input``)."""
    chain: list[Responder] = []
    if answers is not None:
        chain.append(answers)
    if yes:
        chain.append(AutoResponder())
    if not no_input:
        chain.append(InteractiveResponder(console))
    return chain


def first_reply(responders: Sequence[Responder], item: PendingMcpInterrupt) -> Reply | None:
    for responder in responders:
        reply = responder.reply(item)
        if reply is not None:
            return reply
    return None


# ------------------------------------------------------------------------------------------------ --yes


def sample_value(name: str, prop: Mapping[str, Any]) -> Any:
    """A value for one form field: its default, else the first choice, else a sensible value per type."""
    if "default" in prop:
        return prop["default"]
    options = field_options(prop)
    if options:
        return options[0][0]
    kind = prop.get("type")
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return _sample_number(prop, integer=kind == "integer")
    if kind == "array":
        items = field_options(prop.get("items") or {})
        count = max(1, int(prop.get("minItems") or 0))
        return [v for v, _ in (items or [])[:count]] if items else []
    return _sample_formatted(prop.get("format")) or _sample_text(name, prop)


def _sample_number(prop: Mapping[str, Any], *, integer: bool) -> float:
    """The minimum, else one above the exclusive minimum, else 1 (or the maximum, when it is below 1)."""
    low = prop.get("minimum")
    exclusive = prop.get("exclusiveMinimum")
    high = prop.get("maximum")
    if isinstance(low, int | float):
        value: float = low
    elif isinstance(exclusive, int | float):
        value = exclusive + 1
    else:
        value = 1 if not isinstance(high, int | float) or high >= 1 else high
    return int(value) if integer else value


def _sample_formatted(fmt: object) -> str | None:
    """A value for a string of a known ``format`` (a date is tomorrow's); ``None`` for any other."""
    tomorrow = datetime.date.today() + datetime.timedelta(days=1)
    samples = {
        "date": tomorrow.isoformat(),
        "date-time": f"{tomorrow.isoformat()}T09:00:00Z",
        "email": "user@example.com",
        "uri": "https://example.com/",
    }
    return samples.get(fmt) if isinstance(fmt, str) else None


def _sample_text(name: str, prop: Mapping[str, Any]) -> str:
    """A plain text (a name for a field called like one), padded or cut to its length bounds."""
    text = "Ada Lovelace" if "name" in name.lower() else "example"
    low_len = prop.get("minLength")
    if isinstance(low_len, int) and len(text) < low_len:
        text = text + "x" * (low_len - len(text))
    high_len = prop.get("maxLength")
    if isinstance(high_len, int) and len(text) > high_len:
        text = text[: max(high_len, 0)]
    return text


def auto_answer(key: str, request: ElicitationRequest) -> ElicitationAnswer:
    """Accept a request: a form filled with :func:`sample_value` per field; a URL request just accepted."""
    if request.get("mode") == "url":
        return {"action": "accept"}
    schema = cast(Mapping[str, Any], request.get("requested_schema") or {})
    properties: Mapping[str, Any] = schema.get("properties") or {}
    content = {
        name: sample_value(name, prop) for name, prop in properties.items() if isinstance(prop, Mapping)
    }
    answer: ElicitationAnswer = {"action": "accept", "content": content}
    try:
        validate_answers({key: request}, {key: answer})
    except AnswerError:  # a field our sample can't satisfy (a pattern, say): say no rather than guess
        return {"action": "decline"}
    return answer


class AutoResponder:
    """``--yes``: approve (where approving is allowed), fill forms with defaults or sample values, accept URL
    requests (never opening them)."""

    how = "--yes"

    def reply(self, item: PendingMcpInterrupt) -> Reply | None:
        if item.kind == "approval":
            if "approve" not in item.approval["allowed_decisions"]:
                return None  # the policy wants a real decision here: leave it to the terminal (or pending)
            return Reply({"type": "approve"}, self.how)
        if item.kind == "elicitation":
            requests = cast(Mapping[str, ElicitationRequest], item.payload.get("requests") or {})
            return Reply({key: auto_answer(key, request) for key, request in requests.items()}, self.how)
        if item.kind in ("sampling", "sampling_review"):
            return Reply(check_sampling_answer(item, {"type": "approve"}), self.how)
        return None


# ------------------------------------------------------------------------------------------------ terminal


class InteractiveResponder:
    """Ask in the terminal. Ctrl-C / end of input propagate (the caller leaves the thread pending)."""

    how = "you"

    def __init__(self, console: Console) -> None:
        self.console = console

    def reply(self, item: PendingMcpInterrupt) -> Reply | None:
        if item.kind == "approval":
            return Reply(ask_approval(self.console, cast(ApprovalInterrupt, item.payload)), self.how)
        if item.kind == "elicitation":
            return Reply(ask_elicitation(self.console, cast(ElicitationInterrupt, item.payload)), self.how)
        if item.kind == "authorization":
            return Reply(ask_sign_in(self.console, item.authorization), self.how)
        if item.kind in ("sampling", "sampling_review"):
            return Reply(check_sampling_answer(item, ask_sampling(self.console, item)), self.how)
        return None


# ------------------------------------------------------------------------------------------------ file


class AnswersFile:
    """Replies from a JSON answers file (see the module docstring); each entry is checked when used."""

    how = "answers file"

    def __init__(self, path: str | Path, data: Mapping[str, Any]) -> None:
        self.path = str(path)
        self.entries: dict[str, list[Any]] = {
            key: list(value) if isinstance(value, list) else [value] for key, value in data.items()
        }
        self.used: set[str] = set()

    @classmethod
    def load(cls, path: str | Path) -> AnswersFile:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise AnswersFileError(
                f"answers file {str(path)!r}: cannot read it: {exc.strerror or exc}"
            ) from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AnswersFileError(
                f"answers file {str(path)!r}: invalid JSON at line {exc.lineno}, "
                f"column {exc.colno}: {exc.msg}"
            ) from exc
        if not isinstance(data, dict):
            raise AnswersFileError(
                f"answers file {str(path)!r} must be a JSON object keyed by tool_call_id, "
                f"got {type(data).__name__}"
            )
        return cls(path, data)

    def _error(self, key: str, message: str) -> AnswersFileError:
        return AnswersFileError(f"answers file {self.path!r}, key {key!r}: {message}")

    def check_known(self, ids: Mapping[str, str]) -> None:
        """Raise for a key that is no known tool call id nor published name (``ids``: name -> id)."""
        for key in self.entries:
            if key not in ids and key not in ids.values():
                known = ", ".join(f"{i} ({n})" for n, i in ids.items())
                raise self._error(key, f"names no tool call of this run; known: {known}")

    def _key_for(self, item: PendingMcpInterrupt) -> str | None:
        if self.entries.get(item.tool_call_id):
            return item.tool_call_id
        if published_name(item) and self.entries.get(published_name(item)):
            return published_name(item)
        return None

    def reply(self, item: PendingMcpInterrupt) -> Reply | None:
        key = self._key_for(item)
        if key is None:
            return None
        value = self.entries[key].pop(0)
        self.used.add(key)
        try:
            if item.kind == "approval":
                if not isinstance(value, Mapping) or "type" not in value:
                    raise DecisionError(
                        'this call waits for an approval decision such as {"type": "approve"}, '
                        f"got {json.dumps(value)[:120]}"
                    )
                return Reply(clean_answer(cast(ApprovalInterrupt, item.payload), value), self.how)
            if item.kind == "elicitation":
                requests = cast(Mapping[str, ElicitationRequest], item.payload.get("requests") or {})
                if isinstance(value, Mapping) and "action" in value and "action" not in requests:
                    value = {request_key: dict(value) for request_key in requests}
                return Reply(validate_answers(requests, value), self.how)
            if item.kind == "authorization":  # {"callback_url": ...} or {"action": "decline"}
                return Reply(check_sign_in_answer(item.authorization, value), self.how)
            if item.kind in ("sampling", "sampling_review"):
                return Reply(check_sampling_answer(item, value), self.how)
        except (AnswerError, DecisionError, ResumeError) as exc:
            raise self._error(key, str(exc)) from exc
        raise self._error(
            key,
            f"interrupt {item.interrupt_id} is not an MCP approval, elicitation, sign-in or sampling request",
        )
