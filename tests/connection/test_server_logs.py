"""Server log messages (``notifications/message``) reach the ``langgraph_mcp.server.<name>`` logger and, during a
call, the graph's custom stream; ``log_level`` is asked for on connect (legacy) or on every request (2026-07-28)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.examples.demo_server import build_server
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import ERAS, OpenServers, serve_asgi
from tests.support.node_support import call, one_turn_graph, start
from tests.support.servers.library_server import LibraryServer

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""Not about approvals: the tool node runs every call unasked (since issue 19 it asks about destructive and
unannotated tools by default)."""

pytestmark = pytest.mark.anyio


async def run_chatty(
    open_servers: OpenServers, mode: str, caplog: pytest.LogCaptureFixture, **options: Any
) -> tuple[LibraryServer, list[Any]]:
    lib = LibraryServer()
    base = await open_servers.enter(serve_asgi(lib.server.streamable_http_app()))
    servers = open_servers({"lib": {"url": f"{base}/mcp", "mode": mode, **options}})
    graph = one_turn_graph(servers, [call("lib_chatty", "c1")], StrictSaver(), policy=NO_APPROVALS)
    with caplog.at_level(logging.DEBUG, logger="langgraph_mcp.server.lib"):
        events = [
            chunk
            async for chunk in graph.astream(
                start(), {"configurable": {"thread_id": "t"}}, stream_mode="custom"
            )
        ]
    return lib, events


@pytest.mark.parametrize("mode", ERAS)
async def test_logs_reach_the_logger_and_the_custom_stream_at_the_asked_level(
    mode: str, caplog: pytest.LogCaptureFixture, open_servers: OpenServers
) -> None:
    lib, events = await run_chatty(open_servers, mode, caplog, log_level="info")
    logs = [e for e in events if e.get("type") == "mcp_log"]
    assert [(e["level"], e["data"]) for e in logs] == [
        ("info", "info from chatty"),
        ("warning", "warning from chatty"),
        ("error", "error from chatty"),
    ]
    assert {(e["tool_call_id"], e["server"], e["tool"], e["logger"]) for e in logs} == {
        ("c1", "lib", "chatty", "chatty")
    }
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "langgraph_mcp.server.lib"]
    assert records == [
        (logging.INFO, "[chatty] info from chatty"),
        (logging.WARNING, "[chatty] warning from chatty"),
        (logging.ERROR, "[chatty] error from chatty"),
    ]
    assert lib.levels_set == (
        ["info"] if mode == "legacy" else []
    )  # modern asks per request, not by setLevel


@pytest.mark.parametrize("mode", ERAS)
async def test_without_a_log_level_only_legacy_servers_send_logs(
    mode: str, caplog: pytest.LogCaptureFixture, open_servers: OpenServers
) -> None:
    _, events = await run_chatty(open_servers, mode, caplog)
    levels = [e["level"] for e in events if e.get("type") == "mcp_log"]
    assert levels == (["debug", "info", "warning", "error"] if mode == "legacy" else [])


@pytest.mark.parametrize("mode", ERAS)
async def test_concurrent_users_each_see_only_their_own_calls_logs(
    mode: str, open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """With per-run credentials each user's calls have their own connection, so a log message of one user's call
    never reaches another user's stream."""
    lib = LibraryServer()
    base = await open_servers.enter(serve_asgi(lib.server.streamable_http_app()))
    headers = {"Authorization": "Bearer ${configurable:token}"}
    servers = open_servers(
        {"lib": {"url": f"{base}/mcp", "mode": mode, "log_level": "info", "headers": headers}}
    )
    graph = one_turn_graph(servers, [call("lib_chatty", "c1")], checkpointer, policy=NO_APPROVALS)

    async def run(user: str) -> list[Any]:
        config = {"configurable": {"thread_id": user, "token": user}}
        return [c async for c in graph.astream(start(), config, stream_mode="custom")]

    streams = await asyncio.gather(*(run(f"user{i}") for i in range(4)))
    for events in streams:
        assert [e["level"] for e in events if e.get("type") == "mcp_log"] == [
            "info",
            "warning",
            "error",
        ]


class CallOnce(BaseChatModel):
    """Calls ``tool`` once after the human turn, then says "done"."""

    tool: str

    @property
    def _llm_type(self) -> str:
        return "call-once"

    def bind_tools(self, tools: Any, **kwargs: Any) -> CallOnce:  # type: ignore[override]
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        if isinstance(messages[-1], HumanMessage):
            call = {"name": self.tool, "args": {}, "id": "c1", "type": "tool_call"}
            reply = AIMessage("", tool_calls=[call])
        else:
            reply = AIMessage("done")
        return ChatResult(generations=[ChatGeneration(message=reply)])


@pytest.mark.parametrize("mode", ERAS)
async def test_get_tools_tools_in_create_agent_stream_logs_and_progress(
    open_servers: OpenServers, mode: str
) -> None:
    lib = LibraryServer()
    demo = build_server()
    servers = open_servers(
        {
            "lib": {"transport": "in_process", "server": lib.server, "mode": mode, "log_level": "warning"},
            "demo": {"transport": "in_process", "server": demo, "mode": mode},
        }
    )
    tools = await servers.get_tools()
    for tool, kind in [("lib_chatty", "mcp_log"), ("demo_slow", "mcp_progress")]:
        agent = create_agent(CallOnce(tool=tool), tools)
        events = [
            chunk async for chunk in agent.astream({"messages": [HumanMessage("go")]}, stream_mode="custom")
        ]
        mine = [e for e in events if e.get("type") == kind]
        assert mine and all(e["tool_call_id"] == "c1" and e["tool"] == tool.split("_", 1)[1] for e in mine)
        if kind == "mcp_log":
            assert [e["level"] for e in mine] == ["warning", "error"]
