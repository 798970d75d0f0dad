"""String edits from a UI are converted by the target schema only where one reading is possible."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_mcp.questions.coercion import coerce_to_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "notify": {"type": "boolean"},
        "date": {"type": "string", "format": "date"},
        "code": {"type": "string"},
        "maybe": {"type": ["integer", "null"]},
        "either": {"type": ["integer", "string"]},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "nested": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "level": {"enum": [1, 2, 3]},
        "union": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
        "anything": {},
    },
}


@pytest.mark.parametrize(
    ("field", "sent", "expected"),
    [
        ("count", "5", 5),
        ("count", " -3 ", -3),
        ("count", "5.0", "5.0"),
        ("count", "five", "five"),
        ("ratio", "2.5", 2.5),
        ("ratio", "1e3", 1000.0),
        ("ratio", "7", 7),
        ("ratio", "nan", "nan"),
        ("notify", "true", True),
        ("notify", "FALSE", False),
        ("notify", "yes", "yes"),
        ("date", "2026-12-24", "2026-12-24"),
        ("code", "007", "007"),
        ("maybe", "4", 4),
        ("either", "4", "4"),
        ("tags", "[1, 2]", [1, 2]),
        ("tags", ["1", "2"], [1, 2]),
        ("tags", "{}", "{}"),
        ("nested", '{"n": "3"}', {"n": 3}),
        ("nested", {"n": "3"}, {"n": 3}),
        ("level", "2", 2),
        ("level", "4", "4"),
        ("union", "true", True),
        ("union", "8", 8),
        ("anything", "5", "5"),
        ("unknown_field", "5", "5"),
        ("count", 5, 5),
    ],
)
def test_a_string_is_converted_only_when_the_schema_leaves_one_reading(
    field: str, sent: Any, expected: Any
) -> None:
    assert coerce_to_schema({field: sent}, SCHEMA) == {field: expected}


def test_the_input_is_not_changed_and_no_schema_means_no_change() -> None:
    sent = {"count": "5", "tags": ["1"]}
    out = coerce_to_schema(sent, SCHEMA)
    assert out == {"count": 5, "tags": [1]}
    assert sent == {"count": "5", "tags": ["1"]}
    assert coerce_to_schema(sent, None) is sent
