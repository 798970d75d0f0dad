"""``@modelcontextprotocol/server-filesystem`` 2026.8.31 (TypeScript SDK 1.x, handshake era only), unmodified.

Pinned from what the server declares: 14 tools, each with a title and an outputSchema. Read tools declare
only ``readOnlyHint: true`` and ``openWorldHint: false`` (the other hints come from the spec defaults, which a
read-only tool overrides); ``write_file``/``edit_file``/``move_file`` are destructive, ``create_directory`` is
a non-destructive idempotent write. Errors (a path outside the allowed directories) are ``isError`` results.

Roots: a client that declares the roots capability gets asked ``roots/list`` after initialize, and the
server *replaces* its command-line directories with the answer (asynchronously: a call made right after
connecting may still see the old ones). ``roots`` unset in our config → we declare no roots and the
command-line directory stays.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import anyio
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
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_mcp import McpServers
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.servers.mcp_servers import server_access

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

LEGACY = "2025-11-25"
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
READ_TOOLS = [
    "read_file",
    "read_text_file",
    "read_media_file",
    "read_multiple_files",
    "list_directory",
    "list_directory_with_sizes",
    "directory_tree",
    "search_files",
    "get_file_info",
    "list_allowed_directories",
]
WRITE_ANNOTATIONS: dict[str, dict[str, bool]] = {
    "write_file": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    },
    "edit_file": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    },
    "move_file": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    },
    "create_directory": {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}
ASKED = {"write_file", "edit_file", "move_file"}


async def test_catalog_hints_and_default_verdicts(filesystem_spec: Any) -> None:
    servers = McpServers({"fs": filesystem_spec()})
    try:
        tools = {t.name: t for t in await servers.list_tools()}
        conn = server_access(servers).connections.connection("fs")
        assert (
            conn.owner.protocol_version == LEGACY
        )  # mode="auto": server/discover -> -32601, handshake fallback
        assert (
            conn.owner.server_info is not None and conn.owner.server_info.name == "secure-filesystem-server"
        )
    finally:
        await servers.aclose()

    assert sorted(tools) == sorted([*READ_TOOLS, *WRITE_ANNOTATIONS])
    assert servers.report.skipped == []
    policy = ApprovalPolicy()
    for name, tool in tools.items():
        assert tool.published_name == f"fs_{name}"
        assert tool.title, name
        assert tool.output_schema is not None, name
        verdict = policy.verdict(tool_call(tool.published_name, {}, "x"), tool)
        if name in READ_TOOLS:
            assert tool.annotations == READ_ONLY, name
            assert tool.declared_hints == READ_ONLY, name
            # destructive/idempotent not declared: a read-only tool is never destructive, always idempotent
            assert tool.effective_hints == {
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            }, name
            assert tool.hint_source("destructiveHint") == "implied by readOnlyHint"
            assert verdict.kind == "allow", (name, verdict)
            assert verdict.reason == "readOnlyHint (declared)"
        else:
            assert tool.annotations == WRITE_ANNOTATIONS[name], name
            assert tool.effective_hints == WRITE_ANNOTATIONS[name], name
            expected = "ask" if name in ASKED else "allow"
            assert verdict.kind == expected, (name, verdict)
            if expected == "ask":
                assert verdict.reason == "destructiveHint (declared)"
    assert tools["create_directory"].retry_safe and not tools["move_file"].retry_safe


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
async def test_agent_turn_approve_write_reject_move(
    filesystem_spec: Any, sandbox: Path, tmp_path: Path, saver: str
) -> None:
    (sandbox / "keep.txt").write_text("keep me\n")
    calls = [
        tool_call("fs_list_directory", {"path": str(sandbox)}, "list"),
        tool_call(
            "fs_write_file", {"path": str(sandbox / "new.txt"), "content": "written by the agent\n"}, "write"
        ),
        tool_call(
            "fs_move_file",
            {"source": str(sandbox / "keep.txt"), "destination": str(sandbox / "moved.txt")},
            "move",
        ),
    ]
    servers = McpServers({"fs": filesystem_spec()})
    try:
        if saver == "memory":
            graph = build_graph(servers, calls, checkpointer=InMemorySaver())
            out, final = await _approve_and_reject(graph, thread("fs"))
        else:
            async with AsyncSqliteSaver.from_conn_string(
                str(tmp_path / "checkpoints.sqlite")
            ) as checkpointer:
                graph = build_graph(servers, calls, checkpointer=checkpointer)
                out, final = await _approve_and_reject(graph, thread("fs"))
    finally:
        await servers.aclose()

    pending = out
    assert set(pending) == {"write", "move"}
    assert pending["write"].value["reason"] == "destructiveHint (declared)"
    assert pending["move"].value["hints"]["declared"]["destructiveHint"] is True
    assert (sandbox / "new.txt").read_text() == "written by the agent\n"
    assert (sandbox / "keep.txt").exists() and not (sandbox / "moved.txt").exists()
    messages = tool_messages(final)
    assert set(messages) == {"list", "write", "move"}
    assert messages["list"].status == "success" and "keep.txt" in text(messages["list"])
    assert messages["write"].status == "success"
    assert messages["move"].status == "error" and "not in my sandbox" in text(messages["move"])
    assert final["messages"][-1].content == "done"


async def _approve_and_reject(graph: Any, config: RunnableConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    first = await graph.ainvoke(start(), config)
    pending = approvals(first)
    assert set(pending) == {"write", "move"}
    final = await graph.ainvoke(
        resume_with(
            pending,
            {"write": {"type": "approve"}, "move": {"type": "reject", "message": "not in my sandbox"}},
        ),
        config,
    )
    assert "__interrupt__" not in final or not final["__interrupt__"]
    return pending, final


def test_sync_agent_turn_with_sqlite_saver(filesystem_spec: Any, sandbox: Path, tmp_path: Path) -> None:
    """``graph.invoke`` (no event loop in the caller): the gate and the node use McpServers' private loop."""
    calls = [
        tool_call(
            "fs_edit_file",
            {"path": str(sandbox / "a.txt"), "edits": [{"oldText": "one", "newText": "ONE"}]},
            "edit",
        ),
        tool_call("fs_create_directory", {"path": str(sandbox / "sub")}, "mkdir"),
    ]
    (sandbox / "a.txt").write_text("one two\n")
    servers = McpServers({"fs": filesystem_spec()})
    try:
        with SqliteSaver.from_conn_string(str(tmp_path / "sync.sqlite")) as checkpointer:
            graph = build_graph(servers, calls, checkpointer=checkpointer)
            config = thread("sync")
            pending = approvals(graph.invoke(start(), config))
            assert set(pending) == {"edit"}  # create_directory is a non-destructive write: allowed
            assert not (sandbox / "sub").exists()
            final = graph.invoke(resume_with(pending, {"edit": {"type": "approve"}}), config)
    finally:
        servers.close()
    assert (sandbox / "a.txt").read_text() == "ONE two\n"
    assert (sandbox / "sub").is_dir()
    messages = tool_messages(final)
    assert messages["edit"].status == "success" and messages["mkdir"].status == "success"


async def test_is_error_results_become_error_tool_messages(
    filesystem_spec: Any, sandbox: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    servers = McpServers({"fs": filesystem_spec()})
    try:
        write = await run_tool_node(servers, "fs_write_file", {"path": str(outside), "content": "x"})
        traversal = await run_tool_node(servers, "fs_read_text_file", {"path": f"{sandbox}/../outside.txt"})
    finally:
        await servers.aclose()
    assert not outside.exists()
    for message in (write, traversal):
        assert message.status == "error"
        assert "Access denied - path outside allowed directories" in text(message)
        assert str(sandbox) in text(message)


async def test_unknown_tool_both_ways(filesystem_spec: Any) -> None:
    servers = McpServers({"fs": filesystem_spec()})
    try:
        await servers.list_tools()
        conn = server_access(servers).connections.connection("fs")
        # Straight to the server, bypassing the catalog: the TypeScript SDK answers with an isError result.
        result = await conn.request(lambda c: c.session.call_tool("nope", {}), timeout=10)
        message = await run_tool_node(servers, "fs_read_txt_file", {"path": "x"})
    finally:
        await servers.aclose()
    assert result.is_error
    assert result.content[0].text == "MCP error -32602: Tool nope not found"  # type: ignore[union-attr]
    assert message.status == "error"
    assert "No MCP tool is published as 'fs_read_txt_file'" in text(message)
    assert "fs_read_text_file" in text(message)


async def _wait_for_log(
    caplog: pytest.LogCaptureFixture, logger: str, needle: str, timeout: float = 10
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(r.name == logger and needle in r.getMessage() for r in caplog.records):
            return
        await anyio.sleep(0.05)
    raise AssertionError(f"{logger} never logged {needle!r}")


@pytest.mark.parametrize("roots", ["unset", "sandbox", "elsewhere"])
async def test_roots(
    filesystem_spec: Any, sandbox: Path, tmp_path: Path, roots: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Unset: the command-line dir. Declared: the server replaces its allowed dirs with our roots."""
    elsewhere = (tmp_path / "elsewhere").resolve()
    elsewhere.mkdir()
    options: dict[str, Any] = {}
    if roots == "sandbox":
        options["roots"] = [str(sandbox)]
    elif roots == "elsewhere":
        options["roots"] = [elsewhere.as_uri()]
    allowed_dir = elsewhere if roots == "elsewhere" else sandbox
    caplog.set_level(logging.INFO, logger="langgraph_mcp.server.fs")
    servers = McpServers({"fs": filesystem_spec(**options)})
    try:
        await servers.list_tools()
        if roots != "unset":
            # The server asks roots/list only after initialize and swaps its directories when the answer
            # arrives: a call made right after connecting can still see the command-line directory.
            await _wait_for_log(
                caplog, "langgraph_mcp.server.fs", "Updated allowed directories from MCP roots"
            )
        allowed = await servers.call_tool("fs_list_allowed_directories", {})
        in_sandbox = await run_tool_node(
            servers, "fs_write_file", {"path": str(sandbox / "s.txt"), "content": "s"}
        )
        in_elsewhere = await run_tool_node(
            servers, "fs_write_file", {"path": str(elsewhere / "e.txt"), "content": "e"}
        )
    finally:
        await servers.aclose()

    assert allowed.structured_content == {"content": f"Allowed directories:\n{allowed_dir}"}
    assert (sandbox / "s.txt").exists() == (allowed_dir == sandbox)
    assert (elsewhere / "e.txt").exists() == (allowed_dir == elsewhere)
    assert in_sandbox.status == ("success" if allowed_dir == sandbox else "error")
    assert in_elsewhere.status == ("success" if allowed_dir == elsewhere else "error")
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "langgraph_mcp.server.fs")
    if roots == "unset":
        assert "Client does not support MCP Roots" in logged
    else:
        assert "Client does not support MCP Roots" not in logged
