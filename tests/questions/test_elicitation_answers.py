"""Tests for ``langgraph_mcp.questions.answers``: request payloads, answer checks, and the resume schema."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any, TypedDict, cast

import jsonschema  # type: ignore[import-untyped]
import mcp.types as types
import pytest
from langgraph.errors import is_invalid_resume
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from pydantic import ValidationError

from langgraph_mcp.errors import AnswerError
from langgraph_mcp.payloads import ElicitationRequest, FormRequest, UrlRequest
from langgraph_mcp.questions import answers as answers_module
from langgraph_mcp.questions import formats
from langgraph_mcp.questions.answers import (
    answers_fit,
    answers_response_schema,
    to_elicit_result,
    validate_answers,
)
from langgraph_mcp.questions.elicitation import question_key, request_from_params
from langgraph_mcp.questions.inspection import sensitive_fields, url_host
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import HANG_GUARD

# ----------------------------------------------------------------------------------------- fixtures

TRIP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "format": "date", "title": "Date"},
        "when": {"type": "string", "format": "date-time"},
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "nights": {"type": "integer", "minimum": 1, "maximum": 14, "default": 1},
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "cabin": {"type": "string", "enum": ["economy", "business"]},
        "seat": {
            "type": "string",
            "oneOf": [{"const": "w", "title": "Window"}, {"const": "a", "title": "Aisle"}],
        },
        "tags": {"type": "array", "items": {"type": "string", "enum": ["quiet", "view"]}, "default": []},
        "ok": {"type": "boolean"},
        "price": {"type": "number", "minimum": 0},
    },
    "required": ["date", "cabin"],
}

FORM: FormRequest = {
    "mode": "form",
    "message": "Plan the trip",
    "requested_schema": TRIP_SCHEMA,
    "sensitive": [],
}
URL: UrlRequest = {
    "mode": "url",
    "message": "Pay for the booking",
    "url": "https://pay.example.com/checkout/42",
    "host": "pay.example.com",
}
REQUESTS: dict[str, ElicitationRequest] = {"ask_date": FORM, "pay": URL}


def good(**content: Any) -> dict[str, Any]:
    """A valid resume value, with ``content`` overriding/adding form fields (``None`` removes one)."""
    body: dict[str, Any] = {"date": "2026-09-14", "cabin": "economy"}
    for name, value in content.items():
        if value is None:
            body.pop(name, None)
        else:
            body[name] = value
    return {"ask_date": {"action": "accept", "content": body}, "pay": {"action": "accept"}}


def answer_error(value: object, requests: dict[str, ElicitationRequest] | None = None) -> AnswerError:
    with pytest.raises(AnswerError) as info:
        validate_answers(REQUESTS if requests is None else requests, value)
    return info.value


# ----------------------------------------------------------------------------------------- valid answers


def test_valid_answers_are_normalized_with_defaults() -> None:
    result = validate_answers(REQUESTS, good())
    assert result == {
        "ask_date": {
            "action": "accept",
            "content": {"date": "2026-09-14", "cabin": "economy", "nights": 1, "tags": []},
        },
        "pay": {"action": "accept"},
    }
    assert list(result) == ["ask_date", "pay"]


def test_every_field_kind_accepts_a_good_value() -> None:
    content = {
        "date": "2026-02-28",
        "when": "2026-02-28T09:30:00+01:00",
        "email": "ana.lopez+trips@mail.example.org",
        "site": "https://example.com/a?b=c#d",
        "nights": 14,
        "name": "Ana",
        "cabin": "business",
        "seat": "w",
        "tags": ["quiet", "view"],
        "ok": False,
        "price": 12.5,
    }
    result = validate_answers(
        REQUESTS, {"ask_date": {"action": "accept", "content": content}, "pay": URL_ACCEPT}
    )
    assert result["ask_date"] == {"action": "accept", "content": content}


URL_ACCEPT = {"action": "accept"}


def test_explicit_value_wins_over_default() -> None:
    result = validate_answers(REQUESTS, good(nights=3, tags=["view"]))
    assert result["ask_date"] == {
        "action": "accept",
        "content": {"date": "2026-09-14", "cabin": "economy", "nights": 3, "tags": ["view"]},
    }


def test_decline_and_cancel_and_content_none() -> None:
    result = validate_answers(
        REQUESTS, {"ask_date": {"action": "decline", "content": None}, "pay": {"action": "cancel"}}
    )
    assert result == {"ask_date": {"action": "decline"}, "pay": {"action": "cancel"}}
    result = validate_answers(
        REQUESTS, {"ask_date": {"action": "cancel"}, "pay": {"action": "accept", "content": None}}
    )
    assert result == {"ask_date": {"action": "cancel"}, "pay": {"action": "accept"}}


def test_input_is_never_mutated_and_result_is_a_copy() -> None:
    value = good()
    before = copy.deepcopy(value)
    schema_before = copy.deepcopy(TRIP_SCHEMA)
    result = validate_answers(REQUESTS, value)
    assert value == before
    assert schema_before == TRIP_SCHEMA
    result["ask_date"]["content"]["tags"].append("view")  # type: ignore[typeddict-item]
    assert TRIP_SCHEMA["properties"]["tags"]["default"] == []
    assert value == before


def test_no_requests_need_an_empty_dict() -> None:
    assert validate_answers({}, {}) == {}
    assert answer_error({"x": {"action": "cancel"}}, {}).key == "x"


# ----------------------------------------------------------------------------------------- content errors


@pytest.mark.parametrize(
    ("override", "field", "message"),
    [
        (
            {"date": None},
            "date",
            "answer for 'ask_date': field 'date' is required (expected format date, YYYY-MM-DD)",
        ),
        (
            {"nights": "3"},
            "nights",
            "answer for 'ask_date': field 'nights': '3' is not an integer "
            "(expected an integer between 1 and 14)",
        ),
        (
            {"ok": "yes"},
            "ok",
            "answer for 'ask_date': field 'ok': 'yes' is not true or false (expected true or false)",
        ),
        (
            {"nights": True},
            "nights",
            "answer for 'ask_date': field 'nights': True is not an integer "
            "(expected an integer between 1 and 14)",
        ),
        (
            {"cabin": "first"},
            "cabin",
            "answer for 'ask_date': field 'cabin': 'first' is not one of the allowed values "
            "(expected one of 'economy', 'business')",
        ),
        (
            {"seat": "middle"},
            "seat",
            "answer for 'ask_date': field 'seat': 'middle' is not one of the allowed values "
            "(expected one of 'w' (Window), 'a' (Aisle))",
        ),
        (
            {"tags": ["quiet", "pool"]},
            "tags",
            "answer for 'ask_date': field 'tags': item 1: 'pool' is not one of the allowed values "
            "(expected a list of options from 'quiet', 'view')",
        ),
        (
            {"tags": "quiet"},
            "tags",
            "answer for 'ask_date': field 'tags': 'quiet' is not a list "
            "(expected a list of options from 'quiet', 'view')",
        ),
        (
            {"nights": 0},
            "nights",
            "answer for 'ask_date': field 'nights': 0 is less than the minimum 1 "
            "(expected an integer between 1 and 14)",
        ),
        (
            {"nights": 15},
            "nights",
            "answer for 'ask_date': field 'nights': 15 is more than the maximum 14 "
            "(expected an integer between 1 and 14)",
        ),
        (
            {"price": -0.5},
            "price",
            "answer for 'ask_date': field 'price': -0.5 is less than the minimum 0 "
            "(expected a number of at least 0)",
        ),
        (
            {"name": "A"},
            "name",
            "answer for 'ask_date': field 'name': 'A' is too short (1 character, minimum 2) "
            "(expected a string of 2 to 5 characters)",
        ),
        (
            {"name": "Alexandra"},
            "name",
            "answer for 'ask_date': field 'name': 'Alexandra' is too long (9 characters, maximum 5) "
            "(expected a string of 2 to 5 characters)",
        ),
        (
            {"date": "2026-13-45"},
            "date",
            "answer for 'ask_date': field 'date': '2026-13-45' is not a valid date "
            "(expected format date, YYYY-MM-DD)",
        ),
        (
            {"date": "2026-02-30"},
            "date",
            "answer for 'ask_date': field 'date': '2026-02-30' is not a valid date "
            "(expected format date, YYYY-MM-DD)",
        ),
        (
            {"date": "14/09/2026"},
            "date",
            "answer for 'ask_date': field 'date': '14/09/2026' is not a valid date "
            "(expected format date, YYYY-MM-DD)",
        ),
        (
            {"when": "2026-09-14"},
            "when",
            "answer for 'ask_date': field 'when': '2026-09-14' is not a valid date-time "
            "(expected format date-time, RFC 3339, e.g. 2026-01-31T09:30:00Z)",
        ),
        (
            {"when": "2026-09-14T25:00:00Z"},
            "when",
            "answer for 'ask_date': field 'when': '2026-09-14T25:00:00Z' is not a valid date-time "
            "(expected format date-time, RFC 3339, e.g. 2026-01-31T09:30:00Z)",
        ),
        (
            {"email": "ana@"},
            "email",
            "answer for 'ask_date': field 'email': 'ana@' is not a valid email (expected format email, e.g. "
            "name@example.com)",
        ),
        (
            {"email": "ana lopez@example.com"},
            "email",
            "answer for 'ask_date': field 'email': 'ana lopez@example.com' is not a valid email "
            "(expected format email, e.g. name@example.com)",
        ),
        (
            {"site": "example.com/page"},
            "site",
            "answer for 'ask_date': field 'site': 'example.com/page' is not a valid uri "
            "(expected format uri, an absolute URI, e.g. https://example.com/page)",
        ),
        (
            {"site": "https://exa mple.com"},
            "site",
            "answer for 'ask_date': field 'site': 'https://exa mple.com' is not a valid uri "
            "(expected format uri, an absolute URI, e.g. https://example.com/page)",
        ),
        (
            {"zzz": 1},
            "zzz",
            "answer for 'ask_date': unknown field 'zzz' (the form's fields: 'date', 'when', 'email', 'site', "
            "'nights', 'name', 'cabin', 'seat', 'tags', 'ok', 'price')",
        ),
    ],
)
def test_content_errors_name_key_field_and_expectation(
    override: dict[str, Any], field: str, message: str
) -> None:
    error = answer_error(good(**override))
    assert str(error) == message
    assert error.key == "ask_date"
    assert error.field == field
    assert isinstance(error, ValueError)
    assert answers_fit(REQUESTS, good(**override)) is False


def test_all_content_problems_are_listed_in_schema_order() -> None:
    error = answer_error(good(date=None, cabin=1, nights="3", extra="x"))
    assert str(error) == (
        "answer for 'ask_date': field 'date' is required (expected format date, YYYY-MM-DD); "
        "field 'nights': '3' is not an integer (expected an integer between 1 and 14); "
        "field 'cabin': 1 is not a string (expected one of 'economy', 'business'); "
        "unknown field 'extra' (the form's fields: 'date', 'when', 'email', 'site', 'nights', 'name', "
        "'cabin', "
        "'seat', 'tags', 'ok', 'price')"
    )
    assert error.field == "date"


def test_accept_form_needs_object_content() -> None:
    error = answer_error({"ask_date": {"action": "accept"}, "pay": URL_ACCEPT})
    assert str(error).startswith("answer for 'ask_date': accepting a form needs 'content'")
    assert error.key == "ask_date" and error.field is None
    error = answer_error({"ask_date": {"action": "accept", "content": ["2026-09-14"]}, "pay": URL_ACCEPT})
    assert str(error) == "answer for 'ask_date': 'content' must be an object with the form's fields, got list"


def test_nested_values_are_rejected_even_without_a_declared_type() -> None:
    requests: dict[str, ElicitationRequest] = {
        "k": {
            "mode": "form",
            "message": "m",
            "requested_schema": {"type": "object", "properties": {"x": {"title": "X"}}},
            "sensitive": [],
        }
    }
    error = answer_error({"k": {"action": "accept", "content": {"x": {"a": 1}}}}, requests)
    assert str(error) == (
        "answer for 'k': field 'x': {'a': 1} is not a form value "
        "(expected a string, a number, true/false or a list of strings)"
    )
    assert error.field == "x"
    assert validate_answers(requests, {"k": {"action": "accept", "content": {"x": ["a", "b"]}}}) == {
        "k": {"action": "accept", "content": {"x": ["a", "b"]}}
    }


def test_titled_multi_select_and_item_counts() -> None:
    schema = {
        "type": "object",
        "properties": {
            "extras": {
                "type": "array",
                "items": {
                    "anyOf": [{"const": "b", "title": "Breakfast"}, {"const": "p", "title": "Parking"}]
                },
                "minItems": 1,
                "maxItems": 1,
            },
            "legacy": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        },
        "required": ["extras"],
    }
    requests: dict[str, ElicitationRequest] = {
        "k": {"mode": "form", "message": "m", "requested_schema": schema, "sensitive": []}
    }
    assert validate_answers(requests, {"k": {"action": "accept", "content": {"extras": ["p"]}}}) == {
        "k": {"action": "accept", "content": {"extras": ["p"]}}
    }
    error = answer_error({"k": {"action": "accept", "content": {"extras": ["x"]}}}, requests)
    assert str(error) == (
        "answer for 'k': field 'extras': item 0: 'x' is not one of the allowed values "
        "(expected a list of options from 'b' (Breakfast), 'p' (Parking), choosing 1 to 1)"
    )
    error = answer_error({"k": {"action": "accept", "content": {"extras": []}}}, requests)
    assert str(error) == (
        "answer for 'k': field 'extras': 0 selected, at least 1 option allowed "
        "(expected a list of options from 'b' (Breakfast), 'p' (Parking), choosing 1 to 1)"
    )
    error = answer_error({"k": {"action": "accept", "content": {"extras": ["b"], "legacy": "l"}}}, requests)
    assert str(error) == (
        "answer for 'k': field 'legacy': 'l' is not one of the allowed values "
        "(expected one of 's' (Small), 'm' (Medium))"
    )


def test_invalid_default_is_reported_as_the_schemas_default() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "default": 1}}}
    requests: dict[str, ElicitationRequest] = {
        "k": {"mode": "form", "message": "m", "requested_schema": schema, "sensitive": []}
    }
    error = answer_error({"k": {"action": "accept", "content": {}}}, requests)
    assert str(error) == (
        "answer for 'k': field 'n' (the schema's default): 1 is less than the minimum 5 "
        "(expected an integer of at least 5)"
    )


def test_required_field_with_default_is_still_required() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}, "required": ["n"]}
    requests: dict[str, ElicitationRequest] = {
        "k": {"mode": "form", "message": "m", "requested_schema": schema, "sensitive": []}
    }
    assert answer_error({"k": {"action": "accept", "content": {}}}, requests).field == "n"


def test_invalid_server_schema_can_only_be_declined() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": "five"}}}
    requests: dict[str, ElicitationRequest] = {
        "k": {"mode": "form", "message": "m", "requested_schema": schema, "sensitive": []}
    }
    error = answer_error({"k": {"action": "accept", "content": {"n": 1}}}, requests)
    assert str(error).startswith("answer for 'k': the server's requested_schema is not a valid JSON schema (")
    assert str(error).endswith("this form can't be accepted, answer 'decline' or 'cancel'")
    assert validate_answers(requests, {"k": {"action": "decline"}}) == {"k": {"action": "decline"}}


# ----------------------------------------------------------------------------------------- shape errors


def test_content_on_url_accept_is_rejected() -> None:
    error = answer_error(
        {"ask_date": {"action": "cancel"}, "pay": {"action": "accept", "content": {"ok": True}}}
    )
    assert str(error) == (
        "answer for 'pay': a URL request only asks for consent; an accept answer must not carry content "
        "(send {'action': 'accept'})"
    )
    assert error.key == "pay"


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_content_on_decline_or_cancel_is_rejected(action: str) -> None:
    error = answer_error(
        {"ask_date": {"action": action, "content": {"date": "2026-09-14"}}, "pay": URL_ACCEPT}
    )
    assert str(error) == (
        f"answer for 'ask_date': a {action!r} answer carries no content (send {{'action': {action!r}}})"
    )
    assert error.key == "ask_date"


def test_missing_key() -> None:
    error = answer_error({"ask_date": {"action": "cancel"}})
    assert str(error) == "no answer for 'pay' (answer exactly the request keys: 'ask_date', 'pay')"
    assert error.key == "pay"


def test_extra_key() -> None:
    error = answer_error({"ask_date": {"action": "cancel"}, "pay": URL_ACCEPT, "bogus": {"action": "cancel"}})
    assert str(error) == "answer for unknown key 'bogus' (answer exactly the request keys: 'ask_date', 'pay')"
    assert error.key == "bogus"


def test_missing_and_extra_key_together() -> None:
    error = answer_error({"ask-date": {"action": "cancel"}, "pay": URL_ACCEPT})
    assert str(error) == (
        "no answer for 'ask_date'; answer for unknown key 'ask-date' "
        "(answer exactly the request keys: 'ask_date', 'pay')"
    )
    assert error.key == "ask_date"


@pytest.mark.parametrize("action", ["maybe", None, 1, "Accept"])
def test_unknown_action(action: object) -> None:
    error = answer_error({"ask_date": {"action": action}, "pay": URL_ACCEPT})
    assert str(error) == (
        f"answer for 'ask_date': action {action!r} is not one of 'accept', 'decline', 'cancel'"
    )
    assert error.key == "ask_date"


def test_missing_action_and_unknown_entries() -> None:
    error = answer_error({"ask_date": {"content": {}}, "pay": URL_ACCEPT})
    assert str(error).startswith("answer for 'ask_date' has no 'action' (expected {\"action\": \"accept\"")
    error = answer_error({"ask_date": {"action": "decline", "reason": "no"}, "pay": URL_ACCEPT})
    assert str(error).startswith("answer for 'ask_date' has unknown entry 'reason' (expected ")
    assert error.key == "ask_date"


def test_answer_not_an_object() -> None:
    error = answer_error({"ask_date": "accept", "pay": URL_ACCEPT})
    assert str(error).startswith('answer for \'ask_date\' must be an object like {"action": "accept", ')
    assert str(error).endswith("got str 'accept'")


@pytest.mark.parametrize("value", [None, [], "accept", 3, [("ask_date", {"action": "cancel"})]])
def test_non_dict_answers(value: object) -> None:
    error = answer_error(value)
    assert str(error).startswith("answers must be an object mapping each request key to an answer")
    assert f"got {type(value).__name__}" in str(error)
    assert error.key is None and error.field is None
    assert answers_fit(REQUESTS, value) is False


def test_answers_fit() -> None:
    assert answers_fit(REQUESTS, good()) is True
    assert answers_fit(REQUESTS, good(nights=99)) is False


# ----------------------------------------------------------------------------------------- formats


def test_format_checkers() -> None:
    checker = formats.FORMAT_CHECKER
    cases = {
        "date": (["2026-01-05", "2024-02-29"], ["2026-13-45", "2025-02-29", "2026-1-05", "20260105"]),
        "date-time": (
            ["2026-01-05T10:00:00Z", "2026-01-05T10:00:00.123+05:30", "2026-01-05t10:00:00z"],
            ["2026-01-05", "2026-01-05T10:00:00", "2026-01-05T24:00:00Z", "2026-02-30T10:00:00Z"],
        ),
        "email": (
            ["a@b", "ana.lopez+x@mail.example.org", "o'neil@example.ie"],
            ["a@", "@b", "a@b@c", "a b@c.d", "a@-b.com", "a@b..c", "plain"],
        ),
        "uri": (
            ["https://example.com/a?b=c#d", "mailto:a@b.c", "urn:isbn:0451450523"],
            ["example.com", "/relative/path", "https://exa mple.com", "http://x/%zz", ""],
        ),
    }
    for fmt, (valid, invalid) in cases.items():
        for value in valid:
            assert checker.conforms(value, fmt), (fmt, value)
        for value in invalid:
            assert not checker.conforms(value, fmt), (fmt, value)


def test_fallback_checkers_for_missing_extras() -> None:
    """The built-in date-time / uri checkers used when rfc3339-validator / rfc3986-validator are absent."""
    is_date_time, is_uri = formats.is_date_time, formats.is_uri
    for value in ["2026-01-05T10:00:00Z", "2026-01-05T10:00:00.5-03:00", "2016-12-31T23:59:60Z"]:
        assert is_date_time(value), value
    for value in ["2026-01-05", "2026-02-30T10:00:00Z", "2026-01-05T10:60:00Z", "2026-01-05T10:00:00+24:00"]:
        assert not is_date_time(value), value
    for value in ["https://example.com/a?b=c#d", "mailto:a@b.c", "urn:x:y"]:
        assert is_uri(value), value
    for value in ["example.com", "https://exa mple.com", "http://x/%zz", "1http://x", ""]:
        assert not is_uri(value), value
    assert is_date_time(5) and is_uri(5)  # non-strings are the type check's job


# ----------------------------------------------------------------------------------------- sensitive / host


def test_sensitive_fields() -> None:
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string"},
            "secret_value": {"type": "string", "format": "password"},
            "password": {"type": "string"},
            "api_key": {"type": "string"},
            "apiKey": {"type": "string"},
            "token": {"type": "string"},
            "card": {"type": "string", "title": "Credit card number"},
            "ssn": {"type": "string"},
            "pin": {"type": "integer"},
            "x1": {"type": "string", "title": "Your PIN"},
            "AWSAccessKey": {"type": "string"},
            "hidden": {"type": "string", "writeOnly": True},
            "description": {"type": "string", "title": "Description"},
            "pinned": {"type": "boolean", "title": "Pinned?"},
            "tokenizer": {"type": "string"},
            "max_tokens": {"type": "integer"},
            "token_count": {"type": "integer"},
            "password_hint": {"type": "string"},
            "spinner": {"type": "string"},
            "secretary": {"type": "string"},
            "keyboard": {"type": "string"},
            "plain_format": {"type": "string", "format": "email"},
        },
    }
    assert sensitive_fields(schema) == [
        "secret_value",
        "password",
        "api_key",
        "apiKey",
        "token",
        "card",
        "ssn",
        "pin",
        "x1",
        "AWSAccessKey",
        "hidden",
    ]
    assert sensitive_fields({}) == []
    assert sensitive_fields({"properties": []}) == []


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://pay.example.com/checkout/42", "pay.example.com"),
        ("https://PAY.Example.COM:8443/x", "pay.example.com:8443"),
        ("https://bank.example@evil.example/login", "evil.example"),
        ("http://[::1]:8080/", "[::1]:8080"),
        ("https://bücher.example/", "xn--bcher-kva.example"),
        ("mailto:someone@example.com", ""),
        ("not a url", ""),
        ("http://x:99999/", ""),
    ],
)
def test_url_host(url: str, host: str) -> None:
    assert url_host(url) == host


# ----------------------------------------------------------------------------------------- MCP conversions


def test_request_from_params_form() -> None:
    schema = {
        "type": "object",
        "properties": {"user": {"type": "string"}, "pwd": {"type": "string", "title": "Password"}},
        "required": ["user"],
    }
    params = types.ElicitRequestFormParams(message="Log in", requested_schema=schema)
    request = request_from_params(params)
    assert request == {  # issue 9 item 8 adds asks_for_secrets
        "mode": "form",
        "message": "Log in",
        "requested_schema": schema,
        "sensitive": ["pwd"],
        "asks_for_secrets": True,
    }
    assert request["requested_schema"] is not params.requested_schema  # type: ignore[typeddict-item]


def test_request_from_params_url() -> None:
    params = types.ElicitRequestURLParams(
        message="Pay", url="https://pay.example.com/c/1", elicitation_id="e1"
    )
    assert request_from_params(params) == {
        "mode": "url",
        "message": "Pay",
        "url": "https://pay.example.com/c/1",
        "host": "pay.example.com",
        "scheme": "https",  # issue 9 item 7 adds scheme and openable
        "openable": True,
    }
    with pytest.raises(TypeError):
        request_from_params({"mode": "url"})  # type: ignore[arg-type]


def test_to_elicit_result() -> None:
    normalized = validate_answers(REQUESTS, good())
    result = to_elicit_result(normalized["ask_date"])
    assert isinstance(result, types.ElicitResult)
    assert result.action == "accept"
    assert result.content == {"date": "2026-09-14", "cabin": "economy", "nights": 1, "tags": []}
    assert to_elicit_result(normalized["pay"]) == types.ElicitResult(action="accept")
    assert to_elicit_result({"action": "decline"}) == types.ElicitResult(action="decline")
    assert to_elicit_result({"action": "cancel"}).content is None
    with pytest.raises(AnswerError):
        to_elicit_result(cast(Any, {"action": "decline", "content": {"a": 1}}))
    with pytest.raises(AnswerError):
        to_elicit_result(cast(Any, {"action": "maybe"}))


def test_question_key() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}
    reordered = {"properties": {"b": {"type": "integer"}, "a": {"type": "string"}}, "type": "object"}
    strict = question_key("9 seats left", schema, None, "strict")
    assert strict.startswith("q-") and len(strict) == 14
    assert all(c in "0123456789abcdef" for c in strict[2:])
    assert question_key("9 seats left", reordered, None, "strict") == strict
    assert question_key("8 seats left", schema, None, "strict") != strict
    assert question_key("9 seats left", schema, None, "schema") == question_key(
        "8 left", schema, None, "schema"
    )
    assert question_key("9 seats left", schema, None, "schema") != strict
    url_key = question_key("Pay", None, "https://pay.example.com/1", "strict")
    assert url_key != question_key("Pay now", None, "https://pay.example.com/1", "strict")
    assert question_key("Pay", None, "https://pay.example.com/1", "schema") == question_key(
        "Pay now", None, "https://pay.example.com/1", "schema"
    )
    assert question_key("Pay", None, "https://pay.example.com/2", "schema") != question_key(
        "Pay", None, "https://pay.example.com/1", "schema"
    )
    with pytest.raises(ValueError):
        question_key("m", None, None, "strict")
    with pytest.raises(ValueError):
        question_key("m", schema, "https://x", "strict")


# ----------------------------------------------------------------------------------------- response schema


def test_response_schema_model_validates_and_exposes_answers() -> None:
    model = answers_response_schema(REQUESTS)
    instance = model.model_validate(good())
    assert instance.answers() == validate_answers(REQUESTS, good())
    assert instance.root == instance.answers()
    with pytest.raises(ValidationError) as info:
        model.model_validate(good(date="2026-13-45"))
    text = str(info.value)
    assert "answer for 'ask_date': field 'date': '2026-13-45' is not a valid date" in text
    error = info.value.errors()[0]["ctx"]["error"]
    assert isinstance(error, AnswerError)
    assert (error.key, error.field) == ("ask_date", "date")


def test_response_schema_json_schema_for_ui() -> None:
    model = answers_response_schema(REQUESTS)
    schema = model.model_json_schema()
    assert schema["type"] == "object"
    assert schema["required"] == ["ask_date", "pay"]
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == ["ask_date", "pay"]
    form = schema["properties"]["ask_date"]
    assert form["description"] == "Plan the trip"
    assert [alt["title"] for alt in form["oneOf"]] == ["Accept", "Decline", "Cancel"]
    accept = form["oneOf"][0]
    assert accept["properties"]["action"] == {"const": "accept", "type": "string"}
    assert accept["required"] == ["action", "content"]
    assert accept["properties"]["content"] == {**TRIP_SCHEMA, "additionalProperties": False}
    decline = form["oneOf"][1]
    assert decline["properties"] == {"action": {"const": "decline", "type": "string"}}
    assert decline["additionalProperties"] is False
    url_accept = schema["properties"]["pay"]["oneOf"][0]
    assert url_accept["properties"] == {"action": {"const": "accept", "type": "string"}}
    assert url_accept["required"] == ["action"]
    assert "https://pay.example.com/checkout/42" in schema["properties"]["pay"]["description"]
    # What clients see through interrupt() (TypeAdapter) is the same schema, and it is a usable JSON schema.
    from pydantic import TypeAdapter

    assert TypeAdapter(model).json_schema() == schema
    jsonschema.Draft202012Validator.check_schema(schema)
    ui_validator = jsonschema.Draft202012Validator(schema)
    assert ui_validator.is_valid(good())
    assert ui_validator.is_valid({"ask_date": {"action": "decline"}, "pay": {"action": "cancel"}})
    assert not ui_validator.is_valid(good(zzz=1))
    assert not ui_validator.is_valid(
        {"ask_date": {"action": "decline"}, "pay": {"action": "accept", "content": {}}}
    )


def test_response_schema_is_rebuilt_from_requests_alone() -> None:
    first = answers_response_schema(REQUESTS)
    answers_module._answers_model.cache_clear()
    rebuilt = answers_response_schema(json.loads(json.dumps(REQUESTS)))
    assert rebuilt is not first
    assert rebuilt.model_json_schema() == first.model_json_schema()
    assert rebuilt.model_validate(good()).answers() == first.model_validate(good()).answers()
    # Cached per value: the same requests give the same class within a process.
    assert answers_response_schema(copy.deepcopy(REQUESTS)) is rebuilt


def test_keys_and_schema_are_identical_in_a_new_process() -> None:
    code = (
        "import json, sys\n"
        "from langgraph_mcp.questions.answers import answers_response_schema\n"
        "from langgraph_mcp.questions.elicitation import question_key\n"
        "requests = json.loads(sys.argv[1])\n"
        "schema = requests['ask_date']['requested_schema']\n"
        "print(json.dumps({'key': question_key('Plan the trip', schema, None, 'strict'),\n"
        "                  'schema': answers_response_schema(requests).model_json_schema()}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(REQUESTS)],
        capture_output=True,
        text=True,
        check=True,
        timeout=HANG_GUARD,
    )
    other = json.loads(out.stdout)
    assert other["key"] == question_key("Plan the trip", TRIP_SCHEMA, None, "strict")
    assert other["schema"] == answers_response_schema(REQUESTS).model_json_schema()


# ----------------------------------------------------------------------------------------- LangGraph


class State(TypedDict, total=False):
    answers: dict[str, Any]


PAYLOAD = {"type": "mcp_elicitation", "tool_call_id": "call-1", "requests": REQUESTS}
BAD = good(date="2026-13-45")
FIXED = good()
EXPECTED = {
    "ask_date": {
        "action": "accept",
        "content": {"date": "2026-09-14", "cabin": "economy", "nights": 1, "tags": []},
    },
    "pay": {"action": "accept"},
}


def _sync_graph() -> Any:
    def ask(state: State) -> State:
        answered = interrupt(PAYLOAD, response_schema=answers_response_schema(REQUESTS))
        return {"answers": answered.answers()}

    graph = StateGraph(State)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=StrictSaver())


def _async_graph() -> Any:
    async def ask(state: State) -> State:
        answered = interrupt(PAYLOAD, response_schema=answers_response_schema(REQUESTS))
        return {"answers": answered.answers()}

    graph = StateGraph(State)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=StrictSaver())


def test_graph_rejects_bad_answer_then_accepts_fix_on_same_interrupt() -> None:
    app = _sync_graph()
    config = {"configurable": {"thread_id": "sync"}}
    first = app.invoke({}, config)
    (pending,) = first["__interrupt__"]
    assert pending.value == PAYLOAD
    assert pending.response_schema == answers_response_schema(REQUESTS).model_json_schema()

    with pytest.raises(ValidationError) as info:
        app.invoke(Command(resume={pending.id: BAD}), config)
    assert is_invalid_resume(info.value)
    assert "answer for 'ask_date': field 'date': '2026-13-45' is not a valid date" in str(info.value)

    (still,) = app.get_state(config).interrupts
    assert still.id == pending.id

    with pytest.raises(ValidationError, match="no answer for 'pay'"):
        app.invoke(Command(resume={pending.id: {"ask_date": {"action": "cancel"}}}), config)

    result = app.invoke(Command(resume={pending.id: FIXED}), config)
    assert result == {"answers": EXPECTED}
    assert app.get_state(config).interrupts == ()


@pytest.mark.anyio
async def test_graph_async_rejects_bad_answer_then_accepts_fix() -> None:
    app = _async_graph()
    config = {"configurable": {"thread_id": "async"}}
    first = await app.ainvoke({}, config)
    (pending,) = first["__interrupt__"]

    with pytest.raises(ValidationError) as info:
        await app.ainvoke(Command(resume={pending.id: BAD}), config)
    assert "answer for 'ask_date': field 'date'" in str(info.value)
    (still,) = (await app.aget_state(config)).interrupts
    assert still.id == pending.id

    result = await app.ainvoke(Command(resume={pending.id: FIXED}), config)
    assert result == {"answers": EXPECTED}


def test_secret_values_never_appear_in_errors() -> None:
    schema = {
        "type": "object",
        "properties": {
            "user": {"type": "string", "minLength": 3},
            "password": {"type": "string", "minLength": 12},
            "code": {"type": "string", "maxLength": 4},
        },
        "required": ["user", "password"],
    }
    requests: dict[str, ElicitationRequest] = {
        "login": {"mode": "form", "message": "Log in", "requested_schema": schema, "sensitive": ["code"]}
    }
    bad = {"login": {"action": "accept", "content": {"user": "al", "password": "hunter2", "code": "987654"}}}
    error = answer_error(bad, requests)
    assert str(error) == (
        "answer for 'login': field 'user': 'al' is too short (2 characters, minimum 3) "
        "(expected a string of at least 3 characters); "
        "field 'password': the value is too short (7 characters, minimum 12) "
        "(expected a string of at least 12 characters); "
        "field 'code': the value is too long (6 characters, maximum 4) "
        "(expected a string of at most 4 characters)"
    )
    with pytest.raises(ValidationError) as info:
        answers_response_schema(requests).model_validate(bad)
    assert "hunter2" not in str(info.value)
    assert "987654" not in str(info.value)
    assert "field 'password': the value is too short" in str(info.value)


def test_model_accepts_an_instance_of_a_rebuilt_class() -> None:
    instance = answers_response_schema(REQUESTS).model_validate(good())
    answers_module._answers_model.cache_clear()
    rebuilt = answers_response_schema(REQUESTS)
    assert rebuilt.model_validate(instance).answers() == instance.answers()
