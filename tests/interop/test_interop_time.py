"""PyPI ``mcp-server-time``, unmodified: 2026.10.19 (mcp 2.3, both eras), 2026.8.18 (mcp 1.30, legacy only).

Pinned from what the servers declare: ``get_current_time`` and ``convert_time``, both read-only,
non-destructive, idempotent and closed-world (all four hints declared). The 2026.10.19 build adds an
outputSchema (and structuredContent); the 2026.8.18 build has none.

Where the builds differ (and we must cope with both):

* era: 2026.10.19 speaks 2026-07-28 under ``mode="auto"`` and 2025-11-25 under ``mode="legacy"``;
  2026.8.18 only the handshake (its ``server/discover`` answer is -32602, and ``mode="auto"`` falls back);
* a call to a tool the server does not have: JSON-RPC error -32602 (2026.10.19, both eras) vs an ``isError``
  result (2026.8.18);
* stderr: 2026.8.18 logs a long pydantic validation dump for the ``server/discover`` probe. It must go to the
  ``langgraph_mcp.server.<name>`` logger, never to the terminal.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import pytest
from interop_graph import build_graph, run_tool_node, start, text, thread, tool_call, tool_messages
from langgraph.checkpoint.memory import InMemorySaver
from mcp import MCPError

from langgraph_mcp import McpServers
from langgraph_mcp.errors import ServerDiscoveryError
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.servers.mcp_servers import server_access

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
DECLARED = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
ERAS = [  # (build, mode, negotiated protocol version)
    ("latest", "auto", MODERN),
    ("latest", "modern", MODERN),
    ("latest", "legacy", LEGACY),
    ("old", "auto", LEGACY),
    ("old", "legacy", LEGACY),
]


@pytest.mark.parametrize("build", ["latest", "old"])
async def test_catalog_hints_and_default_verdicts(time_spec: Any, build: str) -> None:
    servers = McpServers({"time": time_spec(build)})
    try:
        tools = {t.name: t for t in await servers.list_tools()}
        info = server_access(servers).connections.connection("time").owner.server_info
    finally:
        await servers.aclose()
    assert info is not None and info.name == "mcp-time"
    assert sorted(tools) == ["convert_time", "get_current_time"]
    for name, tool in tools.items():
        assert tool.published_name == f"time_{name}"
        assert tool.annotations == DECLARED and tool.effective_hints == DECLARED
        assert (tool.output_schema is not None) == (build == "latest"), name
        verdict = ApprovalPolicy().verdict(tool_call(tool.published_name, {}, "x"), tool)
        assert (verdict.kind, verdict.reason) == ("allow", "readOnlyHint (declared)")
        # ask_open_world would not ask either: the tools declare openWorldHint false
        strict = ApprovalPolicy(ask_open_world=True, ask_writes=True)
        assert strict.verdict(tool_call(tool.published_name, {}, "x"), tool).kind == "allow"


@pytest.mark.parametrize(("build", "mode", "version"), ERAS)
async def test_eras_and_calls(time_spec: Any, build: str, mode: str, version: str) -> None:
    servers = McpServers({"time": time_spec(build, mode=mode)})
    try:
        await servers.list_tools()
        assert server_access(servers).connections.connection("time").owner.protocol_version == version
        assert servers.server_status("time")["era"] == ("modern" if version == MODERN else "legacy")
        converted = await servers.call_tool(
            "time_convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        )
        bad_zone = await run_tool_node(servers, "time_get_current_time", {"timezone": "Mars/Olympus_Mons"})
    finally:
        await servers.aclose()
    assert not converted.is_error
    assert "21:00" in converted.content[0].text  # type: ignore[union-attr]
    if build == "latest":
        assert isinstance(converted.structured_content, dict)
        assert converted.structured_content["target"]["timezone"] == "Asia/Tokyo"
    else:
        assert converted.structured_content is None
    # isError -> error ToolMessage, in every era and build
    assert bad_zone.status == "error"
    assert "Invalid timezone" in text(bad_zone) and "Mars/Olympus_Mons" in text(bad_zone)


async def test_forcing_modern_on_a_handshake_only_build_fails_fast(time_spec: Any) -> None:
    servers = McpServers({"time": time_spec("old", mode="modern", connect_timeout=20)})
    started = time.monotonic()
    try:
        with pytest.raises(ServerDiscoveryError, match="'time'"):
            await servers.list_tools()
    finally:
        await servers.aclose()
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(("build", "mode"), [("latest", "auto"), ("latest", "legacy"), ("old", "auto")])
async def test_unknown_tool_straight_to_the_server(time_spec: Any, build: str, mode: str) -> None:
    """Bypassing our catalog: -32602 from the mcp-2.3 build (both eras), an isError result from mcp 1.30."""
    servers = McpServers({"time": time_spec(build, mode=mode)})
    try:
        conn = server_access(servers).connections.connection("time")
        await conn.owner.client()
        if build == "latest":
            with pytest.raises(MCPError) as caught:
                await conn.request(lambda c: c.session.call_tool("nope", {}), timeout=10)
            assert caught.value.code == -32602
            assert caught.value.message == "Unknown tool: nope"
        else:
            result = await conn.request(lambda c: c.session.call_tool("nope", {}), timeout=10)
            assert result.is_error
            assert result.content[0].text == "Error processing mcp-server-time query: Unknown tool: nope"  # type: ignore[union-attr]
        # The connection is still usable afterwards.
        ok = await servers.call_tool("time_get_current_time", {"timezone": "UTC"})
        assert not ok.is_error
    finally:
        await servers.aclose()


async def test_unknown_published_name_through_the_node(time_spec: Any) -> None:
    servers = McpServers({"time": time_spec()})
    try:
        message = await run_tool_node(servers, "time_get_curent_time", {"timezone": "UTC"})
    finally:
        await servers.aclose()
    assert message.status == "error"
    assert text(message).startswith("Error: No MCP tool is published as 'time_get_curent_time'.")
    assert "Did you mean: time_get_current_time" in text(message)


@pytest.mark.parametrize("build", ["latest", "old"])
async def test_agent_turn_runs_without_questions(time_spec: Any, build: str) -> None:
    calls = [
        tool_call("time_get_current_time", {"timezone": "Europe/Paris"}, "now"),
        tool_call(
            "time_convert_time",
            {"source_timezone": "America/New_York", "time": "09:30", "target_timezone": "UTC"},
            "conv",
        ),
        tool_call("time_get_current_time", {"timezone": "Nowhere/Nothing"}, "bad"),
    ]
    servers = McpServers({"time": time_spec(build)})
    try:
        graph = build_graph(servers, calls, checkpointer=InMemorySaver())
        final = await graph.ainvoke(start(), thread("time"))
    finally:
        await servers.aclose()
    assert not final.get("__interrupt__")  # read-only tools: the gate asks nothing
    messages = tool_messages(final)
    assert messages["now"].status == "success" and "Europe/Paris" in text(messages["now"])
    assert messages["conv"].status == "success"
    assert messages["bad"].status == "error" and "Invalid timezone" in text(messages["bad"])
    assert final["messages"][-1].content == "done"


async def test_stderr_noise_goes_to_the_server_logger(
    time_spec: Any, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="langgraph_mcp.server.time")
    servers = McpServers({"time": time_spec("old")})
    try:
        await servers.list_tools()
        assert server_access(servers).connections.connection("time").owner.protocol_version == LEGACY
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not _logged(caplog, "time", "Failed to validate request"):
            await anyio.sleep(0.05)
    finally:
        await servers.aclose()
    assert _logged(caplog, "time", "Failed to validate request")  # the server's discover-probe dump
    captured = capfd.readouterr()
    assert "Failed to validate request" not in captured.err
    assert "validation error" not in captured.err
    assert captured.err == ""


def _logged(caplog: pytest.LogCaptureFixture, server: str, needle: str) -> bool:
    return any(
        r.name == f"langgraph_mcp.server.{server}" and needle in r.getMessage() for r in caplog.records
    )
