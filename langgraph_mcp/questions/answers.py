"""Checking a human's answers to a server's questions, before LangGraph saves them.

The MCP client SDK does not check an answer's content against ``requestedSchema``, and LangGraph *saves* a
resume value before the node sees it: an answer rejected inside the node would be replayed on every later
resume and poison the task. So answers are checked **before** they are saved, by passing the model class from
:func:`answers_response_schema` as ``interrupt(payload, response_schema=...)``. A bad answer then makes the
resume raise ``pydantic.ValidationError`` (whose text carries the :class:`~langgraph_mcp.errors.AnswerError`
message, naming the request key and the field), nothing is saved, and the same interrupt can be answered
again.

Form content is checked with ``jsonschema`` (Draft 2020-12, bounded: :mod:`langgraph_mcp.questions.schemas`, so a
server's ``pattern`` is never run) plus a format checker that really checks the four formats MCP allows:
``date`` and ``date-time`` (RFC 3339), ``email`` (the WHATWG ``<input type=email>`` rule) and ``uri``
(absolute RFC 3986 URI), with our own checkers (:mod:`langgraph_mcp.questions.formats`) whatever optional
``jsonschema`` extras are installed.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from typing import Any, ClassVar, TypeAlias, cast

import jsonschema
import mcp.types as types

from langgraph_mcp.errors import AnswerError
from langgraph_mcp.payloads import (
    AcceptAnswer,
    CancelAnswer,
    DeclineAnswer,
    ElicitationAnswer,
    ElicitationAnswers,
    ElicitationRequest,
    FormRequest,
)
from langgraph_mcp.questions.elicitation import answers_json_schema, describe_field, show_value
from langgraph_mcp.questions.formats import FORMAT_CHECKER
from langgraph_mcp.questions.inspection import sensitive_fields
from langgraph_mcp.questions.schemas import (
    CheckedResponse,
    bounded_validator,
    check,
    checked_response,
    depth_exceeds,
)

__all__ = [
    "MAX_ANSWER_DEPTH",
    "ElicitationAnswersModel",
    "answers_fit",
    "answers_response_schema",
    "to_elicit_result",
    "validate_answers",
]

_ACTIONS: tuple[str, ...] = ("accept", "decline", "cancel")
MAX_ANSWER_DEPTH = 8
"""Answers are shallow (key → answer → content → field → list of strings): deeper ones are refused unread."""
_ANSWER_ENTRIES = frozenset({"action", "content"})


@functools.lru_cache(maxsize=512)
def _validator(canonical_schema: str) -> Any:
    """A compiled validator for one schema (raises ``jsonschema.SchemaError`` for an invalid schema).

    Bounded (:mod:`langgraph_mcp.questions.schemas`): a server's ``pattern`` is never run (MCP's elicitation
    schema has none; a backtracking regex chosen by the server would stall the event loop).
    """
    schema = json.loads(canonical_schema)
    schema.pop("$schema", None)  # always Draft 2020-12, like the requested schema MCP defines
    return bounded_validator(schema, format_checker=FORMAT_CHECKER)


# --------------------------------------------------------------------------------------------- problems in words


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


_TEMPLATES = {
    **dict.fromkeys(("enum", "const", "oneOf", "anyOf"), "{shown} is not one of the allowed values"),
    "format": "{shown} is not a valid {limit}",
    "minimum": "{shown} is less than the minimum {limit}",
    "maximum": "{shown} is more than the maximum {limit}",
    "exclusiveMinimum": "{shown} is not greater than {limit}",
    "exclusiveMaximum": "{shown} is not less than {limit}",
    "uniqueItems": "{shown} selects the same option more than once",
    "pattern": "{shown} does not match the pattern {limit!r}",
    "multipleOf": "{shown} is not a multiple of {limit}",
}
"""The wording of the ``jsonschema`` validators that need only the value and the schema's limit."""


def _problem(error: Any, hide: bool) -> str:
    """One ``jsonschema`` error as a short sentence about the value (``hide``: never show a secret value)."""
    kind, value, limit = error.validator, error.instance, error.validator_value
    shown = "the value" if hide else show_value(value)
    if kind == "type":
        wanted = limit if isinstance(limit, list) else [limit]
        return f"{shown} is not " + " or ".join(_TYPE_WORDS.get(str(w), str(w)) for w in wanted)
    if kind in ("minLength", "maxLength") and isinstance(value, str):
        return (
            f"{shown} is too {'short' if kind == 'minLength' else 'long'} "
            f"({len(value)} character{'' if len(value) == 1 else 's'}, "
            f"{'minimum' if kind == 'minLength' else 'maximum'} {limit})"
        )
    if kind in ("minItems", "maxItems") and isinstance(value, list):
        return (
            f"{len(value)} selected, {'at least' if kind == 'minItems' else 'at most'} {limit} "
            f"option{'s' if limit != 1 else ''} allowed"
        )
    template = _TEMPLATES.get(kind)
    return template.format(shown=shown, limit=limit) if template is not None else str(error.message)


_PRIORITY = {"type": 0, "enum": 1, "const": 1, "oneOf": 1, "anyOf": 1, "format": 2}


# --------------------------------------------------------------------------------------------- validation


_Problem: TypeAlias = tuple[int, "str | None", str]
"""``(position of the field in the form, field, sentence)``: problems are reported in the form's order."""


def _content_problems(
    key: str, schema: Mapping[str, Any], content: dict[str, Any], defaulted: set[str], secret: set[str]
) -> None:
    """Raise one ``AnswerError`` listing every problem of ``content`` against the form ``schema``."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    order: dict[str, int] = {}
    for name in [*properties, *required]:
        order.setdefault(name, len(order))
    problems = _key_problems(content, properties, required, order)
    for field, error in _worst_errors(_schema_errors(key, schema, content)).items():
        problems.append(_error_problem(field, error, properties, order, defaulted, secret))
    if not problems:
        problems = _value_problems(content, order, secret)
    if problems:
        problems.sort(key=lambda p: p[0])
        raise _form_error(key, "; ".join(p[2] for p in problems), field=problems[0][1])


def _key_problems(
    content: dict[str, Any], properties: Mapping[str, Any], required: list[str], order: dict[str, int]
) -> list[_Problem]:
    """Fields the form does not have, and required fields the answer lacks."""
    problems: list[_Problem] = []
    for name in content:
        if name not in order:
            fields = ", ".join(repr(f) for f in order) or "none"
            problems.append((len(order), name, f"unknown field {name!r} (the form's fields: {fields})"))
    for name in required:
        if name not in content:
            expected = describe_field(properties.get(name))
            problems.append((order[name], name, f"field {name!r} is required (expected {expected})"))
    return problems


def _schema_errors(key: str, schema: Mapping[str, Any], content: dict[str, Any]) -> list[Any]:
    """Every ``jsonschema`` error of ``content``; a schema that can't be applied fails the whole form."""
    try:
        canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"))
        return check(_validator(canonical), content)
    except jsonschema.SchemaError as exc:
        raise _form_error(
            key,
            f"the server's requested_schema is not a valid JSON schema ({exc.message}); "
            "this form can't be accepted, answer 'decline' or 'cancel'",
        ) from None
    except Exception as exc:  # unresolvable $ref, non-JSON schema values, ...
        raise _form_error(
            key,
            f"the server's requested_schema can't be applied ({type(exc).__name__}: {exc}); "
            "this form can't be accepted, answer 'decline' or 'cancel'",
        ) from None


def _worst_errors(errors: list[Any]) -> dict[str | None, Any]:
    """The one error to report per field (``None``: the whole answer): a type error before a bad value, before
    the rest; the shallowest first."""
    by_field: dict[str | None, Any] = {}
    for error in errors:
        path = list(error.absolute_path)
        if not path and error.validator in ("required", "additionalProperties"):
            continue  # reported by _key_problems, with better wording
        field = path[0] if path and isinstance(path[0], str) else None
        best = by_field.get(field)
        rank = (_PRIORITY.get(error.validator, 5), len(path))
        if best is None or rank < (_PRIORITY.get(best.validator, 5), len(list(best.absolute_path))):
            by_field[field] = error
    return by_field


def _error_problem(
    field: str | None,
    error: Any,
    properties: Mapping[str, Any],
    order: dict[str, int],
    defaulted: set[str],
    secret: set[str],
) -> _Problem:
    """One field's worst error in words, with what the field expects."""
    if field is None:
        return (-1, None, _problem(error, hide=bool(secret)))
    path = list(error.absolute_path)
    item = f"item {path[1]}: " if len(path) > 1 and isinstance(path[1], int) else ""
    origin = " (the schema's default)" if field in defaulted else ""
    return (
        order.get(field, len(order)),
        field,
        f"field {field!r}{origin}: {item}{_problem(error, hide=field in secret)} "
        f"(expected {describe_field(properties.get(field))})",
    )


def _value_problems(content: dict[str, Any], order: dict[str, int], secret: set[str]) -> list[_Problem]:
    """Values the schema let through that ``ElicitResult.content`` can't carry."""
    return [
        (
            order.get(name, len(order)),
            name,
            f"field {name!r}: {'the value' if name in secret else show_value(value)} is not a form value "
            "(expected a string, a number, true/false or a list of strings)",
        )
        for name, value in content.items()
        if not _is_content_value(value)
    ]


def _form_error(key: str, detail: str, *, field: str | None = None) -> AnswerError:
    """``answer for '<key>': <detail>``, with ``key``, ``field`` and ``detail`` kept for code to read."""
    return AnswerError(f"answer for {key!r}: {detail}", key=key, field=field, detail=detail)


def _is_content_value(value: object) -> bool:
    """What ``ElicitResult.content`` can carry: ``str | int | float | bool | list[str] | None``."""
    if value is None or isinstance(value, str | int | float | bool):
        return True
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _form_content(key: str, form: FormRequest, content: object) -> dict[str, Any]:
    schema = form.get("requested_schema")
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties", {}), Mapping):
        raise _form_error(
            key,
            "the server's requested_schema is not an object schema with 'properties'; "
            "this form can't be accepted, answer 'decline' or 'cancel'",
        )
    if not isinstance(content, Mapping):
        raise _form_error(
            key, f"'content' must be an object with the form's fields, got {type(content).__name__}"
        )
    for name in content:
        if not isinstance(name, str):
            raise _form_error(key, f"field names must be strings, got {name!r}")
    normalized: dict[str, Any] = copy.deepcopy(dict(content))
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(r for r in schema.get("required") or [] if isinstance(r, str))
    defaulted: set[str] = set()
    for name, prop in properties.items():
        if name in normalized or name in required or not isinstance(prop, Mapping):
            continue
        if prop.get("default") is not None:
            normalized[name] = copy.deepcopy(prop["default"])
            defaulted.add(name)
    secret = set(sensitive_fields(schema))
    declared = form.get("sensitive")
    if isinstance(declared, list):
        secret.update(name for name in declared if isinstance(name, str))
    _content_problems(key, schema, normalized, defaulted, secret)
    return normalized


def _answer(key: str, request: ElicitationRequest, answer: object) -> ElicitationAnswer:
    shape = (
        '{"action": "accept", "content": {...}}, {"action": "decline"} or {"action": "cancel"}'
        if request.get("mode") == "form"
        else '{"action": "accept"}, {"action": "decline"} or {"action": "cancel"}'
    )
    if not isinstance(answer, Mapping):
        raise AnswerError(
            f"answer for {key!r} must be an object like {shape}, got {type(answer).__name__} {show_value(answer)}",
            key=key,
        )
    extra = [e for e in answer if e not in _ANSWER_ENTRIES]
    if extra:
        raise AnswerError(
            f"answer for {key!r} has unknown entr{'ies' if len(extra) > 1 else 'y'} "
            f"{', '.join(repr(e) for e in extra)} (expected {shape})",
            key=key,
        )
    if "action" not in answer:
        raise AnswerError(f"answer for {key!r} has no 'action' (expected {shape})", key=key)
    action = answer["action"]
    if action not in _ACTIONS:
        raise AnswerError(
            f"answer for {key!r}: action {show_value(action)} is not one of 'accept', 'decline', 'cancel'",
            key=key,
        )
    content = answer.get("content")
    if action != "accept":
        if content is not None:
            raise AnswerError(
                f"answer for {key!r}: a {action!r} answer carries no content (send {{'action': {action!r}}})",
                key=key,
            )
        return DeclineAnswer(action="decline") if action == "decline" else CancelAnswer(action="cancel")
    mode = request.get("mode")
    if mode == "url":
        if content is not None:
            raise AnswerError(
                f"answer for {key!r}: a URL request only asks for consent; an accept answer must not carry "
                "content (send {'action': 'accept'})",
                key=key,
            )
        return AcceptAnswer(action="accept")
    if mode != "form":
        raise AnswerError(
            f"request {key!r} has unknown mode {show_value(mode)} (expected 'form' or 'url')", key=key
        )
    if content is None:
        raise AnswerError(
            f"answer for {key!r}: accepting a form needs 'content', an object with the form's fields "
            f"(expected {shape})",
            key=key,
        )
    form = cast(FormRequest, request)
    return AcceptAnswer(action="accept", content=_form_content(key, form, content))


def validate_answers(requests: Mapping[str, ElicitationRequest], answers: object) -> ElicitationAnswers:
    """Check a resume value against the questions it answers and return it normalized.

    ``answers`` must be a mapping with exactly the request keys, each value
    ``{"action": "accept" | "decline" | "cancel"}``. Accepting a form needs ``content`` that fits its
    ``requested_schema`` (types, ``required``, ``enum`` / titled ``oneOf`` / multi-select arrays,
    ``minimum``/``maximum``, ``minLength``/``maxLength``, formats ``date``, ``date-time``, ``email``, ``uri``)
    and has no field the schema does not list. Decline and cancel carry no content, and neither does any
    answer to a URL request (``"content": None`` counts as absent).

    Returns a new dict in request order; accepted form content has the schema's ``default`` filled in for
    omitted optional fields. The input is never modified.

    Raises:
        AnswerError: naming the request key (``.key``) and, for content problems, the first bad field
            (``.field``); the message lists every problem with what was expected.
    """
    if not isinstance(answers, Mapping):
        raise AnswerError(
            "answers must be an object mapping each request key to an answer, e.g. "
            f'{{"<key>": {{"action": "accept", ...}}}}; got {type(answers).__name__}'
        )
    if depth_exceeds(answers, MAX_ANSWER_DEPTH):  # before anything recursive (copying, checking) sees it
        raise AnswerError(
            f"answers nest deeper than {MAX_ANSWER_DEPTH} levels; a form answer is "
            '{"<key>": {"action": "accept", "content": {"<field>": <string, number, boolean or list>}}}'
        )
    expected = ", ".join(repr(k) for k in requests) or "none"
    missing = [k for k in requests if k not in answers]
    unknown = [k for k in answers if not isinstance(k, str) or k not in requests]
    if missing or unknown:
        parts = []
        if missing:
            parts.append("no answer for " + ", ".join(repr(k) for k in missing))
        if unknown:
            parts.append("answer for unknown key " + ", ".join(repr(k) for k in unknown))
        first = missing[0] if missing else unknown[0]
        raise AnswerError(
            f"{'; '.join(parts)} (answer exactly the request keys: {expected})",
            key=first if isinstance(first, str) else repr(first),
        )
    return {key: _answer(key, request, answers[key]) for key, request in requests.items()}


def answers_fit(requests: Mapping[str, ElicitationRequest], answers: object) -> bool:
    """True if :func:`validate_answers` would accept ``answers``."""
    try:
        validate_answers(requests, answers)
    except AnswerError:
        return False
    return True


def to_elicit_result(answer: ElicitationAnswer) -> types.ElicitResult:
    """The MCP ``ElicitResult`` to send back to the server for one (validated) answer."""
    action = answer.get("action")
    if action not in _ACTIONS:
        raise AnswerError(f"action {show_value(action)} is not one of 'accept', 'decline', 'cancel'")
    content: Any = answer.get("content")
    if content is not None and action != "accept":
        raise AnswerError(f"a {action!r} answer carries no content")
    return types.ElicitResult(action=action, content=copy.deepcopy(content))


# ------------------------------------------------------------------------------------------- response schema


class ElicitationAnswersModel(CheckedResponse):
    """Base of the models :func:`answers_response_schema` builds (each bound to one set of requests).

    Validating runs :func:`validate_answers`; the validated object's :meth:`answers` (or ``.root``) is the
    normalized answers dict. Errors never echo the input (``hide_input_in_errors``): answers may hold secrets.
    """

    mcp_requests: ClassVar[dict[str, ElicitationRequest]] = {}

    def answers(self) -> ElicitationAnswers:
        """The normalized answers (defaults applied), one per request key: the value to send to the server."""
        return cast(ElicitationAnswers, self.root)


@functools.lru_cache(maxsize=256)
def _answers_model(requests_json: str) -> type[ElicitationAnswersModel]:
    requests: dict[str, ElicitationRequest] = json.loads(requests_json)
    return checked_response(
        ElicitationAnswersModel,
        "ElicitationAnswers",
        functools.partial(validate_answers, requests),
        answers_json_schema(requests),
        mcp_requests=requests,
    )


def answers_response_schema(requests: Mapping[str, ElicitationRequest]) -> type[ElicitationAnswersModel]:
    """The model class to pass as ``interrupt(payload, response_schema=...)`` for these requests.

    Validating a resume value runs :func:`validate_answers`, so a bad answer raises
    ``pydantic.ValidationError`` (its text holds the :class:`~langgraph_mcp.errors.AnswerError` message,
    naming key and field, and ``errors()[0]["ctx"]["error"]`` is the ``AnswerError``) before LangGraph saves
    anything. ``interrupt()`` returns an instance: call ``.answers()`` (or read ``.root``) for the normalized
    answers dict.

    The JSON schema clients see (``Interrupt.response_schema``) is an object with one property per request
    key, each a ``oneOf`` of accept (with ``content`` = the form's ``requested_schema``, closed to extra
    fields; no content for a URL request), decline and cancel. The class depends only on ``requests`` (by
    value, in order), so a new process rebuilds an identical one from the payload on resume.
    """
    requests_json = json.dumps(dict(requests), separators=(",", ":"), ensure_ascii=False)
    return _answers_model(requests_json)
