"""LangChain tools from ``McpServers.get_tools()``: names, schemas, metadata, and content conversion end-to-end.

Every test runs the bundled demo server in-process, in both protocol eras.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_mcp import McpServers
from langgraph_mcp.calls.tools import McpToolError
from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import ERAS, OpenServers, OpenServersSync


@pytest.fixture(params=ERAS)
def servers(request: pytest.FixtureRequest, open_servers: OpenServers) -> McpServers:
    return open_servers(
        {"demo": {"transport": "in_process", "server": build_server(), "mode": request.param}}
    )


async def tools_by_name(servers: McpServers) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in await servers.get_tools()}


def tool_call(name: str, call_id: str = "call-1", **args: Any) -> dict[str, Any]:
    return {"type": "tool_call", "name": name, "args": args, "id": call_id}


@pytest.mark.anyio
async def test_tools_are_named_by_published_name_with_the_servers_schema(servers: McpServers) -> None:
    tools = await tools_by_name(servers)

    assert set(tools) == {t.published_name for t in await servers.list_tools()}
    forecast = tools["demo_get_forecast"]
    assert forecast.description == "Return a (fake) weather forecast for a city."
    assert set(forecast.args) == {"city", "days"}
    assert forecast.tool_call_schema["required"] == ["city"]  # type: ignore[index]


@pytest.mark.anyio
async def test_metadata_has_camel_case_annotations_hints_and_server(servers: McpServers) -> None:
    tools = await tools_by_name(servers)

    delete = tools["demo_delete_file"].metadata
    assert delete is not None
    assert delete["server"] == "demo"
    assert delete["mcp_tool"] == "delete_file"
    assert delete["annotations"] == {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}
    assert delete["hints"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,  # not declared: spec default
    }
    assert delete["trusted"] is True

    move = tools["demo_move_file"].metadata
    assert move is not None
    assert move["annotations"] is None
    assert move["declared_hints"] == {}
    assert move["hints"]["destructiveHint"] is True


@pytest.mark.anyio
async def test_tool_call_returns_tool_message_with_standard_blocks(servers: McpServers) -> None:
    image = (await tools_by_name(servers))["demo_make_image"]

    message = await image.ainvoke(tool_call("demo_make_image", "call-image"))

    assert isinstance(message, ToolMessage)
    assert message.tool_call_id == "call-image"
    assert message.name == "demo_make_image"
    assert message.status == "success"
    assert isinstance(message.content, list)
    [block] = message.content
    assert isinstance(block, dict)
    assert block["type"] == "image"
    assert block["mime_type"] == "image/png"
    assert base64.b64decode(block["base64"]).startswith(b"\x89PNG")
    assert "id" not in block  # the factories' random ids are dropped


@pytest.mark.anyio
async def test_every_mcp_block_kind_reaches_the_tool_message_audio_via_the_artifact(
    servers: McpServers,
) -> None:
    # LangChain tools can't return audio blocks (langchain-core stringifies the whole content list), so audio
    # moves to the artifact and a text note takes its place.
    mixed = (await tools_by_name(servers))["demo_mixed_content"]

    message = await mixed.ainvoke(tool_call("demo_mixed_content", "call-mixed"))

    blocks = message.content
    assert isinstance(blocks, list)
    assert [b["type"] for b in blocks] == ["text", "image", "text", "file", "text", "file"]
    text, image, audio_note, link, embedded, blob = blocks
    assert text == {"type": "text", "text": "Here is one of each content type."}
    assert image["mime_type"] == "image/png"
    assert audio_note == {"type": "text", "text": "[audio content (audio/wav): in the artifact]"}
    (audio,) = [e["block"] for e in message.artifact if e["type"] == "mcp_content"]
    assert audio["type"] == "audio" and audio["mime_type"] == "audio/wav" and audio["base64"]
    assert link == {
        "type": "file",
        "url": "file:///workspace/notes.txt",
        "mime_type": "text/plain",
        "extras": {"name": "notes"},
    }
    assert embedded["extras"] == {"uri": "file:///workspace/todo.txt", "mime_type": "text/plain"}
    assert blob["extras"] == {"uri": "file:///workspace/data.bin", "filename": "data.bin"}


@pytest.mark.anyio
async def test_structured_content_and_meta_go_to_the_artifact(servers: McpServers) -> None:
    tools = await tools_by_name(servers)

    added = await tools["demo_add"].ainvoke(tool_call("demo_add", a=2, b=3))
    with_meta = await tools["demo_with_meta"].ainvoke(tool_call("demo_with_meta"))

    assert added.content == [{"type": "text", "text": "5"}]
    assert {"type": "mcp_structured_content", "data": {"result": 5}} in added.artifact
    assert with_meta.content == [{"type": "text", "text": "result with _meta"}]
    assert {"type": "mcp_structured_content", "data": {"trace": "abc", "ok": True}} in with_meta.artifact
    meta = [entry["data"] for entry in with_meta.artifact if entry["type"] == "mcp_meta"]
    assert meta and meta[0]["demo/trace"] == "abc"


@pytest.mark.anyio
async def test_is_error_raises_tool_exception_when_invoked_directly(servers: McpServers) -> None:
    fails = (await tools_by_name(servers))["demo_always_fails"]

    with pytest.raises(McpToolError) as caught:
        await fails.ainvoke({"reason": "no quota"})

    assert isinstance(caught.value, ToolException)
    assert "always_fails: no quota" in str(caught.value)
    assert caught.value.result.is_error is True


@pytest.mark.anyio
async def test_is_error_becomes_an_error_tool_message_inside_a_tool_node_graph(servers: McpServers) -> None:
    tools = list((await tools_by_name(servers)).values())

    def agent(state: MessagesState) -> dict[str, Any]:
        calls = [
            tool_call("demo_always_fails", "call-bad", reason="no quota"),
            tool_call("demo_add", "call-good", a=1, b=1),
        ]
        return {"messages": [AIMessage("", tool_calls=calls)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("tools", END)

    out = await builder.compile().ainvoke({"messages": []})

    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["call-bad"].status == "error"
    assert "always_fails: no quota" in str(results["call-bad"].content)
    assert results["call-good"].status == "success"
    assert results["call-good"].content == [{"type": "text", "text": "2"}]


def test_tools_work_from_sync_code(open_servers_sync: OpenServersSync) -> None:
    servers = open_servers_sync({"demo": {"transport": "in_process", "server": build_server()}})
    tools = {t.name: t for t in servers.run_sync(servers.get_tools)}

    message = tools["demo_add"].invoke(tool_call("demo_add", a=40, b=2))

    assert isinstance(message, ToolMessage)
    assert message.content == [{"type": "text", "text": "42"}]
