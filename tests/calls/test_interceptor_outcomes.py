"""An interceptor that returns something other than a ``CallToolResult`` or a ``ToolMessage`` fails only its own
call, with an error ToolMessage that names the interceptor and what it returned, and says whether the tool ran
(issue 23 item 2); the other calls of the turn go on."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_mcp import ApprovalPolicy, McpServers
from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import OpenServers
from tests.support.node_support import call, in_process, one_turn_graph, start, text_of, tool_messages

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""Not about approvals: the tool node runs every call unasked (since issue 19 it asks about destructive and
unannotated tools by default)."""

pytestmark = pytest.mark.anyio


async def returns_none(request: Any, handler: Any) -> Any:
    if request.name == "echo":
        return None
    return await handler(request)


async def returns_a_dict(request: Any, handler: Any) -> Any:
    result = await handler(request)
    if request.name == "echo":
        return {"text": "the tool's answer, as a dict"}
    return result


@pytest.mark.parametrize("fan_out", [True, False], ids=["send-per-call", "one-batch"])
async def test_an_interceptor_returning_none_fails_its_call_and_the_turn_goes_on(
    open_servers: OpenServers, fan_out: bool, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    demo = build_server()
    servers = open_servers({"demo": in_process(demo, "modern")}, interceptors=[returns_none])
    calls = [call("demo_echo", "c1", text="hi"), call("demo_add", "c2", a=2, b=3)]
    out = await one_turn_graph(servers, calls, checkpointer, fan_out=fan_out, policy=NO_APPROVALS).ainvoke(
        start(), {"configurable": {"thread_id": "t"}}
    )
    messages = tool_messages(out)
    assert messages["c1"].status == "error"
    text = text_of(messages["c1"])
    assert "returns_none" in text and "None" in text, text
    assert "not run" in text or "did not run" in text, text  # the handler was never called
    assert messages["c2"].status == "success" and text_of(messages["c2"]) == "5"
    assert demo.events.snapshot().get("echo.enter", 0) == 0


async def test_an_interceptor_returning_a_dict_after_the_handler_says_the_tool_ran(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    demo = build_server()
    servers = open_servers({"demo": in_process(demo, "legacy")}, interceptors=[returns_a_dict])
    calls = [call("demo_echo", "c1", text="hi"), call("demo_add", "c2", a=2, b=3)]
    out = await one_turn_graph(servers, calls, checkpointer, policy=NO_APPROVALS).ainvoke(
        start(), {"configurable": {"thread_id": "t"}}
    )
    messages = tool_messages(out)
    text = text_of(messages["c1"])
    assert messages["c1"].status == "error"
    assert "returns_a_dict" in text and "dict" in text and "the tool ran" in text, text
    assert demo.events.snapshot()["echo.enter"] == 1
    assert messages["c2"].status == "success"


async def test_call_tool_outside_a_graph_raises_a_clear_error_for_a_wrong_outcome() -> None:
    async with McpServers(
        {"demo": in_process(build_server(), "modern")}, interceptors=[returns_none]
    ) as servers:
        with pytest.raises(Exception) as raised:
            await servers.call_tool("demo_echo", {"text": "hi"})
    assert not isinstance(raised.value, AttributeError)
    assert "returns_none" in str(raised.value) and "None" in str(raised.value)
