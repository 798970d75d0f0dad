"""What a decision is bound to: ``definition_hash`` (a tool's definition as listed) and ``args_digest``."""

from __future__ import annotations

from typing import Any

import mcp.types as types
import pytest

from langgraph_mcp.catalog import McpTool, args_digest, build_tool, definition_hash

BASE = types.Tool(
    name="delete_file",
    description="Delete a file.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
    annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True),
)


def built(tool: types.Tool, *, trusted: bool = True) -> McpTool:
    result = build_tool(
        "fs", tool, prefix=True, separator="_", invalid_names="skip", trusted=trusted, taken=set()
    )
    assert isinstance(result, McpTool)
    return result


def test_a_listed_tool_and_its_descriptor_hash_the_same() -> None:
    assert definition_hash(built(BASE)) == definition_hash(BASE)
    assert len(definition_hash(BASE)) == 64 and int(definition_hash(BASE), 16) >= 0


CHANGES: dict[str, dict[str, Any]] = {
    "name": {"name": "remove_file"},
    "description": {"description": "Delete a file and its backups."},
    "input_schema": {"input_schema": {"type": "object", "properties": {"path": {"type": "integer"}}}},
    "output_schema": {"output_schema": None},
    "annotations": {"annotations": types.ToolAnnotations(read_only_hint=True)},
    "annotations_dropped": {"annotations": None},
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_to_the_definition_changes_the_hash(change: str) -> None:
    changed = BASE.model_copy(update=CHANGES[change])
    assert definition_hash(changed) != definition_hash(BASE)
    assert definition_hash(built(changed)) != definition_hash(built(BASE))


def test_what_is_not_part_of_the_definition_leaves_the_hash_alone() -> None:
    """The published name, the title shown in UIs and the trust setting are the client's, not the server's."""
    other = build_tool(
        "fs", BASE, prefix=False, separator="_", invalid_names="skip", trusted=False, taken=set()
    )
    assert isinstance(other, McpTool) and other.published_name != built(BASE).published_name
    assert definition_hash(other) == definition_hash(BASE)
    assert definition_hash(BASE.model_copy(update={"meta": {"x": 1}})) == definition_hash(BASE)


def test_the_args_digest_is_canonical() -> None:
    assert args_digest({"a": 1, "b": [1, {"c": "é"}]}) == args_digest({"b": [1, {"c": "é"}], "a": 1})
    assert args_digest({"a": 1}) != args_digest({"a": 2})
    assert args_digest({"a": 1}) != args_digest({"a": "1"})
    assert args_digest(None) == args_digest({})


def test_an_untrusted_servers_hints_never_make_a_call_retry_safe() -> None:
    read_only = BASE.model_copy(update={"annotations": types.ToolAnnotations(read_only_hint=True)})
    assert built(read_only).retry_safe
    assert not built(read_only, trusted=False).retry_safe
