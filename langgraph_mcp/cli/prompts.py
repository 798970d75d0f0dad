"""Terminal prompts: approval decisions and elicitation forms, asked with ``rich.prompt``.

An approval whose payload offers ``remember`` (:mod:`langgraph_mcp.approval.memory`) is followed, after an approve or
a reject, by "Remember this approval?" (or rejection) with the offered scopes (default ``no``; so does input that
ends there): the answer carries it.

Forms are typed from the request's ``requested_schema``: defaults are pre-filled (Enter keeps them), enums are
offered as choices, booleans as yes/no, numbers are parsed, and fields the payload marks ``sensitive`` are
read without echo. Each value is checked on its own as soon as it is typed (with the same rules that check the
whole answer before LangGraph saves it, :func:`~langgraph_mcp.questions.answers.validate_answers`), so a bad
value is asked again right away; the complete answer is checked once more before it is returned.

A URL request shows the message, the URL and its host, and is **never opened** by the CLI: the user opens it
themselves and then says whether they accept.

Ctrl-C (``KeyboardInterrupt``) and end of input (``EOFError``) propagate to the caller, which leaves the
thread pending: the question being typed is dropped, answers already given to earlier questions are kept
(:func:`langgraph_mcp.cli.runner.drive`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from typing import Any, cast

from rich.console import Console
from rich.prompt import Confirm, Prompt
from rich.text import Text

from langgraph_mcp.errors import AnswerError, DecisionError
from langgraph_mcp.payloads import (
    ApprovalInterrupt,
    AuthorizationInterrupt,
    Decision,
    ElicitationAnswer,
    ElicitationAnswers,
    ElicitationInterrupt,
    FormRequest,
    SignInAnswer,
    UrlRequest,
)
from langgraph_mcp.questions.answers import validate_answers
from langgraph_mcp.questions.decisions import validate_decision
from langgraph_mcp.questions.elicitation import field_options
from langgraph_mcp.questions.inspection import inspect_url
from langgraph_mcp.questions.sign_in import check_sign_in_answer

__all__ = ["ask_approval", "ask_elicitation", "ask_form", "ask_sign_in"]

_DECISION_HELP = {
    "approve": "run the call as proposed",
    "edit": "change the arguments, then run it",
    "reject": "don't run it (optionally say why)",
    "respond": "don't run it; give the model this answer instead",
}
_REMEMBER_HELP = {
    "thread": "don't ask again about this tool on this thread",
    "principal": "don't ask again about this tool for this user, on any thread",
}
_ACTIONS = ("accept", "decline", "cancel")
_MISSING = object()


def _pick(console: Console, label: str, options: list[str], default: str | None = None) -> str:
    """Ask for one of ``options``; a unique prefix is enough (``a`` for ``approve``)."""
    shown = "/".join(options)
    while True:
        raw = Prompt.ask(
            Text.assemble(label, " ", (f"[{shown}]", "magenta")),
            console=console,
            default=default if default is not None else ...,
            show_default=default is not None,
        )
        answer = str(raw).strip().lower()
        if answer in options:
            return answer
        matches = [o for o in options if o.startswith(answer)] if answer else []
        if len(matches) == 1:
            return matches[0]
        console.print(Text(f"Please answer one of: {', '.join(options)}", style="red"))


# ------------------------------------------------------------------------------------------------ approval


def _edit_in_editor(console: Console, args: dict[str, Any]) -> str | None:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        return None
    with tempfile.NamedTemporaryFile("w+", suffix=".json", delete=False, encoding="utf-8") as handle:
        json.dump(args, handle, indent=2, ensure_ascii=False)
        path = handle.name
    try:
        subprocess.run([*shlex.split(editor), path], check=False)
        with open(path, encoding="utf-8") as edited:
            return edited.read()
    finally:
        os.unlink(path)


def _ask_edit(console: Console, payload: ApprovalInterrupt) -> Decision:
    args = payload.get("arguments") or {}
    use_editor = bool(os.environ.get("VISUAL") or os.environ.get("EDITOR"))
    refused = False  # after a refused edit, Enter must not send it again: no default, type the arguments
    while True:
        text = _edit_in_editor(console, args) if use_editor else None
        if text is None and refused:
            text = Prompt.ask("New arguments (JSON object)", console=console)
        elif text is None:
            text = Prompt.ask(
                "New arguments (JSON object)", console=console, default=json.dumps(args, ensure_ascii=False)
            )
        try:
            new_args = json.loads(text)
        except json.JSONDecodeError as exc:
            console.print(Text(f"Not valid JSON: {exc}", style="red"))
            use_editor, refused = False, True
            continue
        try:
            return validate_decision(
                payload,
                {"type": "edit", "edited_action": {"name": payload["published_name"], "args": new_args}},
            )
        except DecisionError as exc:
            console.print(Text(str(exc), style="red"))
            console.print(Text(f"Refused, not sent: {json.dumps(new_args, ensure_ascii=False)}", style="dim"))
            use_editor, refused = False, True


def _ask_remember(console: Console, payload: ApprovalInterrupt, decision: Decision) -> Decision:
    """``decision`` with the ``remember`` scope the human picks among those the payload offers (default: none)."""
    offered = [scope for scope in payload.get("remember") or [] if scope in _REMEMBER_HELP]
    if not offered:
        return decision
    covers = " with these arguments" if payload.get("remember_covers") == "same_args" else ""
    for scope in offered:
        console.print(Text(f"    {scope}: {_REMEMBER_HELP[scope]}{covers}", style="dim"))
    what = "approval" if decision["type"] == "approve" else "rejection"
    try:
        choice = _pick(console, f"Remember this {what}?", ["no", *offered], default="no")
    except EOFError:  # input ended after the decision (answers piped in): the default, nothing remembered
        return decision
    if choice == "no":
        return decision
    return validate_decision(payload, {**decision, "remember": choice})


def ask_approval(console: Console, payload: ApprovalInterrupt) -> Decision:
    """Ask for a decision on one approval interrupt (only the decisions it allows are offered)."""
    allowed = [d for d in payload.get("allowed_decisions", []) if d in _DECISION_HELP] or [
        "approve",
        "reject",
    ]
    for decision in allowed:
        console.print(Text(f"    {decision}: {_DECISION_HELP[decision]}", style="dim"))
    while True:
        choice = _pick(console, f"Decision for {payload['published_name']}", list(allowed))
        if choice == "approve":
            return _ask_remember(console, payload, {"type": "approve"})
        if choice == "edit":
            return _ask_edit(console, payload)
        if choice == "reject":
            reason = Prompt.ask("Reason (optional)", console=console, default="", show_default=False)
            rejected = validate_decision(
                payload, {"type": "reject", **({"message": reason} if reason else {})}
            )
            return _ask_remember(console, payload, rejected)
        message = Prompt.ask("Answer for the model", console=console, default="", show_default=False)
        try:
            return validate_decision(payload, {"type": "respond", "message": message})
        except DecisionError as exc:
            console.print(Text(str(exc), style="red"))


# ------------------------------------------------------------------------------------------------ forms


def _field_problem(name: str, prop: Mapping[str, Any], value: Any) -> str | None:
    """Why ``value`` does not fit this one field, or ``None`` (uses the full answer checker on one field)."""
    request: FormRequest = {
        "mode": "form",
        "message": "",
        "requested_schema": {"type": "object", "properties": {name: dict(prop)}, "required": [name]},
        "sensitive": [],
    }
    try:
        validate_answers({"field": request}, {"field": {"action": "accept", "content": {name: value}}})
    except AnswerError as exc:
        return exc.detail
    return None


def _parse(prop: Mapping[str, Any], raw: str) -> Any:
    """Typed text as the field's JSON type (left as text when it doesn't parse: the check says why)."""
    kind = prop.get("type")
    text = raw.strip()
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return (
                int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
            )
    except ValueError:
        return raw
    if kind == "array":
        return [part.strip() for part in text.split(",") if part.strip()]
    return raw


def _field_label(name: str, prop: Mapping[str, Any], required: bool) -> Text:
    """The prompt for one field: its title, its description (dim) and whether it is optional."""
    title = prop.get("title") if isinstance(prop.get("title"), str) else name
    description = prop.get("description")
    label = Text(str(title), style="bold")
    if description and description != title:
        label.append(f" - {description}", style="dim")
    if not required:
        label.append(" (optional)", style="dim")
    return label


def _format_hint(prop: Mapping[str, Any], item_options: list[tuple[Any, str | None]] | None) -> str:
    """What a free-text answer should look like: the choices of a list, or a date format."""
    if item_options is not None:
        return f" (comma-separated, from: {', '.join(str(v) for v, _ in item_options)})"
    if prop.get("format") == "date" and "YYYY-MM-DD" not in str(prop.get("description") or ""):
        return " (YYYY-MM-DD)"
    if prop.get("format") == "date-time":
        return " (e.g. 2026-01-31T09:30:00Z)"
    return ""


def _ask_choice(console: Console, label: Text, options: list[tuple[Any, str | None]], default: Any) -> Any:
    """One of a field's allowed values (titled ones explained on the line above)."""
    titled = [f"{v} = {t}" for v, t in options if t and t != str(v)]
    if titled:
        console.print(Text("    " + "; ".join(titled), style="dim"))
    raw = Prompt.ask(
        label,
        console=console,
        choices=[str(v) for v, _ in options],
        default=str(default) if default is not _MISSING else ...,
    )
    return next(v for v, _ in options if str(v) == raw)


def _ask_text(
    console: Console, label: Text, prop: Mapping[str, Any], required: bool, sensitive: bool, default: Any
) -> Any:
    """A typed-in value parsed by the field's type; ``_MISSING`` for an optional field left empty."""
    item_options = field_options(prop.get("items") or {}) if prop.get("type") == "array" else None
    shown_default: Any = ...
    if default is not _MISSING:
        shown_default = ", ".join(map(str, default)) if isinstance(default, list) else str(default)
    elif not required:
        shown_default = ""
    raw = Prompt.ask(
        Text.assemble(label, (_format_hint(prop, item_options), "dim")),
        console=console,
        password=sensitive,
        default=shown_default,
        show_default=shown_default not in (..., "") and not sensitive,
    )
    if raw == "" and not required and default is _MISSING:
        return _MISSING
    value = _parse(prop, str(raw))
    if item_options is not None and isinstance(value, list):
        value = [next((v for v, _ in item_options if str(v) == part), part) for part in value]
    return value


def _ask_field(console: Console, name: str, prop: Mapping[str, Any], required: bool, sensitive: bool) -> Any:
    """One field's value, re-asked until it fits; ``_MISSING`` for an optional field left empty."""
    label = _field_label(name, prop, required)
    default = prop.get("default", _MISSING)
    options = field_options(prop)
    while True:
        value: Any
        if prop.get("type") == "boolean" and options is None:
            value = Confirm.ask(
                label, console=console, default=bool(default) if default is not _MISSING else False
            )
        elif options is not None:
            value = _ask_choice(console, label, options, default)
        else:
            value = _ask_text(console, label, prop, required, sensitive, default)
            if value is _MISSING:
                return _MISSING
        problem = _field_problem(name, prop, value)
        if problem is None:
            return value
        console.print(Text(f"    invalid: {problem}", style="red"))


def ask_form(console: Console, key: str, request: FormRequest) -> ElicitationAnswer:
    """Ask one form request: accept (then every field), decline or cancel."""
    action = _pick(console, "Fill in the form?", ["accept", "decline", "cancel"], default="accept")
    if action != "accept":
        return cast(ElicitationAnswer, {"action": action})
    schema = request.get("requested_schema") or {}
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    sensitive = set(request.get("sensitive") or [])
    while True:
        content: dict[str, Any] = {}
        for name, prop in properties.items():
            value = _ask_field(
                console, name, prop if isinstance(prop, Mapping) else {}, name in required, name in sensitive
            )
            if value is not _MISSING:
                content[name] = value
        answer: ElicitationAnswer = {"action": "accept", "content": content}
        try:
            validate_answers({key: request}, {key: answer})
        except AnswerError as exc:  # only whole-form rules get here; each field was already checked
            console.print(Text(f"The form does not fit yet: {exc}. Let's go through it again.", style="red"))
            continue
        return answer


def ask_url(console: Console, request: UrlRequest) -> ElicitationAnswer:
    """Show a URL request (URL and host; never opened here) and ask accept / decline / cancel."""
    seen = inspect_url(request["url"])  # where a browser would go, whatever the payload says
    if seen.openable:
        console.print(Text.assemble("    Open this URL yourself if you trust ", (seen.host, "bold"), ":"))
    else:
        console.print(Text(f"    Warning: {seen.warning}.", style="bold red"))
    if seen.openable and seen.warning:
        console.print(Text(f"    Note: {seen.warning}.", style="yellow"))
    console.print(Text(f"    {request['url']}"))
    action = _pick(console, "Done / consent?", list(_ACTIONS), default="accept")
    return cast(ElicitationAnswer, {"action": action})


def ask_elicitation(console: Console, payload: ElicitationInterrupt) -> ElicitationAnswers:
    """Ask every request of one elicitation interrupt; returns answers that pass ``validate_answers``."""
    requests = payload.get("requests") or {}
    answers: ElicitationAnswers = {}
    for key, request in requests.items():
        if len(requests) > 1:  # the pending view showed every message; say which one is being asked
            console.print(Text.assemble(f"  [{key}] ", (request.get("message", ""), "bold")))
        if request.get("mode") == "url":
            answers[key] = ask_url(console, cast(UrlRequest, request))
        else:
            answers[key] = ask_form(console, key, cast(FormRequest, request))
    return validate_answers(requests, answers)


# ------------------------------------------------------------------------------------------------ sign-in


def ask_sign_in(console: Console, payload: AuthorizationInterrupt) -> SignInAnswer:
    """Show the authorization URL (never opened here) and read the address the browser landed on, checked
    against this sign-in; ``decline`` (or ``d``) declines."""
    console.print(
        Text.assemble(
            "    Open this link in your browser and sign in as ",
            (payload["principal"], "bold"),
            f" to {payload['server']!r} (host: {payload['host'] or '?'}):",
        )
    )
    console.print(Text(f"    {payload['authorization_url']}", style="cyan"), soft_wrap=True)
    while True:
        raw = str(
            Prompt.ask("Paste the address your browser was sent to (or 'decline')", console=console)
        ).strip()
        value: object = {"action": "decline"} if raw.lower() in ("d", "decline") else {"callback_url": raw}
        try:
            return check_sign_in_answer(payload, value)
        except AnswerError as exc:
            console.print(Text(str(exc), style="red"))
