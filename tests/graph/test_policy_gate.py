"""Policy rules in real graphs: the rule and reason in the approval payload, the principal from the run config,
locked rules on every path, and ``expires_after`` with an injected clock (what ran is read from the server)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import tools_condition

from langgraph_mcp import (
    ApprovalPolicy,
    McpServers,
    McpToolNode,
    ToolCallsDone,
    create_approval_gate,
    resume_command,
    route_through_gate,
)
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from langgraph_mcp.graph.node import ToolCallRouter
from langgraph_mcp.payloads import ApprovalInterrupt
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import OpenServers
from tests.support.node_support import call, in_process, text_of, tool_messages

pytestmark = pytest.mark.anyio

Graph = CompiledStateGraph[Any, Any, Any, Any]
WIRINGS = ("gate-router", "route-through-gate")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def policy_for(clock: Clock) -> ApprovalPolicy:
    policy = ApprovalPolicy.load(
        {
            "rules": [
                {
                    "id": "admins-delete",
                    "tool": "demo_delete_file",
                    "principal": "admin-*",
                    "verdict": "allow",
                },
                {
                    "id": "deletes",
                    "tool": "demo_delete_file",
                    "verdict": "ask",
                    "reason": "deletes are reviewed within a minute",
                    "expires_after": 60,
                    "allowed_decisions": ["approve", "reject"],
                },
                {"id": "no-etc", "args": {"/path": "/etc/*"}, "verdict": "deny", "locked": True},
                {"id": "resets", "tool": "demo_reset_stats", "verdict": "ask", "locked": True},
            ]
        }
    )
    policy.clock = clock
    policy.when("demo_reset_stats", lambda call, tool: "allow")  # code cannot loosen the locked ask
    return policy


def graph_for(servers: McpServers, policy: ApprovalPolicy, calls: list[Any], wiring: str) -> Graph:
    def agent(state: MessagesState) -> dict[str, Any]:
        if any(isinstance(m, AIMessage) for m in state["messages"]):
            return {"messages": [AIMessage("done")]}
        return {"messages": [AIMessage("", id="ai-1", tool_calls=calls)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers, policy))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    if wiring == "gate-router":
        builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
        builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
        builder.add_edge("tools", "agent")
    else:
        builder.add_conditional_edges(
            "agent", route_through_gate(servers, policy), ["approval_gate", "tools", END]
        )
        builder.add_edge("approval_gate", "tools")
        builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=StrictSaver())


def setup(open_servers: OpenServers, calls: list[Any], wiring: str) -> tuple[DemoServer, Clock, Graph]:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "modern")})
    clock = Clock()
    return srv, clock, graph_for(servers, policy_for(clock), calls, wiring)


def approvals(out: dict[str, Any]) -> dict[str, ApprovalInterrupt]:
    return {i.value["tool_call_id"]: i.value for i in out.get("__interrupt__", [])}


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_the_payload_names_the_rule_and_the_principal_comes_from_configurable(
    open_servers: OpenServers, wiring: str
) -> None:
    calls = [call("demo_delete_file", "rm", path="todo.txt")]
    srv, clock, graph = setup(open_servers, calls, wiring)
    cfg: Any = {"configurable": {"thread_id": "ann", "user_id": "ann"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    payload = approvals(out)["rm"]
    assert payload["rule"] == "deletes"
    assert payload["reason"] == "deletes are reviewed within a minute"
    assert payload["allowed_decisions"] == ["approve", "reject"]
    assert payload["expires_at"] == clock.now + 60
    assert srv.events.counts["delete_file.commit"] == 0

    # an admin (as LangGraph Server's auth sets it, over user_id) is allowed by the first rule
    srv2, _, graph2 = setup(open_servers, calls, wiring)
    cfg2: Any = {
        "configurable": {"thread_id": "root", "langgraph_auth_user_id": "admin-ann", "user_id": "ann"}
    }
    out2 = await graph2.ainvoke({"messages": [HumanMessage("go")]}, cfg2)
    assert "__interrupt__" not in out2
    assert text_of(tool_messages(out2)["rm"]) == "Deleted todo.txt"
    assert srv2.events.counts["delete_file.commit"] == 1


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_an_approval_after_expires_after_is_a_rejection(open_servers: OpenServers, wiring: str) -> None:
    calls = [
        call("demo_delete_file", "late", path="todo.txt"),
        call("demo_delete_file", "soon", path="notes.txt"),
    ]
    srv, clock, graph = setup(open_servers, calls, wiring)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    pending = out["__interrupt__"]
    assert set(approvals(out)) == {"late", "soon"}
    clock.now += 30
    soon = [i for i in pending if i.value["tool_call_id"] == "soon"]
    out = await graph.ainvoke(resume_command(soon, decisions={"soon": {"type": "approve"}}), cfg)
    clock.now += 31  # 61 s after the question
    late = [i for i in pending if i.value["tool_call_id"] == "late"]
    out = await graph.ainvoke(resume_command(late, decisions={"late": {"type": "approve"}}), cfg)
    assert "__interrupt__" not in out
    messages = tool_messages(out)
    assert messages["late"].status == "error"
    assert "expired" in text_of(messages["late"]) and "rule 'deletes'" in text_of(messages["late"])
    assert text_of(messages["soon"]) == "Deleted notes.txt"
    assert srv.events.counts["delete_file.commit"] == 1  # only the approval given in time ran


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_a_late_rejection_is_still_a_rejection(open_servers: OpenServers, wiring: str) -> None:
    srv, clock, graph = setup(open_servers, [call("demo_delete_file", "rm", path="todo.txt")], wiring)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    clock.now += 3600
    out = await graph.ainvoke(resume_command(out["__interrupt__"], decisions={"rm": {"type": "reject"}}), cfg)
    assert "rejected" in text_of(tool_messages(out)["rm"])
    assert srv.events.counts["delete_file.commit"] == 0


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_locked_rules_hold_in_the_graph(open_servers: OpenServers, wiring: str) -> None:
    calls = [
        call("demo_read_file", "etc", path="/etc/passwd"),
        call("demo_reset_stats", "reset"),
        call("demo_read_file", "ok", path="notes.txt"),
    ]
    srv, _, graph = setup(open_servers, calls, wiring)
    cfg: Any = {"configurable": {"thread_id": "t", "user_id": "admin-ann"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    asked = approvals(out)
    assert set(asked) == {"reset"} and asked["reset"]["rule"] == "resets"  # the predicate's allow lost
    out = await graph.ainvoke(
        resume_command(out["__interrupt__"], decisions={"reset": {"type": "reject"}}), cfg
    )
    messages = tool_messages(out)
    assert "denied" in text_of(messages["etc"]) and messages["etc"].status == "error"
    assert srv.events.counts["read_file.enter"] == 1  # notes.txt only
    assert srv.events.counts["reset_stats.enter"] == 0
