"""An Agent Chat UI edit whose string for an array (or object) field is JSON nested deeper than any parser
takes is refused like any other invalid edit: the resume raises ``AnswerRefusedError``, nothing runs, and the same
interrupt stays pending for a corrected answer (issue 23 item 3). It raised ``RecursionError`` out of the resume.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command
from mcp.types import ToolAnnotations

from langgraph_mcp import McpToolNode, ToolCallRouter, create_approval_gate
from langgraph_mcp.errors import AnswerRefusedError
from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import OpenServers

pytestmark = pytest.mark.anyio

DEEP = "[" * 100_000 + "]" * 100_000


def tagging_server() -> Any:
    server = build_server()

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def tag(tags: list[str], labels: dict[str, str]) -> str:
        """Tag the document (destructive: the gate asks)."""
        server.events.record("tag", "enter")
        return f"tags={tags} labels={labels}"

    return server


def agent(state: MessagesState) -> dict[str, list[AnyMessage]]:
    if any(isinstance(m, AIMessage) for m in state["messages"]):
        return {"messages": [AIMessage("done")]}
    tool_call = {"name": "demo_tag", "args": {"tags": ["a"], "labels": {}}, "id": "c1", "type": "tool_call"}
    return {"messages": [AIMessage("", id="ai-1", tool_calls=[tool_call])]}


@pytest.mark.parametrize(
    ("field", "deep"), [("tags", DEEP), ("labels", '{"a":' * 100_000 + "1" + "}" * 100_000)]
)
async def test_a_deeply_nested_json_string_in_an_edit_is_refused_and_the_interrupt_stays(
    open_servers: OpenServers, field: str, deep: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    server = tagging_server()
    servers = open_servers({"demo": {"transport": "in_process", "server": server}})
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers, agent_chat_ui=True))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    [pending] = out["__interrupt__"]

    args = {
        "tags": '["a"]',
        "labels": "{}",
        field: deep,
    }  # Agent Chat UI sends every edited field as a string
    edit = {"type": "edit", "edited_action": {"name": "demo_tag", "args": args}}
    with pytest.raises(AnswerRefusedError) as refused:
        await graph.ainvoke(Command(resume={"decisions": [edit]}), cfg)
    assert field in str(refused.value)
    state = await graph.aget_state(cfg)
    assert [i.id for i in state.interrupts] == [pending.id]  # the same interrupt, still answerable
    assert server.events.snapshot() == {}

    fixed = {"type": "edit", "edited_action": {"name": "demo_tag", "args": {"tags": '["b"]', "labels": "{}"}}}
    out = await graph.ainvoke(Command(resume={"decisions": [fixed]}), cfg)
    [message] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert message.status == "success" and "tags=['b']" in str(message.content)
