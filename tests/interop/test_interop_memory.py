"""``@modelcontextprotocol/server-memory`` 2026.8.31 (TypeScript SDK 1.x, handshake era only), unmodified.

Pinned from what the server declares: 9 tools, each with a title, an outputSchema and all four hints.
Read-only: ``read_graph``, ``search_nodes``, ``open_nodes``; non-destructive writes: ``create_entities``,
``create_relations``, ``add_observations``; destructive (and idempotent): ``delete_entities``,
``delete_observations``, ``delete_relations``. The knowledge graph lives in ``MEMORY_FILE_PATH`` (a per-test
file). Deleting an unknown entity is *not* an error for this server; adding observations to one is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from interop_graph import (
    approvals,
    build_graph,
    resume_with,
    run_tool_node,
    start,
    text,
    thread,
    tool_call,
    tool_messages,
)
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_mcp import McpServers
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.servers.mcp_servers import server_access

pytestmark = [pytest.mark.interop, pytest.mark.anyio]


def _hints(read_only: bool, destructive: bool, idempotent: bool) -> dict[str, bool]:
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


DECLARED = {
    "read_graph": _hints(True, False, True),
    "search_nodes": _hints(True, False, True),
    "open_nodes": _hints(True, False, True),
    "create_entities": _hints(False, False, False),
    "create_relations": _hints(False, False, False),
    "add_observations": _hints(False, False, False),
    "delete_entities": _hints(False, True, True),
    "delete_observations": _hints(False, True, True),
    "delete_relations": _hints(False, True, True),
}
VERDICTS = {
    "read_graph": ("allow", "readOnlyHint (declared)"),
    "search_nodes": ("allow", "readOnlyHint (declared)"),
    "open_nodes": ("allow", "readOnlyHint (declared)"),
    "create_entities": ("allow", "non-destructive write: destructiveHint (declared)"),
    "create_relations": ("allow", "non-destructive write: destructiveHint (declared)"),
    "add_observations": ("allow", "non-destructive write: destructiveHint (declared)"),
    "delete_entities": ("ask", "destructiveHint (declared)"),
    "delete_observations": ("ask", "destructiveHint (declared)"),
    "delete_relations": ("ask", "destructiveHint (declared)"),
}


def _entity(name: str) -> dict[str, Any]:
    return {"name": name, "entityType": "person", "observations": [f"{name} exists"]}


def _names_on_disk(memory_file: Path) -> set[str]:
    lines = [json.loads(line) for line in memory_file.read_text().splitlines() if line.strip()]
    return {line["name"] for line in lines if line.get("type") == "entity"}


async def test_catalog_hints_and_default_verdicts(memory_spec: Any) -> None:
    servers = McpServers({"mem": memory_spec()})
    try:
        tools = {t.name: t for t in await servers.list_tools()}
        assert server_access(servers).connections.connection("mem").owner.protocol_version == "2025-11-25"
    finally:
        await servers.aclose()
    assert sorted(tools) == sorted(DECLARED)
    policy = ApprovalPolicy()
    for name, tool in tools.items():
        assert tool.published_name == f"mem_{name}"
        assert tool.title and tool.output_schema is not None, name
        assert tool.declared_hints == DECLARED[name], name
        assert tool.effective_hints == DECLARED[name], name  # everything declared: no spec default in play
        verdict = policy.verdict(tool_call(tool.published_name, {}, "x"), tool)
        assert (verdict.kind, verdict.reason) == VERDICTS[name], name
    # ask_writes turns the non-destructive writes into questions too; reads stay allowed
    strict = ApprovalPolicy(ask_writes=True)
    assert strict.verdict(tool_call("mem_create_entities", {}, "x"), tools["create_entities"]).kind == "ask"
    assert strict.verdict(tool_call("mem_read_graph", {}, "x"), tools["read_graph"]).kind == "allow"


async def test_agent_turn_approve_one_delete_reject_another(memory_spec: Any, memory_file: Path) -> None:
    servers = McpServers({"mem": memory_spec()})
    calls = [
        tool_call("mem_create_entities", {"entities": [_entity("carol")]}, "create"),
        tool_call("mem_delete_entities", {"entityNames": ["alice"]}, "del-alice"),
        tool_call("mem_delete_entities", {"entityNames": ["bob"]}, "del-bob"),
    ]
    try:
        seeded = await servers.call_tool(
            "mem_create_entities", {"entities": [_entity("alice"), _entity("bob")]}
        )
        assert not seeded.is_error
        assert _names_on_disk(memory_file) == {"alice", "bob"}
        graph = build_graph(servers, calls, checkpointer=InMemorySaver())
        config = thread("mem")
        pending = approvals(await graph.ainvoke(start(), config))
        assert set(pending) == {"del-alice", "del-bob"}
        assert pending["del-alice"].value["arguments"] == {"entityNames": ["alice"]}
        assert _names_on_disk(memory_file) == {"alice", "bob"}  # the allowed create waits for the gate too
        final = await graph.ainvoke(
            resume_with(
                pending,
                {"del-alice": {"type": "approve"}, "del-bob": {"type": "reject", "message": "keep bob"}},
            ),
            config,
        )
        graph_now = await servers.call_tool("mem_read_graph", {})
    finally:
        await servers.aclose()

    messages = tool_messages(final)
    assert messages["create"].status == "success"
    assert messages["del-alice"].status == "success" and "deleted" in text(messages["del-alice"])
    assert messages["del-bob"].status == "error" and "keep bob" in text(messages["del-bob"])
    assert isinstance(graph_now.structured_content, dict)
    assert {e["name"] for e in graph_now.structured_content["entities"]} == {"bob", "carol"}
    assert _names_on_disk(memory_file) == {"bob", "carol"}


async def test_is_error_results_become_error_tool_messages(memory_spec: Any) -> None:
    servers = McpServers({"mem": memory_spec()})
    try:
        unknown = await run_tool_node(
            servers, "mem_add_observations", {"observations": [{"entityName": "nobody", "contents": ["x"]}]}
        )
        bad_args = await run_tool_node(servers, "mem_create_entities", {"entities": "not a list"}, "c2")
        # Not an error for this server: deleting what is not there succeeds.
        delete_unknown = await run_tool_node(
            servers, "mem_delete_entities", {"entityNames": ["nobody"]}, "c3"
        )
    finally:
        await servers.aclose()
    assert unknown.status == "error" and text(unknown) == "Entity with name nobody not found"
    assert bad_args.status == "error" and "MCP error -32602: Input validation error" in text(bad_args)
    assert delete_unknown.status == "success"


async def test_unknown_tool_both_ways(memory_spec: Any) -> None:
    servers = McpServers({"mem": memory_spec()})
    try:
        await servers.list_tools()
        result = (
            await server_access(servers)
            .connections.connection("mem")
            .request(lambda c: c.session.call_tool("nope", {}), timeout=10)
        )
        message = await run_tool_node(servers, "mem_delete_entity", {"entityNames": ["x"]})
    finally:
        await servers.aclose()
    assert result.is_error and result.content[0].text == "MCP error -32602: Tool nope not found"  # type: ignore[union-attr]
    assert message.status == "error" and "mem_delete_entities" in text(message)
