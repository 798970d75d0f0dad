"""Checking values against schemas: the response schema LangGraph checks a resume against, and untrusted server schemas.

Checking values against JSON Schemas that servers chose, at bounded cost: no server regex, bounded depth.

A server's ``requestedSchema`` (elicitation) and ``inputSchema`` (edited approval arguments) are untrusted input.
Three things could make checking a value against one cost without bound, and each is closed here:

* **Server regexes.** ``pattern`` and ``patternProperties`` would run a server-chosen regex on Python's
  backtracking engine, on the event loop (``^(a+)+$`` against 29 characters takes seconds, doubling per
  character). They are **not run**: MCP's elicitation schema has no ``pattern`` at all, and a tool server checks
  its own arguments anyway. Where ``patternProperties`` would decide which properties ``additionalProperties`` /
  ``unevaluatedProperties`` cover, those two are not asserted either (a stricter guess could refuse a valid
  value). This was chosen over a time-bounded regex engine: none is a dependency, and a CPU-bound regex can't be
  interrupted on the loop.
* **Deep values.** Values nested deeper than a limit are refused before anything recursive touches them
  (:func:`depth_exceeds` is iterative).
* **Self-referential schemas** (``"$ref": "#"`` that never consumes the value) make ``jsonschema`` recurse
  without end; :func:`check` turns that into :class:`~langgraph_mcp.errors.SchemaTooComplexError`, which
  callers report as their own error.

Models for ``interrupt(value, response_schema=...)``: our own check runs before LangGraph saves a resume value.

LangGraph 1.2 validates a resume value against a pydantic ``response_schema`` when ``interrupt()`` takes it and
saves it only if it passes: a failure raises ``pydantic.ValidationError`` and the same interrupt stays pending (a
value refused *after* ``interrupt()`` returned would be replayed forever). The approval gate (decisions) and the
elicitation asker (answers) both need that, each with a check of its own and a JSON Schema shown to clients as
``Interrupt.response_schema``; :func:`checked_response` builds one such model.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, NamedTuple, TypeVar, cast

import jsonschema
from pydantic import ConfigDict, GetJsonSchemaHandler, RootModel, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from langgraph_mcp._compat import mark_invalid_resume
from langgraph_mcp.errors import AnswerError, AnswerRefusedError, DecisionError, SchemaTooComplexError

__all__ = [
    "MAX_VALUE_DEPTH",
    "ArgumentProblem",
    "CheckedResponse",
    "argument_problems",
    "bounded_validator",
    "check",
    "checked_response",
    "depth_exceeds",
    "refused_on_card",
]

MAX_VALUE_DEPTH = 64
"""How deeply a value checked against a server's schema may nest (the catalog's inputSchema limit)."""


def depth_exceeds(value: object, limit: int) -> bool:
    """Whether ``value`` nests dicts/lists deeper than ``limit`` levels. Iterative: never recurses."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))
    return False


def _not_run(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
    return iter(())


def _unless_patterns(original: Any) -> Any:
    """A keyword that is only asserted when no ``patternProperties`` would decide which properties it covers."""

    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if isinstance(schema, dict) and "patternProperties" in schema:
            return iter(())
        if original is None:
            return iter(())
        result: Iterator[Any] = original(validator, value, instance, schema)
        return result

    return keyword


@functools.lru_cache(maxsize=16)
def _bounded_class(cls: Any) -> Any:
    validators = getattr(cls, "VALIDATORS", {})
    overrides: dict[str, Any] = {"pattern": _not_run, "patternProperties": _not_run}
    for name in ("additionalProperties", "unevaluatedProperties"):
        if name in validators:
            overrides[name] = _unless_patterns(validators[name])
    extend: Any = jsonschema.validators.extend  # untyped in jsonschema's stubs
    return extend(cls, overrides)


def bounded_validator(schema: Any, *, format_checker: Any = None) -> Any:
    """A ``jsonschema`` validator for ``schema`` (Draft 2020-12 unless it names another) that runs no server regex.

    Raises ``jsonschema.SchemaError`` for an invalid schema.
    """
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return _bounded_class(cls)(schema, format_checker=format_checker)


def check(validator: Any, value: object) -> list[Any]:
    """Every validation error of ``value`` (call :func:`depth_exceeds` first). Raises :class:`~langgraph_mcp.errors.SchemaTooComplexError`."""
    try:
        return list(validator.iter_errors(value))
    except RecursionError:
        raise SchemaTooComplexError("the schema refers to itself without end (a '$ref' cycle)") from None


class ArgumentProblem(NamedTuple):
    """One way tool arguments miss their ``inputSchema``: where (a path into the arguments) and what."""

    path: tuple[str | int, ...]
    message: str


def argument_problems(schema: Mapping[str, Any], args: Mapping[str, Any]) -> list[ArgumentProblem]:
    """Every problem of tool arguments against a server's ``inputSchema``, ordered by path (bounded cost).

    The one check for arguments a human edited (approval decisions) or typed (the CLI). Raises
    ``jsonschema.SchemaError`` for an invalid schema, ``referencing.exceptions.Unresolvable`` for a ``$ref`` that
    would have to be fetched (never from the network), and :class:`~langgraph_mcp.errors.SchemaTooComplexError`
    for a ``$ref`` cycle or arguments nested deeper than :data:`MAX_VALUE_DEPTH`.
    """
    if depth_exceeds(args, MAX_VALUE_DEPTH):
        raise SchemaTooComplexError(f"the arguments nest deeper than {MAX_VALUE_DEPTH} levels")
    errors = check(bounded_validator(dict(schema)), dict(args))
    problems = [ArgumentProblem(tuple(e.absolute_path), str(e.message)) for e in errors]
    return sorted(problems, key=lambda p: [str(part) for part in p.path])


class CheckedResponse(RootModel[Any]):
    """Base of every response model: validating runs ``check`` (its result becomes ``root``), and clients are
    shown ``shown_schema``. Errors never echo the input (``hide_input_in_errors``): answers may hold secrets."""

    model_config = ConfigDict(hide_input_in_errors=True)

    check: ClassVar[Callable[[object], object]]
    shown_schema: ClassVar[dict[str, Any]] = {}

    @model_validator(mode="before")
    @classmethod
    def _run_check(cls, data: Any) -> Any:
        if isinstance(data, CheckedResponse):  # e.g. an instance of a rebuilt class
            data = data.root
        return cls.check(data)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return copy.deepcopy(cls.shown_schema)


R = TypeVar("R", bound=CheckedResponse)


def refused_on_card(
    problems: list[tuple[str | None, str]], error: AnswerError | DecisionError
) -> AnswerRefusedError:
    """An answer given on an Agent Chat UI card, refused in words (``problems``: field or None, words), marked as a
    refused resume value as ``interrupt()`` marks its ``ValidationError``: the same interrupt stays pending."""
    refusal = AnswerRefusedError("; ".join(words for _, words in problems), problems=problems, error=error)
    mark_invalid_resume(refusal)
    return refusal


def checked_response(
    base: type[R],
    name: str,
    check: Callable[[object], object],
    shown_schema: dict[str, Any],
    **attributes: Any,
) -> type[R]:
    """A subclass of ``base`` named ``name`` that validates with ``check`` and shows ``shown_schema`` (titled
    ``name`` unless it has a title).

    ``check`` raises ``ValueError`` (our ``AnswerError``/``DecisionError``) for a bad value; pydantic turns it into
    the ``ValidationError`` LangGraph raises (an Agent Chat UI card's ``AnswerRefusedError`` it lets through).
    ``attributes`` become class attributes (e.g. the requests checked).
    """
    namespace = {
        "__module__": base.__module__,
        "check": staticmethod(check),
        "shown_schema": {"title": name, **shown_schema},
        **attributes,
    }
    return cast(type[R], type(name, (base,), namespace))
