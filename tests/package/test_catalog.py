"""The tool catalog: declared vs effective hints, published names, collisions, and inputSchema guards.

The end-to-end tests list real servers in-process: two copies of the bundled demo server, and low-level
servers from ``tests/support/servers/bad_tools.py`` whose tools no model provider would accept.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
import pytest

from langgraph_mcp.catalog import (
    MAX_SCHEMA_BYTES,
    MAX_SCHEMA_DEPTH,
    PUBLISHED_NAME_PATTERN,
    McpTool,
    SkippedTool,
    build_tool,
    check_collisions,
    sanitize_name,
    schema_problem,
)
from langgraph_mcp.errors import ToolNameCollisionError
from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import ERAS, OpenServers
from tests.support.servers.bad_tools import (
    BAD_NAME_TOOLS,
    BAD_SCHEMA_TOOLS,
    DEEP_LEVELS,
    GOOD_TOOLS,
    NON_OBJECT_TOOL,
    build_bad_server,
    nested_schema,
)

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def make_tool(
    name: str = "t", annotations: types.ToolAnnotations | None = None, **kwargs: Any
) -> McpTool | SkippedTool:
    tool = types.Tool(name=name, input_schema=kwargs.pop("input_schema", OBJECT), annotations=annotations)
    options: dict[str, Any] = {
        "prefix": True,
        "separator": "_",
        "invalid_names": "skip",
        "trusted": True,
        "taken": set(),
    }
    return build_tool("srv", tool, **{**options, **kwargs})


def built(name: str = "t", annotations: types.ToolAnnotations | None = None, **kwargs: Any) -> McpTool:
    tool = make_tool(name, annotations, **kwargs)
    assert isinstance(tool, McpTool), tool
    return tool


def in_process(server: Any, mode: str = "auto", **options: Any) -> dict[str, Any]:
    return {"transport": "in_process", "server": server, "mode": mode, **options}


# --------------------------------------------------------------------------------------------- hints


def test_tool_without_annotations_gets_spec_defaults() -> None:
    tool = built(annotations=None)

    assert tool.annotations is None
    assert tool.declared_hints == {}
    assert tool.effective_hints == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }
    assert tool.hint_source("destructiveHint") == "spec default"
    assert not tool.retry_safe


def test_declared_hints_win_over_defaults_and_keep_wire_names() -> None:
    tool = built(
        annotations=types.ToolAnnotations(destructive_hint=False, idempotent_hint=True, title="Nice")
    )

    assert tool.annotations == {"title": "Nice", "destructiveHint": False, "idempotentHint": True}
    assert tool.declared_hints == {"destructiveHint": False, "idempotentHint": True}
    assert tool.effective_hints["destructiveHint"] is False
    assert tool.effective_hints["readOnlyHint"] is False  # not declared: spec default
    assert tool.hint_source("destructiveHint") == "declared"
    assert tool.hint_source("readOnlyHint") == "spec default"
    assert tool.display_name == "Nice"
    assert tool.retry_safe  # idempotent


def test_read_only_tool_is_never_destructive_whatever_it_declares() -> None:
    tool = built(annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=True))

    assert tool.read_only
    assert not tool.destructive
    assert tool.idempotent
    assert tool.declared_hints == {"readOnlyHint": True, "destructiveHint": True}


def test_untrusted_server_tools_are_marked() -> None:
    assert built(trusted=False).trusted is False


# --------------------------------------------------------------------------------------------- names


def test_published_name_is_prefixed_with_server_and_separator() -> None:
    assert built("read", separator="__").published_name == "srv__read"
    assert built("read", prefix=False).published_name == "read"


@pytest.mark.parametrize("name", ["a.b", "has space", "ünïcode", "x" * 70, "slash/name"])
def test_unpublishable_names_are_skipped_with_the_reason(name: str) -> None:
    skipped = make_tool(name)

    assert isinstance(skipped, SkippedTool)
    assert skipped.server == "srv"
    assert skipped.tool == name
    assert "does not match ^[a-zA-Z0-9_-]{1,64}$" in skipped.reason
    assert "invalid_names='sanitize'" in skipped.reason


def test_sanitiser_renames_to_a_provider_safe_unique_name() -> None:
    taken = {"srv_a_b"}
    tool = built("a.b", invalid_names="sanitize", taken=taken)

    assert tool.name == "a.b"  # the server's own name still goes on the wire
    assert tool.published_name == "srv_a_b_2"
    long = built("y." * 40, invalid_names="sanitize")
    assert PUBLISHED_NAME_PATTERN.match(long.published_name)


def test_sanitize_name_maps_every_character_outside_the_allowed_set() -> None:
    assert sanitize_name("a.b c/d") == "a_b_c_d"
    assert sanitize_name("") == "tool"
    assert len(sanitize_name("z" * 100)) == 64


def test_collision_names_both_servers() -> None:
    one, two = built("add"), built("add")
    other = McpTool(**{**one.__dict__, "server": "other"})

    check_collisions([one])
    with pytest.raises(ToolNameCollisionError) as caught:
        check_collisions([two, other])

    message = str(caught.value)
    assert "'srv_add'" in message
    assert "server 'srv'" in message
    assert "server 'other'" in message


# --------------------------------------------------------------------------------------------- schema guards


def test_schema_depth_limit_is_exact() -> None:
    assert schema_problem(nested_schema(MAX_SCHEMA_DEPTH)) is None
    assert schema_problem(nested_schema(MAX_SCHEMA_DEPTH + 1)) == (
        f"inputSchema nests deeper than {MAX_SCHEMA_DEPTH} levels"
    )


def test_schema_depth_check_does_not_recurse() -> None:
    # 100,000 levels would overflow any recursive walker (and json.dumps).
    node: dict[str, Any] = {}
    for _ in range(100_000):
        node = {"type": "object", "additionalProperties": node}

    assert schema_problem(node) == f"inputSchema nests deeper than {MAX_SCHEMA_DEPTH} levels"


def test_schema_size_limit() -> None:
    def sized(n: int) -> dict[str, Any]:
        return {"type": "object", "description": "x" * n}

    overhead = len('{"type":"object","description":""}')
    assert schema_problem(sized(MAX_SCHEMA_BYTES - overhead)) is None
    assert (
        schema_problem(sized(MAX_SCHEMA_BYTES - overhead + 1))
        == "inputSchema is 256 KiB, over the 256 KiB limit"
    )


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "string"}, "inputSchema must have type 'object', got 'string'"),
        ({"properties": {}}, "inputSchema must have type 'object', got None"),
        ([], "inputSchema must be a JSON object, got list"),
    ],
)
def test_non_object_schema_is_refused(schema: Any, why: str) -> None:
    assert schema_problem(schema) == why


# --------------------------------------------------------------------------------------------- real servers


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
async def test_same_tool_on_two_servers_gets_distinct_published_names(
    open_servers: OpenServers, mode: str
) -> None:
    servers = open_servers(
        {"left": in_process(build_server(), mode), "right": in_process(build_server(), mode)}
    )
    names = [t.published_name for t in await servers.list_tools()]

    assert "left_add" in names
    assert "right_add" in names
    assert len(names) == len(set(names))
    assert (await servers.call_tool("right_add", {"a": 2, "b": 3})).structured_content == {"result": 5}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
async def test_prefixing_off_on_both_servers_is_a_collision_naming_both(
    open_servers: OpenServers, mode: str
) -> None:
    servers = open_servers(
        {
            "left": in_process(build_server(), mode, prefix=False),
            "right": in_process(build_server(), mode, prefix=False),
        }
    )
    with pytest.raises(ToolNameCollisionError) as caught:
        await servers.list_tools()

    message = str(caught.value)
    assert "server 'left'" in message
    assert "server 'right'" in message
    assert "prefix=True" in message


@pytest.mark.anyio
async def test_prefixing_off_on_one_server_is_fine(open_servers: OpenServers) -> None:
    servers = open_servers(
        {"left": in_process(build_server(), prefix=False), "right": in_process(build_server())}
    )
    names = {t.published_name for t in await servers.list_tools()}

    assert {"add", "right_add"} <= names


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
async def test_unusable_tools_are_skipped_with_a_report_and_good_tools_work(
    open_servers: OpenServers, mode: str
) -> None:
    server, counts = build_bad_server("bad")
    servers = open_servers({"bad": in_process(server, mode)})
    tools = await servers.list_tools()

    assert sorted(t.name for t in tools) == sorted(GOOD_TOOLS)
    reasons = {s.tool: s.reason for s in servers.report.skipped}
    assert set(reasons) == {*BAD_SCHEMA_TOOLS, *BAD_NAME_TOOLS}
    assert all(s.server == "bad" for s in servers.report.skipped)
    assert reasons["deep_schema"] == f"inputSchema nests deeper than {MAX_SCHEMA_DEPTH} levels"
    assert reasons["huge_schema"] == "inputSchema is 1024 KiB, over the 256 KiB limit"
    assert "'bad_dotted.name' does not match" in reasons["dotted.name"]
    assert "'bad_with space' does not match" in reasons["with space"]

    result = await servers.call_tool("bad_ok_add", {"a": 2, "b": 40})
    assert [c.text for c in result.content if isinstance(c, types.TextContent)] == ["42"]
    assert counts["tools/call:ok_add"] == 1


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
async def test_a_tool_that_breaks_the_wire_schema_does_not_hide_the_others(
    open_servers: OpenServers, mode: str
) -> None:
    # inputSchema {"type": "string"} violates the MCP wire schema; the SDK rejects the whole page for it.
    server, _ = build_bad_server("bad", non_object_schema=True)
    servers = open_servers({"bad": in_process(server, mode)})
    tools = await servers.list_tools()

    assert sorted(t.name for t in tools) == sorted(GOOD_TOOLS)
    reasons = {s.tool: s.reason for s in servers.report.skipped}
    assert reasons[NON_OBJECT_TOOL] == "inputSchema must have type 'object', got 'string'"
    assert {*BAD_SCHEMA_TOOLS, *BAD_NAME_TOOLS} <= set(reasons)
    result = await servers.call_tool("bad_ok_echo", {"text": "still here"})
    assert [c.text for c in result.content if isinstance(c, types.TextContent)] == ["still here"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
async def test_sanitiser_renames_dot_and_space_names_uniquely(open_servers: OpenServers, mode: str) -> None:
    server, counts = build_bad_server("bad")
    servers = open_servers({"servers": {"bad": in_process(server, mode)}, "invalid_names": "sanitize"})
    published = {t.name: t.published_name for t in await servers.list_tools()}

    # 'dotted_name' is a valid tool of its own: the sanitised 'dotted.name' must not take its name.
    assert published["dotted_name"] == "bad_dotted_name"
    assert published["dotted.name"] == "bad_dotted_name_2"
    assert published["with space"] == "bad_with_space"
    assert {s.tool for s in servers.report.skipped} == set(BAD_SCHEMA_TOOLS)

    await servers.call_tool("bad_dotted_name_2", {})
    await servers.call_tool("bad_with_space", {})
    assert counts["tools/call:dotted.name"] == 1  # the server's own name went on the wire
    assert counts["tools/call:with space"] == 1


def test_bad_server_deep_schema_is_past_the_limit_but_parseable() -> None:
    # Guards the fixture itself: 80 levels is what the report test above relies on.
    assert DEEP_LEVELS > MAX_SCHEMA_DEPTH
    assert schema_problem(nested_schema(DEEP_LEVELS)) is not None


def test_hint_source_says_when_read_only_implies_the_other_hints() -> None:
    tool = McpTool(
        server="s",
        name="t",
        published_name="s_t",
        title=None,
        description="",
        input_schema={"type": "object"},
        output_schema=None,
        annotations={"readOnlyHint": True},
    )
    assert tool.effective_hints["destructiveHint"] is False
    assert tool.hint_source("readOnlyHint") == "declared"
    assert tool.hint_source("destructiveHint") == "implied by readOnlyHint"
    assert tool.hint_source("openWorldHint") == "spec default"
