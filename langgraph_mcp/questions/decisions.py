"""Checking a human's decision against the approval interrupt it answers, before anything is saved.

Decisions have LangChain's shapes (see :data:`langgraph_mcp.payloads.Decision`)::

    {"type": "approve"}                          # + "remember": "thread" | "principal", where offered
    {"type": "edit", "edited_action": {"name": "<published name>", "args": {...}}}
    {"type": "reject", "message": "optional reason"}   # + "remember", where offered
    {"type": "respond", "message": "the answer the model gets instead of the tool's result"}

:func:`validate_decision` is the one set of rules; both the approval gate and the resume helper use it.
:func:`decision_response_schema` wraps it in a pydantic model for ``interrupt(value, response_schema=...)``:
LangGraph validates a resume value against that model *before* saving it, so a bad decision fails the
resume with a ``pydantic.ValidationError`` and the same interrupt (same id) can be answered again (an Agent Chat UI
card's answer with :class:`~langgraph_mcp.errors.AnswerRefusedError`: the same refusal, in words). A decision
that the node rejected *after* ``interrupt()`` returned would be stored and replayed forever.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar, cast
from urllib.parse import unquote

import jsonschema  # type: ignore[import-untyped,unused-ignore]  # stubs may be missing
from referencing.exceptions import Unresolvable

from langgraph_mcp.errors import AnswerError, DecisionError, SchemaTooComplexError
from langgraph_mcp.payloads import (
    ALL_DECISIONS,
    REMEMBER_SCOPES,
    ApprovalInterrupt,
    ApproveDecision,
    Decision,
    DecisionType,
    EditDecision,
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
    "DecisionResponse",
    "decision_json_schema",
    "decision_response_schema",
    "only_decision",
    "validate_decision",
]

_MAX_REPORTED_ERRORS = 5
_DECISION_KEYS: dict[str, tuple[str, ...]] = {
    "approve": ("type", "remember"),
    "edit": ("type", "edited_action"),
    "reject": ("type", "message", "remember"),
    "respond": ("type", "message"),
}


def _allowed(payload: ApprovalInterrupt) -> list[DecisionType]:
    return [d for d in dict.fromkeys(payload["allowed_decisions"]) if d in ALL_DECISIONS]


def _who(payload: ApprovalInterrupt) -> str:
    return f"tool call {payload['tool_call_id']!r} ({payload['published_name']})"


def _arg_path(path: Any) -> str:
    """``args.files[0].name`` from a jsonschema error path."""
    out = "args"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _check_args(payload: ApprovalInterrupt, args: dict[str, Any]) -> None:
    """Check edited args against the tool's inputSchema (Draft 2020-12 unless the schema names another)."""
    schema = payload.get("input_schema")
    if not isinstance(schema, dict):
        return
    who = _who(payload)
    try:
        problems = argument_problems(schema, args)
    except jsonschema.exceptions.SchemaError as exc:
        raise DecisionError(
            f"{who}: edited arguments cannot be checked because the tool's inputSchema is invalid "
            f"({exc.message}); approve or reject the call instead"
        ) from exc
    except Unresolvable as exc:  # a $ref we won't fetch: never go to the network for a schema
        raise DecisionError(
            f"{who}: edited arguments cannot be checked: the tool's inputSchema has an unresolvable "
            f"$ref ({exc})"
        ) from exc
    except SchemaTooComplexError as exc:
        raise DecisionError(
            f"{who}: edited arguments cannot be checked: {exc} in the tool's inputSchema; approve or reject "
            "the call instead"
        ) from None
    if problems:
        shown = "; ".join(f"{_arg_path(p.path)}: {p.message}" for p in problems[:_MAX_REPORTED_ERRORS])
        more = len(problems) - _MAX_REPORTED_ERRORS
        extra = f" (and {more} more)" if more > 0 else ""
        raise DecisionError(f"{who}: edited arguments do not match the tool's inputSchema: {shown}{extra}")


def _remember(payload: ApprovalInterrupt, scope: object) -> RememberScope:
    """The ``remember`` scope of an approve or reject, if the payload offers it (else a clear error)."""
    offered = list(payload.get("remember") or [])
    if scope in offered:
        return scope
    who = _who(payload)
    if scope not in REMEMBER_SCOPES:
        raise DecisionError(
            f"{who}: 'remember' must be one of {', '.join(repr(s) for s in REMEMBER_SCOPES)}, got {scope!r}"
        )
    why = (payload.get("remember_unavailable") or {}).get(str(scope), "it is not offered for this call")
    rest = f"offered: {', '.join(offered)}" if offered else "no scope is offered for this call"
    raise DecisionError(
        f"{who}: cannot remember this decision for the {scope}: {why} ({rest}); answer without 'remember'"
        + (" or with an offered scope" if offered else "")
    )


def validate_decision(payload: ApprovalInterrupt, decision: object) -> Decision:
    """Check ``decision`` against the approval interrupt ``payload`` and return a clean copy of it.

    Rules: the ``type`` must be one of ``payload["allowed_decisions"]``; an ``approve`` or ``reject`` may carry
    ``remember`` with a scope ``payload["remember"]`` offers (see :mod:`langgraph_mcp.approval.memory`); an ``edit`` must keep the tool's
    published name (renaming it, i.e. calling another tool, is not allowed) and its ``args`` must be an object
    that matches ``payload["input_schema"]`` when there is one (JSON Schema Draft 2020-12, or the draft the
    schema's ``$schema`` names; ``format`` is not asserted; ``$ref`` is never fetched over the network; a
    server's ``pattern`` is never run, see :mod:`langgraph_mcp.questions.schemas`); a ``respond`` needs a
    non-empty ``message``; a ``reject`` ``message`` is optional but must be a string. A key a decision type
    does not define is refused (a misspelt ``mesage`` must not silently drop the reason).

    Raises :class:`~langgraph_mcp.errors.DecisionError`, whose message names the tool call id and the problem.
    """
    who = _who(payload)
    allowed = _allowed(payload)
    if depth_exceeds(
        decision, MAX_VALUE_DEPTH + 3
    ):  # decision → edited_action → args → the args' own nesting
        raise DecisionError(f"{who}: the decision nests deeper than {MAX_VALUE_DEPTH + 3} levels")
    if not isinstance(decision, Mapping):
        raise DecisionError(
            f"{who}: a decision must be an object like {{'type': 'approve'}}, got {type(decision).__name__}"
        )
    kind = decision.get("type")
    if kind not in allowed:
        what = (
            f"decision type {kind!r} is not allowed"
            if kind in ALL_DECISIONS
            else f"unknown decision {kind!r}"
        )
        raise DecisionError(f"{who}: {what}; allowed: {', '.join(allowed) or '(none)'}")
    extra = [k for k in decision if k not in _DECISION_KEYS[kind]]
    if extra:
        raise DecisionError(
            f"{who}: a {kind!r} decision has no {', '.join(repr(k) for k in extra)} "
            f"(its keys: {', '.join(_DECISION_KEYS[kind])})"
        )
    if kind == "approve":
        approve: ApproveDecision = {"type": "approve"}
        if "remember" in decision:
            approve["remember"] = _remember(payload, decision["remember"])
        return approve
    if kind == "reject":
        return _reject(payload, decision, who)
    if kind == "respond":
        return _respond(decision, who)
    return _edit(payload, decision, who)


def _reject(payload: ApprovalInterrupt, decision: Mapping[str, Any], who: str) -> RejectDecision:
    message = decision.get("message")
    if message is not None and not isinstance(message, str):
        raise DecisionError(f"{who}: a reject 'message' must be a string, got {type(message).__name__}")
    reject: RejectDecision = {"type": "reject"}
    if message is not None:
        reject["message"] = message
    if "remember" in decision:
        reject["remember"] = _remember(payload, decision["remember"])
    return reject


def _respond(decision: Mapping[str, Any], who: str) -> Decision:
    message = decision.get("message")
    if not isinstance(message, str) or not message.strip():
        raise DecisionError(
            f"{who}: a respond decision needs a non-empty 'message' (the answer the model gets instead "
            "of the tool's result)"
        )
    return {"type": "respond", "message": message}


def _edit(payload: ApprovalInterrupt, decision: Mapping[str, Any], who: str) -> EditDecision:
    action = decision.get("edited_action")
    if not isinstance(action, Mapping):
        raise DecisionError(
            f"{who}: an edit decision needs 'edited_action': {{'name': {payload['published_name']!r}, "
            "'args': {...}}"
        )
    extra = [k for k in action if k not in ("name", "args")]
    if extra:
        raise DecisionError(
            f"{who}: edited_action has no {', '.join(repr(k) for k in extra)} (its keys: name, args)"
        )
    name = action.get("name")
    if name != payload["published_name"]:
        raise DecisionError(
            f"{who}: edited_action.name must stay {payload['published_name']!r} (an edit may change the "
            f"arguments, not the tool), got {name!r}"
        )
    args = action.get("args")
    if not isinstance(args, Mapping):
        raise DecisionError(f"{who}: edited_action.args must be an object, got {type(args).__name__}")
    if depth_exceeds(args, MAX_VALUE_DEPTH):  # before copying or checking (both recurse)
        raise DecisionError(f"{who}: edited_action.args nest deeper than {MAX_VALUE_DEPTH} levels")
    args = copy.deepcopy(dict(args))
    _check_args(payload, args)
    return {"type": "edit", "edited_action": {"name": payload["published_name"], "args": args}}


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


def decision_json_schema(payload: ApprovalInterrupt, *, compat: bool = False) -> dict[str, Any]:
    """The JSON Schema of an answer to ``payload``: a ``oneOf`` over the allowed decision shapes.

    The edit branch pins ``edited_action.name`` to the published name and uses the tool's inputSchema for
    ``args``. With ``compat=True`` it is LangChain's ``HITLResponse``: ``{"decisions": [<one decision>]}``.
    """
    branches: dict[DecisionType, dict[str, Any]] = {
        "approve": {
            "title": "approve",
            "type": "object",
            "properties": {"type": {"const": "approve"}},
            "required": ["type"],
            "additionalProperties": False,
        },
        "edit": {
            "title": "edit",
            "type": "object",
            "properties": {
                "type": {"const": "edit"},
                "edited_action": {
                    "type": "object",
                    "properties": {
                        "name": {"const": payload["published_name"]},
                        "args": (
                            _args_schema(payload["input_schema"])
                            if isinstance(payload.get("input_schema"), dict)
                            else {"type": "object"}
                        ),
                    },
                    "required": ["name", "args"],
                    "additionalProperties": False,
                },
            },
            "required": ["type", "edited_action"],
            "additionalProperties": False,
        },
        "reject": {
            "title": "reject",
            "type": "object",
            "properties": {"type": {"const": "reject"}, "message": {"type": "string"}},
            "required": ["type"],
            "additionalProperties": False,
        },
        "respond": {
            "title": "respond",
            "type": "object",
            "properties": {"type": {"const": "respond"}, "message": {"type": "string", "minLength": 1}},
            "required": ["type", "message"],
            "additionalProperties": False,
        },
    }
    offered = list(payload.get("remember") or [])
    if offered:
        for kind in ("approve", "reject"):
            branches[kind]["properties"]["remember"] = {"enum": offered}
    allowed = _allowed(payload)
    decision: dict[str, Any] = (
        {"oneOf": [branches[d] for d in allowed]} if len(allowed) != 1 else branches[allowed[0]]
    )
    if compat:
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
        decision = {"oneOf": [*decision.get("oneOf", [decision]), card]}
        decision = {
            "type": "object",
            "properties": {"decisions": {"type": "array", "items": decision, "minItems": 1, "maxItems": 1}},
            "required": ["decisions"],
            "additionalProperties": False,
        }
    return decision


class DecisionResponse(CheckedResponse):
    """Base of the models :func:`decision_response_schema` builds; the validated answer is :meth:`decision`.

    ``root`` holds the cleaned answer: the decision itself, or ``{"decisions": [decision]}`` in compat mode.
    """

    compat: ClassVar[bool] = False

    def decision(self) -> Decision:
        """The validated decision (in compat mode: the one decision inside ``decisions``)."""
        if self.compat:
            return cast(Decision, self.root["decisions"][0])
        return cast(Decision, self.root)


def decision_response_schema(payload: ApprovalInterrupt, *, compat: bool = False) -> type[DecisionResponse]:
    """A pydantic model for ``interrupt(payload, response_schema=...)`` that runs :func:`validate_decision`.

    ``interrupt()`` then returns an instance of it: call ``.decision()`` for the validated
    :data:`~langgraph_mcp.payloads.Decision`. A bad answer makes the resume raise ``pydantic.ValidationError``
    (whose message is the :class:`~langgraph_mcp.errors.DecisionError` text) before anything is saved, so the
    same interrupt stays answerable. With ``compat=True`` the answer is LangChain's ``HITLResponse``,
    ``{"decisions": [decision]}`` with exactly one decision (what Agent Chat UI sends), and a refused one raises
    :class:`~langgraph_mcp.errors.AnswerRefusedError` instead (the ``DecisionError``'s text as it is, marked as a
    refused resume: the same interrupt stays answerable); a value of another shape is a ``DecisionError`` as
    above. Clients see :func:`decision_json_schema` as the interrupt's ``response_schema``.
    """
    snapshot: ApprovalInterrupt = copy.deepcopy(payload)  # later edits to payload must not change the rules

    def check(value: object) -> object:
        if not compat:
            return validate_decision(snapshot, value)
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
        DecisionResponse,
        "ApprovalDecision",
        check,
        decision_json_schema(snapshot, compat=compat),
        compat=compat,
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
