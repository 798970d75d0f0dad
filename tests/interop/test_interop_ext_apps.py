"""MCP Apps against another implementation: a server on the TypeScript MCP SDK (v2, 2025-11-25 only) with
``@modelcontextprotocol/ext-apps``' server helpers (``registerAppTool``, ``registerAppResource``), over stdio
(``ext_apps_server.mjs``). App-only tools never reach the model; the UI message carries the resource and its
metadata; an app's call goes through the gate."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from servers_install import Installed

from langgraph_mcp import McpServers
from langgraph_mcp.examples.apps_graph import build_apps_graph
from langgraph_mcp.examples.scripted_model import ScriptedChatModel
from langgraph_mcp.graph.apps import APP_ORIGIN_KEY, app_of

pytestmark = pytest.mark.anyio

URI = "ui://counter/app.html"


def counter(installed: Installed) -> dict[str, Any]:
    return {"counter": {"command": installed.node, "args": [installed.ext_apps_server_js], "apps": True}}


async def test_a_typescript_ext_apps_server_hides_its_app_only_tool_and_its_app_travels_with_the_result(
    installed: Installed,
) -> None:
    servers = McpServers(counter(installed))
    try:
        assert [t.name for t in await servers.get_tools()] == ["counter_show_counter"]
        every = {t.published_name for t in await servers.list_tools(include_app_only=True)}
        assert every == {"counter_show_counter", "counter_counter_bump"}
        model = ScriptedChatModel(tool_calls=[("show_counter", {})], prefix="counter_")
        graph = build_apps_graph(servers, model=model, checkpointer=InMemorySaver())
        config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke({"messages": [HumanMessage("show the counter")]}, config)
        [shown] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        app = app_of(shown)
        assert app is not None and app["resource_uri"] == URI and "<p id=count>0</p>" in app["html"]
        assert app["ui"] == {"csp": {"connectDomains": ["https://counter.example"]}, "prefersBorder": False}
        assert app["app_tools"] == {
            "show_counter": "counter_show_counter",
            "counter_bump": "counter_counter_bump",
        }
        [ui] = out["ui"]
        assert ui["props"]["resource_uri"] == URI
        # The app's call: counter_bump declares no hints, so the default policy asks (the spec's defaults).
        call = AIMessage(
            content="",
            tool_calls=[ToolCall(name="counter_counter_bump", args={}, id="bump_1", type="tool_call")],
            additional_kwargs={
                APP_ORIGIN_KEY: {"server": "counter", "resource_uri": URI, "tool_call_id": "x"}
            },
        )
        out = await graph.ainvoke({"messages": [call]}, config)
        assert out["__interrupt__"]
    finally:
        await servers.aclose()
