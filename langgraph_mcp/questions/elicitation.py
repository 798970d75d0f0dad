"""A server's question as a form: the payload entry a UI renders, what each field accepts, the answer's schema.

An MCP server asks for input with ``elicitation/create`` (a *form* with a flat ``requestedSchema``, or a
*URL* to open). :func:`request_from_params` turns one into an :class:`~langgraph_mcp.payloads.ElicitationRequest`
(with what :mod:`~langgraph_mcp.questions.inspection` finds: the URL's real host, secret fields);
:func:`field_options` and :func:`describe_field` read a field's schema the way a form shows it; and
:func:`answers_json_schema` is the shape of a whole answer, shown to clients as the interrupt's response schema.
Legacy (2025-era) elicitation has no server-chosen request keys; :func:`question_key` derives stable ones.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any, Literal, cast

import mcp.types as types

from langgraph_mcp.errors import ConfigError
from langgraph_mcp.payloads import ElicitationRequest, FormRequest, UrlRequest
from langgraph_mcp.questions.inspection import inspect_url, sensitive_fields

__all__ = [
    "FORMAT_HINTS",
    "answers_json_schema",
    "describe_field",
    "field_options",
    "question_key",
    "request_from_params",
    "show_value",
]

# --------------------------------------------------------------------------------------------- requests


def request_from_params(
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams,
) -> ElicitationRequest:
    """Turn an MCP ``elicitation/create`` request into the payload entry a UI renders.

    A form becomes ``{"mode": "form", "message", "requested_schema", "sensitive", "asks_for_secrets"}``
    (``sensitive`` from :func:`~langgraph_mcp.questions.inspection.sensitive_fields`; the schema is copied,
    exactly as the server sent it); a URL request becomes ``{"mode": "url", "message", "url", "host", "scheme",
    "openable"}`` and a ``warning`` when there is one (see :func:`~langgraph_mcp.questions.inspection.inspect_url`:
    the host a browser would go to; only ``openable`` URLs may be offered as links).
    """
    if isinstance(params, types.ElicitRequestFormParams):
        schema = copy.deepcopy(dict(params.requested_schema))
        sensitive = sensitive_fields(schema)
        return FormRequest(
            mode="form",
            message=params.message,
            requested_schema=schema,
            sensitive=sensitive,
            asks_for_secrets=bool(sensitive),
        )
    if isinstance(params, types.ElicitRequestURLParams):
        seen = inspect_url(params.url)
        request = UrlRequest(
            mode="url",
            message=params.message,
            url=params.url,
            host=seen.host,
            scheme=seen.scheme,
            openable=seen.openable,
        )
        if seen.warning is not None:
            request["warning"] = seen.warning
        return request
    raise TypeError(
        f"expected ElicitRequestFormParams or ElicitRequestURLParams, got {type(params).__name__}"
    )


def question_key(
    message: str,
    requested_schema: dict[str, Any] | None,
    url: str | None,
    match: Literal["strict", "schema"],
) -> str:
    """A short stable key (``"q-<12 hex>"``) for a legacy elicitation question (legacy has no server keys).

    Give ``requested_schema`` for a form or ``url`` for a URL request (exactly one). With ``match="strict"``
    the key hashes the message and the schema (canonical JSON) or the URL, so a reworded question gets a new
    key; with ``match="schema"`` only the schema (or the URL) counts, so a message with volatile text ("9
    seats left") keeps its key. SHA-256 based: the same in every process.
    """
    if (requested_schema is None) == (url is None):
        raise ConfigError("question_key needs exactly one of requested_schema (form) or url (URL request)")
    if match not in ("strict", "schema"):
        raise ConfigError(f"match must be 'strict' or 'schema', got {match!r}")
    subject: list[Any] = ["form", requested_schema] if url is None else ["url", url]
    material: list[Any] = [match, *subject] if match == "schema" else [match, message, *subject]
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "q-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


# --------------------------------------------------------------------------------------------- fields

FORMAT_HINTS = {
    "date": "YYYY-MM-DD",
    "date-time": "RFC 3339, e.g. 2026-01-31T09:30:00Z",
    "email": "e.g. name@example.com",
    "uri": "an absolute URI, e.g. https://example.com/page",
}


def show_value(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def field_options(schema: object) -> list[tuple[Any, str | None]] | None:
    """The allowed values of an enum schema with their display titles, or ``None`` if it is not an enum."""
    if not isinstance(schema, Mapping):
        return None
    enum = schema.get("enum")
    if isinstance(enum, list):
        names = schema.get("enumNames")
        titles: list[Any] = (
            names if isinstance(names, list) and len(names) == len(enum) else [None] * len(enum)
        )
        return [(v, t if isinstance(t, str) else None) for v, t in zip(enum, titles, strict=True)]
    for keyword in ("oneOf", "anyOf"):
        alternatives = schema.get(keyword)
        if isinstance(alternatives, list) and alternatives:
            if not all(isinstance(a, Mapping) and "const" in a for a in alternatives):
                return None
            return [
                (a["const"], a.get("title") if isinstance(a.get("title"), str) else None)
                for a in alternatives
            ]
    return None


def _format_options(options: list[tuple[Any, str | None]]) -> str:
    shown = [show_value(v) if t is None or t == v else f"{show_value(v)} ({t})" for v, t in options[:12]]
    if len(options) > 12:
        shown.append(f"... ({len(options) - 12} more)")
    return ", ".join(shown)


def _range(prop: Mapping[str, Any], low: str, high: str, unit: str = "") -> str:
    lo, hi = prop.get(low), prop.get(high)
    if lo is not None and hi is not None:
        return f" of {lo} to {hi}{unit}" if unit else f" between {lo} and {hi}"
    if lo is not None:
        return f" of at least {lo}{unit}"
    if hi is not None:
        return f" of at most {hi}{unit}"
    return ""


def describe_field(prop: object) -> str:
    """What a field accepts, in words: ``an integer between 1 and 9``, ``format date, YYYY-MM-DD``."""
    if not isinstance(prop, Mapping):
        return "any value"
    kind = prop.get("type")
    if kind == "array":
        return _describe_list(prop)
    options = field_options(prop)
    if options is not None:
        return f"one of {_format_options(options)}"
    if kind == "string":
        return _describe_string(prop)
    if kind in ("integer", "number"):
        return _describe_number(kind, prop)
    if kind == "boolean":
        return "true or false"
    if isinstance(kind, list):
        return "a value of type " + " or ".join(str(k) for k in kind)
    return "a value matching the field's schema"


def _describe_list(prop: Mapping[str, Any]) -> str:
    item_options = field_options(prop.get("items"))
    text = f"a list of options from {_format_options(item_options)}" if item_options else "a list"
    lo, hi = prop.get("minItems"), prop.get("maxItems")
    if lo is not None and hi is not None:
        return f"{text}, choosing {lo} to {hi}"
    if lo is not None or hi is not None:
        return f"{text}, choosing at {'least' if lo is not None else 'most'} {lo if lo is not None else hi}"
    return text


def _describe_string(prop: Mapping[str, Any]) -> str:
    fmt = prop.get("format")
    length = _range(prop, "minLength", "maxLength", " characters")
    if isinstance(fmt, str) and fmt in FORMAT_HINTS:
        return f"format {fmt}, {FORMAT_HINTS[fmt]}" + (f"; a string{length}" if length else "")
    if isinstance(fmt, str) and fmt != "password":
        return f"a string in format {fmt}" + (f"{length}" if length else "")
    return f"a string{length}"


def _describe_number(kind: str, prop: Mapping[str, Any]) -> str:
    text = "an integer" if kind == "integer" else "a number"
    bounds = _range(prop, "minimum", "maximum")
    if prop.get("exclusiveMinimum") is not None:
        bounds += f" greater than {prop['exclusiveMinimum']}"
    if prop.get("exclusiveMaximum") is not None:
        bounds += f" less than {prop['exclusiveMaximum']}"
    return text + bounds


# --------------------------------------------------------------------------------------------- answer schema


def _action_schema(
    action: str, title: str, description: str, content: dict[str, Any] | None
) -> dict[str, Any]:
    properties: dict[str, Any] = {"action": {"type": "string", "const": action}}
    if content is not None:
        properties["content"] = content
    return {
        "title": title,
        "description": description,
        "type": "object",
        "properties": properties,
        "required": ["action", "content"] if content is not None else ["action"],
        "additionalProperties": False,
    }


def answers_json_schema(requests: Mapping[str, ElicitationRequest]) -> dict[str, Any]:
    """The JSON Schema of an answer to ``requests`` (what clients see as the interrupt's ``response_schema``).

    An object with exactly one property per request key, each a ``oneOf`` of accept (with ``content`` = the
    form's ``requested_schema``, closed to extra fields; no content for a URL request), decline and cancel.
    """
    properties: dict[str, Any] = {}
    for key, request in requests.items():
        if request.get("mode") == "url":
            url_request = cast(UrlRequest, request)
            accept = _action_schema(
                "accept",
                "Accept",
                f"The user agrees to open {url_request.get('url')} (host {url_request.get('host')}).",
                None,
            )
            description = f"{url_request.get('message', '')}\n\nURL: {url_request.get('url')}"
        else:
            form = cast(FormRequest, request)
            content = copy.deepcopy(form.get("requested_schema")) or {}
            if isinstance(content, dict):
                content.pop("$schema", None)
                content.pop("$id", None)
                content["type"] = "object"
                content["additionalProperties"] = False
            accept = _action_schema("accept", "Accept", "The user filled in the form.", content)
            description = str(form.get("message", ""))
        properties[key] = {
            "title": key,
            "description": description,
            "oneOf": [
                accept,
                _action_schema("decline", "Decline", "The user said no.", None),
                _action_schema("cancel", "Cancel", "The user dismissed the question without choosing.", None),
            ],
        }
    return {
        "title": "ElicitationAnswers",
        "description": "One answer per request key: accept (a form's content), decline, or cancel.",
        "type": "object",
        "properties": properties,
        "required": list(requests),
        "additionalProperties": False,
    }
