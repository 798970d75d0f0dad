"""Coercing string-typed UI edits to the types a JSON schema asks for, where only one reading is possible.

Agent Chat UI sends every edited field as a string: ``{"count": "5", "notify": "true"}``. Checked as sent, such
an edit fails a schema that wants an integer and a boolean, and the UI has no way to send anything else. So
before an edit (approval ``edited_action.args``) or a form answer (elicitation ``content``) is validated, each
string is converted **only when the schema leaves no doubt**:

* ``"integer"`` — ``"5"``, ``"-3"`` become ``5``, ``-3`` (``"5.0"``, ``"five"`` stay as they are);
* ``"number"`` — a decimal literal (``"2.5"``, ``"1e3"``) becomes a number (no ``nan``/``inf``);
* ``"boolean"`` — ``"true"`` / ``"false"`` (any case) become ``true`` / ``false``; nothing else;
* ``"array"`` / ``"object"`` — a string that parses as JSON of exactly that type;
* an ``enum`` without a ``type`` whose members are all non-strings — the member whose JSON text it is.

A field whose schema allows a string (``"type": "string"``, also with ``format: date``; a type list with
``"string"``; a ``anyOf`` with a string branch), or says nothing about the type, is left alone. A value that
cannot be converted is left as sent, so the validator that runs next reports it (naming the field). Nothing
here decides anything: coercion only changes how a value is spelled, never whether it is accepted.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["coerce_edit", "coerce_to_schema"]

_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_MAX_DEPTH = 32
_UNREAD = object()  # _scalar found no reading


def _types(schema: Mapping[str, Any]) -> set[str] | None:
    """The JSON types ``schema`` allows, or ``None`` when it does not say (or allows anything)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return set(kind)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        found: set[str] = set()
        for branch in branches:
            inner = _types(branch) if isinstance(branch, Mapping) else None
            if inner is None:
                return None
            found |= inner
        return found
    return None


def _from_string(text: str, schema: Mapping[str, Any]) -> Any:
    types = _types(schema)
    if types is None:
        return _from_enum(text, schema)
    if "string" in types:
        return text
    stripped = text.strip()
    scalar = _scalar(stripped, types)
    if scalar is not _UNREAD:
        return scalar
    if types & {"array", "object"}:
        return _container(text, stripped, types, schema)
    return text


def _from_enum(text: str, schema: Mapping[str, Any]) -> Any:
    """A schema with no type: the one non-string ``enum`` member spelled ``text``, else ``text``."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and not any(isinstance(m, str) for m in enum):
        matches = [m for m in enum if json.dumps(m) == text.strip()]
        return matches[0] if len(matches) == 1 else text
    return text


def _scalar(stripped: str, types: set[str]) -> Any:
    """``stripped`` read as an integer, a (finite) number or a boolean the types allow, else ``_UNREAD``."""
    if "integer" in types and _INTEGER.fullmatch(stripped):
        return int(stripped)
    if "number" in types and _NUMBER.fullmatch(stripped):
        number = float(stripped)
        if math.isfinite(number):
            return int(number) if _INTEGER.fullmatch(stripped) else number
    if "boolean" in types and stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    return _UNREAD


def _container(text: str, stripped: str, types: set[str], schema: Mapping[str, Any]) -> Any:
    """``stripped`` parsed as the JSON array or object the types allow (its strings coerced too), else ``text``."""
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):  # nested deeper than the parser goes: left for the validator
        return text
    if ("array" in types and isinstance(parsed, list)) or ("object" in types and isinstance(parsed, dict)):
        return _walk(parsed, schema, 0)
    return text


def _walk(value: Any, schema: Any, depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return value
    if isinstance(value, str):
        return _from_string(value, schema)
    if isinstance(value, dict):
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        out = {}
        for key, item in value.items():
            sub = properties.get(key) if isinstance(properties, Mapping) and key in properties else extra
            out[key] = _walk(item, sub, depth + 1)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        return [_walk(item, items, depth + 1) for item in value]
    return value


def coerce_to_schema(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """A copy of ``value`` with its strings converted where ``schema`` leaves one reading (see the module doc).

    ``value`` is usually an object (edited tool arguments, a form's content) and ``schema`` its object schema;
    nested objects and arrays are followed through ``properties``, ``additionalProperties`` and ``items``.
    Local ``$ref``s are not followed (such fields are left alone). Values of other types are returned as they
    are.
    """
    if not isinstance(schema, Mapping):
        return value
    return _walk(value, schema, 0)


def coerce_edit(decision: object, input_schema: Mapping[str, Any] | None) -> object:
    """An approval decision whose ``edit`` args are coerced by the tool's ``input_schema`` (anything else is
    returned as it is)."""
    if not isinstance(decision, Mapping) or decision.get("type") != "edit":
        return decision
    action = decision.get("edited_action")
    if not isinstance(action, Mapping) or not isinstance(action.get("args"), Mapping):
        return decision
    args = coerce_to_schema(dict(action["args"]), input_schema)
    return {**decision, "edited_action": {**action, "args": args}}
