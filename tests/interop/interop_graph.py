"""A scripted agent turn for the interop tier: agent → approval gate → router → McpToolNode → agent.

The "model" is a script: its first turn proposes the given tool calls, its second turn (after every call has a
ToolMessage) answers without calls, which ends the run. Nothing here talks to a model provider.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt

from langgraph_mcp import McpServers, McpToolNode, ToolCallRouter
from langgraph_mcp.graph.gate import create_approval_gate
from langgraph_mcp.graph.messages import last_ai_message
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.resume import resume_command

FINAL_ANSWER = "done"


def tool_call(name: str, args: Mapping[str, Any], call_id: str) -> ToolCall:
    return ToolCall(name=name, args=dict(args), id=call_id, type="tool_call")


def build_graph(
    servers: McpServers,
    calls: Sequence[ToolCall],
    *,
    checkpointer: BaseCheckpointSaver[Any],
    policy: ApprovalPolicy | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The standard wiring, with a scripted agent that proposes ``calls`` once and then stops."""

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:  # sync: works with invoke and ainvoke
        if any(isinstance(m, AIMessage) for m in state["messages"]):
            return {"messages": [AIMessage(FINAL_ANSWER)]}
        return {"messages": [AIMessage("", tool_calls=list(calls))]}

    def after_agent(state: MessagesState) -> str:
        ai = last_ai_message(state["messages"])
        return "gate" if ai is not None and ai.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("gate", create_approval_gate(servers, policy=policy or ApprovalPolicy()))
    builder.add_node(
        "tools", McpToolNode(servers, policy=ApprovalPolicy(tools={"*": "allow"}))
    )  # not about approvals
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", after_agent, ["gate", END])
    builder.add_conditional_edges("gate", ToolCallRouter(node="tools", otherwise="agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def approvals(out: Mapping[str, Any]) -> dict[str, Interrupt]:
    """The pending ``mcp_approval`` interrupts of a run's output, by tool_call_id."""
    pending: dict[str, Interrupt] = {}
    for item in out.get("__interrupt__", []):
        value = item.value
        assert isinstance(value, dict) and value.get("type") == "mcp_approval", value
        pending[value["tool_call_id"]] = item
    return pending


def resume_with(pending: Mapping[str, Interrupt], decisions: Mapping[str, dict[str, Any]]) -> Command[Any]:
    """The package's ``resume_command`` for decisions keyed by tool_call_id (it checks them first)."""
    assert set(decisions) == set(pending), (sorted(decisions), sorted(pending))
    command = resume_command(list(pending.values()), decisions=dict(decisions))
    assert isinstance(command.resume, dict)
    assert set(command.resume) == {pending[call_id].id for call_id in decisions}
    return command


def thread(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def start(prompt: str = "go") -> dict[str, list[AnyMessage]]:
    return {"messages": [HumanMessage(prompt)]}


def tool_messages(out: Mapping[str, Any]) -> dict[str, ToolMessage]:
    """The run's ToolMessages by tool_call_id (each call must have exactly one)."""
    found: dict[str, ToolMessage] = {}
    for message in out["messages"]:
        if isinstance(message, ToolMessage):
            assert message.tool_call_id not in found, f"two ToolMessages for {message.tool_call_id}"
            found[message.tool_call_id] = message
    return found


def text(message: BaseMessage) -> str:
    """All the text a model would see in a message."""
    if isinstance(message.content, str):
        return message.content
    parts = []
    for block in message.content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


async def run_tool_node(
    servers: McpServers, name: str, args: Mapping[str, Any], call_id: str = "c1"
) -> ToolMessage:
    """One call through ``McpToolNode`` in a minimal graph (START → tools → END, in-memory checkpointer)."""
    builder = StateGraph(MessagesState)
    builder.add_node(
        "tools", McpToolNode(servers, policy=ApprovalPolicy(tools={"*": "allow"}))
    )  # not about approvals
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    ai = AIMessage("", tool_calls=[tool_call(name, args, call_id)])
    out = await graph.ainvoke({"messages": [ai]}, thread(f"node-{call_id}"))
    assert not out.get("__interrupt__"), out.get("__interrupt__")
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage) and message.tool_call_id == call_id
    return message
