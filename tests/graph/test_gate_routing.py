"""Allowed calls don't wait for the gate: an approval and a question can be pending together, one Command answers both."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langgraph_mcp import (
    ApprovalPolicy,
    McpServers,
    McpToolNode,
    ToolCallsDone,
    create_approval_gate,
    resume_command,
    route_through_gate,
)
from langgraph_mcp.examples.demo_server import build_server
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import ERAS, OpenServers, OpenServersSync
from tests.support.node_support import TOMORROW, call, fill, in_process, text_of, tool_messages

pytestmark = pytest.mark.anyio


def gated_graph(
    servers: McpServers, calls: list[Any], model_turns: list[int]
) -> CompiledStateGraph[Any, Any, Any, Any]:
    policy = ApprovalPolicy()

    def agent(state: MessagesState) -> dict[str, Any]:
        model_turns.append(len(state["messages"]))
        if len(model_turns) == 1:
            return {"messages": [AIMessage("", tool_calls=calls, id="ai-1")]}
        return {"messages": [AIMessage("done", id=f"ai-{len(model_turns)}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers, policy))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges(
        "agent", route_through_gate(servers, policy), ["approval_gate", "tools", END]
    )
    builder.add_edge("approval_gate", "tools")
    builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=StrictSaver())


@pytest.mark.parametrize("mode", ERAS)
async def test_approval_and_question_pending_together_answered_by_one_command(
    open_servers: OpenServers, mode: str
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    turns: list[int] = []
    calls = [
        call("demo_list_files", "ls"),
        call("demo_delete_file", "rm", path="todo.txt"),
        call("demo_book_trip", "trip", destination="Rome"),
    ]
    graph = gated_graph(servers, calls, turns)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    kinds = {i.value["tool_call_id"]: i.value["type"] for i in out["__interrupt__"]}
    assert kinds == {"rm": "mcp_approval", "trip": "mcp_elicitation"}
    assert srv.events.counts["list_files.enter"] == 1  # the read-only call did not wait for the human
    (trip,) = [i for i in out["__interrupt__"] if i.value["tool_call_id"] == "trip"]
    answers = {"trip": {key: fill(request) for key, request in trip.value["requests"].items()}}
    out = await graph.ainvoke(
        resume_command(out["__interrupt__"], decisions={"rm": {"type": "approve"}}, answers=answers), cfg
    )
    assert "__interrupt__" not in out
    messages = tool_messages(out)
    assert text_of(messages["rm"]) == "Deleted todo.txt"
    assert text_of(messages["trip"]) == f"Booked Rome on {TOMORROW}"
    assert out["messages"][-1].content == "done"
    assert len(turns) == 2  # the model ran again once, after every call had its ToolMessage
    assert srv.events.counts["delete_file.commit"] == 1 and srv.events.counts["list_files.enter"] == 1
    assert srv.events.counts["book_trip.commit"] == 1


async def test_rejected_call_and_allowed_call_reach_the_model_once(open_servers: OpenServers) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    turns: list[int] = []
    graph = gated_graph(
        servers, [call("demo_add", "sum", a=1, b=2), call("demo_delete_file", "rm", path="x")], turns
    )
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    out = await graph.ainvoke(resume_command(out, decisions={"rm": {"type": "reject", "message": "no"}}), cfg)
    messages = tool_messages(out)
    assert text_of(messages["sum"]) == "3" and messages["rm"].status == "error"
    assert len(turns) == 2
    assert srv.events.counts["delete_file.enter"] == 0


def test_sync_graph_routes_around_the_gate(open_servers_sync: OpenServersSync) -> None:
    srv = build_server()
    servers = open_servers_sync({"demo": in_process(srv, "auto")})
    turns: list[int] = []
    graph = gated_graph(servers, [call("demo_add", "sum", a=2, b=2)], turns)
    out = graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "t"}})
    assert text_of(tool_messages(out)["sum"]) == "4" and len(turns) == 2
