"""Checking a human's decision against the approval interrupt it answers, before anything is saved.

Decisions have LangChain's shapes (see :data:`langgraph_mcp.payloads.Decision`)::

    {"type": "approve"}                          # + "remember": "thread" | "principal", where offered
    {"type": "edit", "edited_action": {"name": "<published name>", "args": {...}}}
    {"type": "reject", "message": "optional reason"}   # + "remember", where offered
    {"type": "respond", "message": "the answer the model gets instead of the tool's result"}

Each type is one pydantic model (:class:`Approve`, :class:`Edit`, :class:`Reject`, :class:`Respond`; an extension
adds its own with :func:`register_decision_type`), pinned by the payload it answers (the offered ``remember``
scopes, the published name, the tool's inputSchema); a payload's allowed types form one discriminated union on
``type``. :func:`validate_decision` (the one set of rules: the approval gate, the node, the middleware and the resume
helper use it), the ``response_schema`` and the JSON Schema clients see (:func:`decision_json_schema`) all come
from that union; a refusal turns pydantic's error into words (the call, what is wrong, what to answer instead).
:func:`decision_response_schema` wraps it in a pydantic model for ``interrupt(value, response_schema=...)``:
LangGraph validates a resume value against that model *before* saving it, so a bad decision fails the
resume with a ``pydantic.ValidationError`` and the same interrupt (same id) can be answered again (an Agent Chat UI
card's answer with :class:`~langgraph_mcp.errors.AnswerRefusedError`: the same refusal, in words). A decision
that the node rejected *after* ``interrupt()`` returned would be stored and replayed forever.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, TypeAlias, Union, cast, get_args
from urllib.parse import unquote

import jsonschema  # type: ignore[import-untyped,unused-ignore]  # stubs may be missing
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
    create_model,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, SkipJsonSchema
from pydantic_core import ErrorDetails
from referencing.exceptions import Unresolvable

from langgraph_mcp.errors import AnswerError, ConfigError, DecisionError, SchemaTooComplexError
from langgraph_mcp.payloads import (
    ADDED_DECISIONS,
    ALL_DECISIONS,
    REMEMBER_SCOPES,
    ApprovalInterrupt,
    ApproveDecision,
    Decision,
    DecisionType,
    RejectDecision,
    RememberScope,
)
from langgraph_mcp.questions.approval import (
    REMEMBER_FIELD,
    REMEMBER_NOT,
    approval_card_keys,
    offered_words,
)
from langgraph_mcp.questions.cards import card_word, untouched
from langgraph_mcp.questions.coercion import coerce_edit
from langgraph_mcp.questions.schemas import (
    MAX_VALUE_DEPTH,
    CheckedResponse,
    argument_problems,
    checked_response,
    depth_exceeds,
    refused_on_card,
)

__all__ = [
    "DECISION_TYPES",
    "Approve",
    "CardDecisionResponse",
    "DecisionModel",
    "DecisionResponse",
    "Edit",
    "EditedAction",
    "Reject",
    "Respond",
    "card_decision_json_schema",
    "card_decision_response_schema",
    "clean_answer",
    "decision_json_schema",
    "decision_response_schema",
    "only_decision",
    "register_decision_type",
    "unregister_decision_type",
    "validate_decision",
]

_MAX_REPORTED_ERRORS = 5


# ------------------------------------------------------------------------------------------ the decision types


DecisionClass: TypeAlias = "type[DecisionModel]"
"""A decision type's model class (a name for it: inside the models, ``type`` is their discriminator field)."""


class DecisionModel(BaseModel):
    """Base of a decision type: its fields are the decision's keys, ``type: Literal[...]`` its discriminator.

    A decision type is this model plus what a payload pins on it (:meth:`for_payload`) and the words that refuse a
    wrong answer (:meth:`refusal`); :func:`validate_decision`, the ``response_schema`` and the JSON Schema clients
    see all come from the models of a payload's ``allowed_decisions``. Keys a type does not define are refused.
    """

    model_config = ConfigDict(
        extra="forbid",
        hide_input_in_errors=True,
        model_title_generator=lambda model: _title(model),
    )

    @classmethod
    def kind(cls) -> str:
        """The ``type`` this model stands for (its ``type`` field's one literal)."""
        (value,) = get_args(cls.model_fields["type"].annotation)
        return str(value)

    @classmethod
    def for_payload(cls, payload: ApprovalInterrupt) -> DecisionClass:
        """This type's model with what ``payload`` pins (e.g. the offered scopes, the published name, the args by
        the inputSchema). It sees only the payload's ``allowed_decisions``, ``published_name``, ``input_schema`` and
        ``remember``: the model is shared by every call with the same of those."""
        return cls

    @classmethod
    def refusal(cls, payload: ApprovalInterrupt, error: ErrorDetails) -> str:
        """The words for one pydantic ``error`` (its ``loc`` starts inside the decision): what is wrong."""
        where = ".".join(str(part) for part in error["loc"])
        return f"a {cls.kind()!r} decision's {where!r}: {error['msg']}"

    def decision(self, payload: ApprovalInterrupt) -> Decision:
        """What this answer does, as one of the four built-in decisions (the TypedDict shapes, :data:`Decision`).

        A built-in type is itself: the keys given, unset optional ones left out. A type added with
        :func:`register_decision_type` says here what it does to the call shown in ``payload`` (run it as shown,
        run it with other arguments, refuse it, answer the model instead); :func:`validate_decision` checks that
        decision against the payload like any other (an ``edit`` still keeps the tool and fits its inputSchema).
        """
        return cast(Decision, self.model_dump(exclude_none=True))


def _title(model: type[BaseModel]) -> str:
    """A decision type's schema is titled by its ``type`` (a nested model by its class)."""
    if issubclass(model, DecisionModel) and "type" in model.model_fields:
        return model.kind()
    return model.__name__


def _pinned_model(base: DecisionClass, **fields: Any) -> DecisionClass:
    """``base`` with ``fields`` pinned by a payload: same name, description and checks."""
    return create_model(base.__name__, __base__=base, __doc__=base.__doc__, **fields)


def _remember_pinned(payload: ApprovalInterrupt) -> Any:
    """A ``remember`` field taking only the scopes ``payload`` offers (none offered: no value at all)."""
    offered = tuple(payload.get("remember") or ())
    one_of: Any = Literal  # types built at run time: the scopes offered, and "no scope" (shown to nobody)
    unset: Any = SkipJsonSchema[None]  # type: ignore[misc]
    scopes: Any = unset | one_of[offered] if offered else unset
    return (scopes, None)


def _remember_refusal(payload: ApprovalInterrupt, scope: object) -> str:
    """Why the ``remember`` scope of an approve or reject is refused here, and what to answer instead."""
    if scope not in REMEMBER_SCOPES:
        return f"'remember' must be one of {', '.join(repr(s) for s in REMEMBER_SCOPES)}, got {scope!r}"
    offered = list(payload.get("remember") or [])
    why = (payload.get("remember_unavailable") or {}).get(str(scope), "it is not offered for this call")
    rest = f"offered: {', '.join(offered)}" if offered else "no scope is offered for this call"
    return f"cannot remember this decision for the {scope}: {why} ({rest}); answer without 'remember'" + (
        " or with an offered scope" if offered else ""
    )


class Approve(DecisionModel):
    """Run the call as shown; with remember, later calls of this tool too (for the scope given)."""

    type: Literal["approve"]
    remember: SkipJsonSchema[None] | RememberScope = None

    @classmethod
    def for_payload(cls, payload: ApprovalInterrupt) -> DecisionClass:
        return _pinned_model(cls, remember=_remember_pinned(payload))

    @classmethod
    def refusal(cls, payload: ApprovalInterrupt, error: ErrorDetails) -> str:
        if error["loc"][0] == "remember":
            return _remember_refusal(payload, error["input"])
        return super().refusal(payload, error)


class EditedAction(DecisionModel):
    """The call as edited: the same tool (its published name), other arguments."""

    name: StrictStr
    args: dict[str, Any]


def _checked_args(schema: object) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The check of edited args against the tool's inputSchema (Draft 2020-12 unless the schema names another):
    bounded depth, a copy, no network ``$ref``, no server regex (:mod:`langgraph_mcp.questions.schemas`). Its
    :class:`~langgraph_mcp.errors.DecisionError` holds the words without the call: the refusal names it."""

    def check(args: dict[str, Any]) -> dict[str, Any]:
        if depth_exceeds(args, MAX_VALUE_DEPTH):  # before copying or checking (both recurse)
            raise DecisionError(f"edited_action.args nest deeper than {MAX_VALUE_DEPTH} levels")
        args = copy.deepcopy(args)
        if not isinstance(schema, dict):
            return args
        try:
            problems = argument_problems(schema, args)
        except jsonschema.exceptions.SchemaError as exc:
            raise DecisionError(
                "edited arguments cannot be checked because the tool's inputSchema is invalid "
                f"({exc.message}); approve or reject the call instead"
            ) from None
        except Unresolvable as exc:  # a $ref we won't fetch: never go to the network for a schema
            raise DecisionError(
                f"edited arguments cannot be checked: the tool's inputSchema has an unresolvable $ref ({exc})"
            ) from None
        except SchemaTooComplexError as exc:
            raise DecisionError(
                f"edited arguments cannot be checked: {exc} in the tool's inputSchema; approve or reject the "
                "call instead"
            ) from None
        if problems:
            shown = "; ".join(f"{_arg_path(p.path)}: {p.message}" for p in problems[:_MAX_REPORTED_ERRORS])
            more = len(problems) - _MAX_REPORTED_ERRORS
            extra = f" (and {more} more)" if more > 0 else ""
            raise DecisionError(f"edited arguments do not match the tool's inputSchema: {shown}{extra}")
        return args

    return check


class Edit(DecisionModel):
    """Run the call with other arguments: the same tool, its args checked against its inputSchema."""

    type: Literal["edit"]
    edited_action: EditedAction

    @classmethod
    def for_payload(cls, payload: ApprovalInterrupt) -> DecisionClass:
        schema = payload.get("input_schema")
        shown = _args_schema(schema) if isinstance(schema, dict) else {"type": "object"}
        args: Any = Annotated[dict[str, Any], WithJsonSchema(shown), AfterValidator(_checked_args(schema))]
        name: Any = Literal[payload["published_name"]]  # renaming it would call another tool
        action = _pinned_model(EditedAction, name=(name, ...), args=(args, ...))
        return _pinned_model(cls, edited_action=(action, ...))

    @classmethod
    def refusal(cls, payload: ApprovalInterrupt, error: ErrorDetails) -> str:
        loc, given = error["loc"], error["input"]
        published = payload["published_name"]
        if len(loc) == 1:
            return f"an edit decision needs 'edited_action': {{'name': {published!r}, 'args': {{...}}}}"
        if loc[1] == "name":
            got = None if error["type"] == "missing" else given
            return (
                f"edited_action.name must stay {published!r} (an edit may change the arguments, not the tool), "
                f"got {got!r}"
            )
        if loc[1] == "args" and error["type"] == "value_error":
            return str(error["ctx"]["error"])
        if loc[1] == "args":
            got = None if error["type"] == "missing" else given
            return f"edited_action.args must be an object, got {type(got).__name__}"
        return super().refusal(payload, error)

    def decision(self, payload: ApprovalInterrupt) -> Decision:
        action = self.edited_action
        return {"type": "edit", "edited_action": {"name": action.name, "args": action.args}}


class Reject(DecisionModel):
    """Don't run the call; message says why (optional); with remember, refuse later calls of this tool too."""

    type: Literal["reject"]
    message: SkipJsonSchema[None] | StrictStr = None
    remember: SkipJsonSchema[None] | RememberScope = None

    @classmethod
    def for_payload(cls, payload: ApprovalInterrupt) -> DecisionClass:
        return _pinned_model(cls, remember=_remember_pinned(payload))

    @classmethod
    def refusal(cls, payload: ApprovalInterrupt, error: ErrorDetails) -> str:
        if error["loc"][0] == "remember":
            return _remember_refusal(payload, error["input"])
        if error["loc"][0] == "message":
            return f"a reject 'message' must be a string, got {type(error['input']).__name__}"
        return super().refusal(payload, error)


def _not_blank(message: str) -> str:
    if not message.strip():
        raise DecisionError("the message is blank")  # worded by Respond.refusal
    return message


class Respond(DecisionModel):
    """Don't run the call; the model gets message instead of the tool's result."""

    type: Literal["respond"]
    message: Annotated[StrictStr, Field(min_length=1), AfterValidator(_not_blank)]

    @classmethod
    def refusal(cls, payload: ApprovalInterrupt, error: ErrorDetails) -> str:
        if error["loc"][0] == "message":
            return (
                "a respond decision needs a non-empty 'message' (the answer the model gets instead of the "
                "tool's result)"
            )
        return super().refusal(payload, error)


DECISION_TYPES: dict[str, type[DecisionModel]] = {m.kind(): m for m in (Approve, Edit, Reject, Respond)}
"""The decision types an approval card may offer, by ``type`` (the payload's ``allowed_decisions`` pick some)."""


def register_decision_type(model: DecisionClass) -> None:
    """Add a decision type: a :class:`DecisionModel` subclass whose :meth:`~DecisionModel.decision` says what it
    does as one of the four built-in decisions. A policy's verdict (``Verdict.ask(..., allowed_decisions=[...])``)
    may then offer it, and answers of its shape are checked, shown to clients and applied like the others.
    """
    kind = model.kind()
    if kind in ALL_DECISIONS:
        raise ConfigError(f"{kind!r} is a built-in decision type: give the new one a name of its own")
    DECISION_TYPES[kind] = model
    ADDED_DECISIONS.add(kind)


def unregister_decision_type(kind: str) -> None:
    """Remove a decision type added with :func:`register_decision_type` (the four built-in ones stay)."""
    if kind not in ALL_DECISIONS:
        DECISION_TYPES.pop(kind, None)
        ADDED_DECISIONS.discard(kind)


def _allowed(payload: ApprovalInterrupt) -> list[DecisionType]:
    return [d for d in dict.fromkeys(payload["allowed_decisions"]) if d in DECISION_TYPES]


def _who(payload: ApprovalInterrupt) -> str:
    return f"tool call {payload['tool_call_id']!r} ({payload['published_name']})"


def _arg_path(path: Any) -> str:
    """``args.files[0].name`` from a jsonschema error path."""
    out = "args"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


_PINNED = ("allowed_decisions", "published_name", "input_schema", "remember")
"""What of a payload its decision types are pinned by (:meth:`DecisionModel.for_payload` sees only these): not the
call's id or arguments, so one union serves every call to the same tool."""


def _pinned(payload: ApprovalInterrupt) -> dict[str, Any]:
    view = {key: payload[key] for key in _PINNED if key in payload}  # type: ignore[literal-required]
    view["allowed_decisions"] = _allowed(payload)
    return view


class _Pins:
    """A payload's pinned view (what :meth:`DecisionModel.for_payload` sees), hashed by its JSON text."""

    def __init__(self, view: dict[str, Any]) -> None:
        self.view = view
        self.key = json.dumps(view, default=repr)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Pins) and other.key == self.key


@functools.lru_cache(maxsize=64)
def _pinned_union(pins: _Pins, models: tuple[DecisionClass, ...]) -> TypeAdapter[DecisionModel] | None:
    branches = tuple(model.for_payload(cast(ApprovalInterrupt, pins.view)) for model in models)
    if not branches:
        return None
    union: Any = Union[branches]  # noqa: UP007  # a runtime tuple of classes
    return TypeAdapter(Annotated[union, Field(discriminator="type")])


def _union_for(payload: ApprovalInterrupt) -> TypeAdapter[DecisionModel] | None:
    """The discriminated union of ``payload``'s allowed decision types, each pinned by it (``None``: none
    allowed); one per pinned view and set of models (a registered type changes the models)."""
    pins = _Pins(_pinned(payload))
    return _pinned_union(pins, tuple(DECISION_TYPES[d] for d in pins.view["allowed_decisions"]))


def _refusal(
    payload: ApprovalInterrupt, decision: Mapping[str, Any], error: ValidationError
) -> DecisionError:
    """The :class:`DecisionError` for a decision the payload's union refused: the call, what is wrong (in the
    decision type's own words), and what to do."""
    who = _who(payload)
    details = error.errors(include_url=False)
    first = details[0]
    if first["type"] in ("union_tag_not_found", "union_tag_invalid"):
        kind = decision.get("type")
        allowed = _allowed(payload)
        what = (
            f"decision type {kind!r} is not allowed"
            if isinstance(kind, str) and kind in DECISION_TYPES
            else f"unknown decision {kind!r}"
        )
        return DecisionError(f"{who}: {what}; allowed: {', '.join(allowed) or '(none)'}")
    kind = str(first["loc"][0])
    model = DECISION_TYPES[kind]
    extra = [e for e in details if e["type"] == "extra_forbidden"]
    if extra:  # a misspelt key must not silently drop what it held
        parent = extra[0]["loc"][1:-1]
        names = ", ".join(repr(e["loc"][-1]) for e in extra if e["loc"][1:-1] == parent)
        keys = ", ".join(_nested(model, parent).model_fields)
        where = f"a {kind!r} decision" if not parent else ".".join(str(p) for p in parent)
        return DecisionError(f"{who}: {where} has no {names} (its keys: {keys})")
    return DecisionError(f"{who}: {model.refusal(payload, {**first, 'loc': first['loc'][1:]})}")


def _nested(model: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel]:
    """The model at ``path`` inside ``model`` (``("edited_action",)`` → :class:`EditedAction`)."""
    for part in path:
        field = model.model_fields[str(part)].annotation
        if not (isinstance(field, type) and issubclass(field, BaseModel)):
            break
        model = field
    return model


def validate_decision(payload: ApprovalInterrupt, decision: object) -> Decision:
    """Check ``decision`` against the approval interrupt ``payload`` and return a clean copy of it.

    The checks are the models of the payload's ``allowed_decisions`` (:class:`Approve`, :class:`Edit`,
    :class:`Reject`, :class:`Respond`, and any :func:`register_decision_type` added), one discriminated union on
    ``type``, each pinned by the payload: an ``approve`` or ``reject`` may carry ``remember`` with a scope
    ``payload["remember"]`` offers (see :mod:`langgraph_mcp.approval.memory`); an ``edit`` must keep the tool's
    published name (renaming it, i.e. calling another tool, is not allowed) and its ``args`` must be an object
    that matches ``payload["input_schema"]`` when there is one (JSON Schema Draft 2020-12, or the draft the
    schema's ``$schema`` names; ``format`` is not asserted; ``$ref`` is never fetched over the network; a
    server's ``pattern`` is never run, see :mod:`langgraph_mcp.questions.schemas`); a ``respond`` needs a
    non-empty ``message``; a ``reject`` ``message`` is optional but must be a string. A key a decision type
    does not define is refused (a misspelt ``mesage`` must not silently drop the reason).

    A type added with :func:`register_decision_type` comes back as the built-in decision it stands for.

    Raises :class:`~langgraph_mcp.errors.DecisionError`, whose message names the tool call id and the problem.
    """
    return _checked(payload, decision)[1]


def clean_answer(payload: ApprovalInterrupt, decision: object) -> Decision:
    """``decision`` checked as :func:`validate_decision` does, as it is to be sent: the clean answer of its own type.

    For the built-in types this is :func:`validate_decision`'s result. An added type's answer stays itself (what the
    person chose, e.g. ``{"type": "sign", "by": "Ada"}``): the built-in decision it stands for is not allowed on the
    payload by itself, so a resume value (checked again wherever it is read) must be the answer, not its effect.
    """
    answer, done = _checked(payload, decision)
    return done if answer.kind() in ALL_DECISIONS else cast(Decision, answer.model_dump(exclude_none=True))


def _checked(payload: ApprovalInterrupt, decision: object) -> tuple[DecisionModel, Decision]:
    """The validated answer (its model) and the built-in decision it stands for."""
    who = _who(payload)
    if depth_exceeds(
        decision, MAX_VALUE_DEPTH + 3
    ):  # decision → edited_action → args → the args' own nesting
        raise DecisionError(f"{who}: the decision nests deeper than {MAX_VALUE_DEPTH + 3} levels")
    if not isinstance(decision, Mapping):
        raise DecisionError(
            f"{who}: a decision must be an object like {{'type': 'approve'}}, got {type(decision).__name__}"
        )
    union = _union_for(payload)
    if union is None:
        raise DecisionError(f"{who}: unknown decision {decision.get('type')!r}; allowed: (none)")
    try:
        answer = union.validate_python(dict(decision))
    except ValidationError as error:
        raise _refusal(payload, decision, error) from None
    done = answer.decision(payload)
    if answer.kind() in ALL_DECISIONS and done.get("type") == answer.kind():
        return answer, done
    return answer, _stands_for(payload, answer.kind(), done)


def _stands_for(payload: ApprovalInterrupt, kind: str, done: object) -> Decision:
    """The built-in decision an added type's answer stands for, checked against ``payload`` like an answer."""
    built_in = done.get("type") if isinstance(done, Mapping) else None
    if built_in not in ALL_DECISIONS or not isinstance(done, Mapping):
        raise DecisionError(
            f"{_who(payload)}: a {kind!r} decision must stand for one of {', '.join(ALL_DECISIONS)}, "
            f"got {built_in!r}"
        )
    as_built_in = cast(ApprovalInterrupt, {**payload, "allowed_decisions": [built_in]})
    try:
        return validate_decision(as_built_in, done)
    except DecisionError as error:
        raise DecisionError(f"{error} (the {built_in} a {kind!r} decision stands for)") from None


# ------------------------------------------------------------------------------------------ response schema


class _TooBig(Exception):
    pass


_INLINE_BUDGET = 20_000
"""How many schema nodes inlining ``$ref``s may produce before the args schema is shown as a plain object."""
_INLINE_MAX_DEPTH = 256
_ROOT_ONLY_KEYS = frozenset({"$schema", "$id", "$defs", "definitions"})


def _pointer(root: Any, ref: str) -> Any:
    """Resolve a local JSON pointer ref (``#/$defs/X``) in ``root``; ``None`` if not local or missing."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node = root
    for raw in ref[2:].split("/"):
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _args_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The tool's inputSchema, fit to nest in the response schema: local ``$ref``s inlined.

    Pydantic (which turns ``response_schema`` into the JSON schema clients see) only accepts its own
    ``$ref``s, and a nested schema's ``#/...`` refs would point at the wrong root anyway. A recursive ref
    becomes ``{}`` where it recurs, a non-local ref becomes ``{}``, and a schema that grows past a budget when
    inlined is shown as ``{"type": "object"}``. This is only what clients are shown; answers are checked
    against the original schema.
    """
    budget = [_INLINE_BUDGET]

    def walk(node: Any, depth: int, seen: tuple[str, ...]) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > _INLINE_MAX_DEPTH:
            raise _TooBig
        if isinstance(node, list):
            return [walk(item, depth + 1, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        out = {
            key: walk(value, depth + 1, seen)
            for key, value in node.items()
            if not (key == "$ref" and isinstance(ref, str)) and not (depth == 0 and key in _ROOT_ONLY_KEYS)
        }
        if not isinstance(ref, str):
            return out
        target = None if ref in seen else _pointer(schema, ref)
        resolved = walk(target, depth + 1, (*seen, ref)) if isinstance(target, dict | bool) else {}
        if not out:
            return resolved
        if resolved != {}:
            out["allOf"] = [*out.get("allOf", []), resolved]
        return out

    try:
        result = walk(schema, 0, ())
    except _TooBig:
        return {"type": "object"}
    return result if isinstance(result, dict) else {"type": "object"}


class _ShownSchema(GenerateJsonSchema):
    """The models' JSON Schema as clients are shown it: no per-field titles, no ``default: null``."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: Any) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with pydantic's ``#/$defs/...`` refs replaced by what they name (no ``$defs`` left).

    The args schema inside holds no string ``$ref`` (:func:`_args_schema` inlined or dropped them), so every ref
    left is pydantic's own, and the decision models do not refer to themselves."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
            return walk(defs[ref[8:]]) | {k: walk(v) for k, v in node.items() if k != "$ref"}
        return {key: walk(value) for key, value in node.items()}

    result: dict[str, Any] = walk(schema)
    return result


@functools.lru_cache(maxsize=64)
def _shown_schema(union: TypeAdapter[DecisionModel] | None) -> dict[str, Any]:
    """The union's JSON Schema as clients see it (one per union: the pins decide it); copy before changing it."""
    shown = _inlined(union.json_schema(schema_generator=_ShownSchema)) if union is not None else {"oneOf": []}
    shown.pop("discriminator", None)  # OpenAPI's, and its mapping pointed into the $defs now inlined
    branches = shown.get("oneOf", [shown])
    return branches[0] if len(branches) == 1 else shown  # one allowed: its plain schema


def decision_json_schema(payload: ApprovalInterrupt) -> dict[str, Any]:
    """The JSON Schema of an answer to ``payload``: a ``oneOf`` over the allowed decision types' models.

    It is the models' own schema (:func:`validate_decision`'s union), with ``$defs`` inlined: the edit branch pins
    ``edited_action.name`` to the published name and uses the tool's inputSchema for ``args``, ``remember`` lists
    the offered scopes.
    """
    return copy.deepcopy(_shown_schema(_union_for(payload)))


def card_decision_json_schema(payload: ApprovalInterrupt) -> dict[str, Any]:
    """The JSON Schema of an Agent Chat UI card's answer to ``payload``: LangChain's ``HITLResponse``,
    ``{"decisions": [<one decision>]}``, whose decision is one of :func:`decision_json_schema`'s or the card's
    boxes (the word typed in Decision decides)."""
    decision = decision_json_schema(payload)
    keys = approval_card_keys(payload)
    card = {
        "title": "card",
        "description": "What the Agent Chat UI card sends: its boxes; the word typed in Decision decides",
        "type": "object",
        "properties": {
            "type": {"const": "edit"},
            "edited_action": {
                "type": "object",
                "properties": {
                    "name": {"const": payload["published_name"]},
                    "args": {
                        "type": "object",
                        "properties": {keys.decision: {"type": "string"}},
                        "required": [keys.decision],
                    },
                },
                "required": ["name", "args"],
            },
        },
        "required": ["type", "edited_action"],
    }
    return {
        "type": "object",
        "properties": {
            "decisions": {
                "type": "array",
                "items": {"oneOf": [*decision.get("oneOf", [decision]), card]},
                "minItems": 1,
                "maxItems": 1,
            }
        },
        "required": ["decisions"],
        "additionalProperties": False,
    }


class DecisionResponse(CheckedResponse):
    """Base of the models :func:`decision_response_schema` builds; the validated answer is :meth:`decision`.

    ``root`` holds the cleaned decision.
    """

    def decision(self) -> Decision:
        """The validated decision."""
        return cast(Decision, self.root)


class CardDecisionResponse(DecisionResponse):
    """Base of the models :func:`card_decision_response_schema` builds: ``root`` holds ``{"decisions": [decision]}``."""

    def decision(self) -> Decision:
        """The validated decision: the one inside ``decisions``."""
        return cast(Decision, self.root["decisions"][0])


def decision_response_schema(payload: ApprovalInterrupt) -> type[DecisionResponse]:
    """A pydantic model for ``interrupt(payload, response_schema=...)`` that runs :func:`validate_decision`.

    ``interrupt()`` then returns an instance of it: call ``.decision()`` for the validated
    :data:`~langgraph_mcp.payloads.Decision`. A bad answer makes the resume raise ``pydantic.ValidationError``
    (whose message is the :class:`~langgraph_mcp.errors.DecisionError` text) before anything is saved, so the
    same interrupt stays answerable. Clients see :func:`decision_json_schema` as the interrupt's
    ``response_schema``.
    """
    snapshot: ApprovalInterrupt = copy.deepcopy(payload)  # later edits to payload must not change the rules
    return checked_response(
        DecisionResponse,
        "ApprovalDecision",
        lambda value: validate_decision(snapshot, value),
        decision_json_schema(snapshot),
    )


def card_decision_response_schema(payload: ApprovalInterrupt) -> type[DecisionResponse]:
    """:func:`decision_response_schema` for an Agent Chat UI card: the answer is LangChain's ``HITLResponse``,
    ``{"decisions": [decision]}`` with exactly one decision (what Agent Chat UI sends; a card's boxes are read by
    the word typed in Decision), and a refused one raises :class:`~langgraph_mcp.errors.AnswerRefusedError` (the
    ``DecisionError``'s text as it is, marked as a refused resume: the same interrupt stays answerable); a value
    of another shape is a ``DecisionError``. Clients see :func:`card_decision_json_schema`.
    """
    snapshot: ApprovalInterrupt = copy.deepcopy(payload)  # later edits to payload must not change the rules

    def check(value: object) -> object:
        try:
            # Agent Chat UI sends edited values as strings: coerce them by the inputSchema where unambiguous.
            decision = _card_decision(snapshot, only_decision(snapshot, value))
            decision = coerce_edit(decision, snapshot.get("input_schema"))
            return {"decisions": [validate_decision(snapshot, decision)]}
        except DecisionError as error:  # on a card, the person reads it in words (see AnswerRefusedError)
            if not (isinstance(value, Mapping) and "decisions" in value):
                raise  # no card sends that shape: a program's answer gets the plain error
            # The DecisionError's own text: the call, the argument and what is wrong, in words.
            raise refused_on_card([(None, str(error))], error) from None

    return checked_response(
        CardDecisionResponse, "ApprovalDecision", check, card_decision_json_schema(snapshot)
    )


def _card_decision(payload: ApprovalInterrupt, decision: object) -> object:
    """The decision an Agent Chat UI card's answer stands for (see :mod:`langgraph_mcp.questions.approval`).

    The card allows ``edit`` only, so what it sends is its boxes: the word typed in Decision decides. ``approve``
    runs the call with the argument boxes as they stand (unchanged: an ``approve``, changed: an ``edit``), with the
    Remember box's scope; ``reject`` refuses it with the Reason (and Remember's scope); ``respond`` answers the
    model with the Reason. An empty Decision, a word the card does not offer, a Reason beside ``approve`` (a reason
    is a "no"), and a scope with changed arguments are refused in words. A decision that does not carry the card's
    Decision box (a program's plain decision) is returned as it is.
    """
    requests = payload.get("action_requests") or []
    card = requests[0]["args"] if len(requests) == 1 else {}
    keys = approval_card_keys(payload)
    if keys.decision not in card or not isinstance(decision, Mapping) or decision.get("type") != "edit":
        return decision
    action = decision.get("edited_action")
    if not isinstance(action, Mapping) or not isinstance(action.get("args"), Mapping):
        return decision
    args = dict(action["args"])
    if keys.decision not in args:
        return decision
    who = _who(payload)
    typed = args.pop(keys.decision)
    reason_typed = args.pop(keys.reason, "")
    reason = reason_typed.strip() if isinstance(reason_typed, str) else ""
    args.pop(keys.help, None)
    scope = _card_scope(payload, card, args.pop(REMEMBER_FIELD, None) if REMEMBER_FIELD in card else None)
    allowed = _allowed(payload)
    try:
        word = card_word(typed, offered_words(allowed))
    except AnswerError as error:
        raise DecisionError(f"{who}: {error}") from None
    if word == "reject":
        reject: RejectDecision = {"type": "reject"}
        if reason:
            reject["message"] = reason
        if scope is not None:
            reject["remember"] = scope
        return reject
    if word == "respond":
        if not reason:
            raise DecisionError(
                f"{who}: respond sends your Reason to the model, and Reason is empty: type it"
            )
        return {"type": "respond", "message": reason}
    if reason:
        raise DecisionError(
            f"{who}: Decision says approve but Reason holds text (a reason goes with reject): clear Reason to "
            "run the call, or type reject in Decision to refuse it"
        )
    args = untouched(
        payload["arguments"], args
    )  # a box sent back as shown is the value shown, whatever its type
    edit: object = coerce_edit(
        {"type": "edit", "edited_action": {"name": payload["published_name"], "args": args}},
        payload.get("input_schema"),
    )
    edited = cast(Mapping[str, Any], edit)["edited_action"]["args"]
    if edited == dict(payload["arguments"]):
        if "approve" not in allowed:
            raise DecisionError(
                f"{who}: this call may not run as shown: change its boxes and type approve, or type reject"
            )
        approve: ApproveDecision = {"type": "approve"}
        if scope is not None:
            approve["remember"] = scope
        return approve
    if "edit" not in allowed:
        raise DecisionError(
            f"{who}: this call may run only as shown, and its boxes were changed: Reset the card (it empties "
            "Decision too) and type approve, or type reject"
        )
    if scope is not None:
        raise DecisionError(
            f"{who}: an edited call cannot be remembered; set Remember back to {REMEMBER_NOT} to send the edit, "
            "or undo the edit to remember the call as shown"
        )
    return edit


def _card_scope(payload: ApprovalInterrupt, card: Mapping[str, Any], typed: object) -> RememberScope | None:
    """The scope typed in the card's Remember box (``None``: left at ``no``, emptied, or no box)."""
    if typed is None or typed == card.get(REMEMBER_FIELD):
        return None
    scope = typed.strip().lower() if isinstance(typed, str) else typed
    offered = list(payload.get("remember") or [])
    if scope in (REMEMBER_NOT, ""):
        return None
    for offer in offered:
        if scope == offer:
            return offer
    raise DecisionError(
        f"{_who(payload)}: Remember: {typed!r} is not one of {', '.join([REMEMBER_NOT, *offered])}; type one of "
        "them (or leave it at no)"
    )


def only_decision(payload: ApprovalInterrupt, value: object) -> object:
    """The one decision inside LangChain's ``{"decisions": [decision]}`` (Agent Chat UI's answer shape); a card's
    boxes (an ``edit`` carrying its Decision box) are read as the decision typed there (:func:`_card_decision`).

    Raises :class:`~langgraph_mcp.errors.DecisionError` unless ``value`` is exactly that: one key, one decision.
    """
    decisions = value.get("decisions") if isinstance(value, Mapping) else None
    if isinstance(value, Mapping) and set(value) != {"decisions"}:
        decisions = None
    if not isinstance(decisions, list | tuple) or len(decisions) != 1:
        got = f"{len(decisions)} decisions" if isinstance(decisions, list | tuple) else repr(value)[:80]
        raise DecisionError(
            f"{_who(payload)}: expected {{'decisions': [decision]}} with exactly one decision, got {got}"
        )
    return _card_decision(
        payload, decisions[0]
    )  # an Agent Chat UI card's boxes: the word in Decision decides
