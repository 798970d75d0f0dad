"""The agent loop's fan-in: after a turn of tool calls the model runs exactly once more, once every call has its
ToolMessage, and the run ends on the model's final answer - whatever mix of steps the calls finish in.

Every documented wiring x {1, 2, 5 calls} x {no pause, one call paused on an approval, one paused on an
elicitation, all paused} x both eras, with a restart (a new ``McpServers``, graph and SQLite connection on the
same file) between pause and resume in the paused cases; then the sync and streaming entry points on a smaller
matrix. Real demo servers in process, real compiled graphs, real checkpointers.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command, Interrupt
from pydantic import Field

from langgraph_mcp import (
    ApprovalPolicy,
    McpApprovalMiddleware,
    McpServers,
    McpToolNode,
    Oversight,
    ToolCallRouter,
    ToolCallsDone,
    add_mcp_tools,
    create_approval_gate,
    resume_command,
    route_through_gate,
    route_tool_calls,
)
from langgraph_mcp.examples.demo_graph import build_graph
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.examples.scripted_model import ScriptedChatModel
from tests.support.checkpointers import open_checkpointer
from tests.support.helpers import ERAS
from tests.support.node_support import accept_all, in_process

pytestmark = pytest.mark.anyio

POLICY = ApprovalPolicy(tools={"demo_add": "ask"})
"""``demo_add`` (read-only, so allowed by default) is asked about: the approval case's call, which runs fine."""

READ = ("get_forecast", {"city": "Rome"})
"""A read-only call: allowed, no question."""
APPROVAL = ("add", {"a": 2, "b": 3})
"""Asked about by ``POLICY``."""
ELICITATION = ("book_trip", {"destination": "Rome"})
"""Allowed by the policy; its server asks for a date mid-call."""


SERVER = build_server()
"""One in-process demo server for every case (building one costs more than a case): the calls here leave no
state behind, and each ``McpServers`` gets its own session."""


def new_servers(era: str) -> McpServers:
    return McpServers({"mcpServers": {"demo": in_process(SERVER, era)}})


class CountingModel(ScriptedChatModel):
    """The scripted model with distinct call ids for repeated tools, recording what each of its runs saw."""

    runs: list[int] = Field(default_factory=list)
    """One item per run: how many calls of the last proposal had no ToolMessage yet when the model ran."""

    def _propose(self, turn: int) -> AIMessage:
        calls = [
            ToolCall(name=f"{self.prefix}{tool}", args=dict(args), id=f"call_{i}_{tool}", type="tool_call")
            for i, (tool, args) in enumerate(self.tool_calls)
        ]
        return AIMessage(content=f"{len(calls)} calls", tool_calls=calls)

    def next_message(self, messages: Sequence[BaseMessage]) -> AIMessage:
        proposal = next((m for m in reversed(messages) if isinstance(m, AIMessage) and m.tool_calls), None)
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        missing = [c for c in proposal.tool_calls if c["id"] not in answered] if proposal is not None else []
        self.runs.append(len(missing))
        return super().next_message(messages)


def calls_for(n: int, pause: str, *, gated: bool) -> list[tuple[str, dict[str, Any]]]:
    """``n`` calls: read-only ones, with the first paused (``approval``/``elicitation``) or all (``all``)."""
    if pause == "none":
        return [READ] * n
    if pause == "approval":
        return [APPROVAL] + [READ] * (n - 1)
    if pause == "elicitation":
        return [ELICITATION] + [READ] * (n - 1)
    if not gated:  # nothing asks for approval: every call pauses on a question
        return [ELICITATION] * n
    return [APPROVAL if i % 2 == 0 else ELICITATION for i in range(n)]


# ------------------------------------------------------------------------------------------------ wirings

Build = Callable[[McpServers, CountingModel, BaseCheckpointSaver[Any]], Any]


def _agent(model: CountingModel) -> Callable[[MessagesState], dict[str, Any]]:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    return agent


def plain(servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]) -> Any:
    """``route_tool_calls`` + ``McpToolNode`` + ``ToolCallsDone`` (no gate)."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _agent(model))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=saver)


def one_helper(servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]) -> Any:
    """The README's wiring: ``add_mcp_tools`` with one ``Oversight`` (the gate, the node and their edges)."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _agent(model))
    builder.add_edge(START, "agent")
    add_mcp_tools(builder, servers, Oversight(policy=POLICY))
    return builder.compile(checkpointer=saver)


def readme(
    servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any], compat: bool = False
) -> Any:
    """The hand wiring of docs/gate.md: ``route_through_gate`` + gate + ``McpToolNode`` + ``ToolCallsDone``."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _agent(model))
    builder.add_node("approval_gate", create_approval_gate(servers, POLICY, agent_chat_ui=compat))
    builder.add_node("tools", McpToolNode(servers, agent_chat_ui=compat))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges(
        "agent", route_through_gate(servers, POLICY, agent_chat_ui=compat), ["approval_gate", "tools", END]
    )
    builder.add_edge("approval_gate", "tools")
    builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=saver)


def compat(servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]) -> Any:
    """The README's Agent Chat UI wiring (``agent_chat_ui=True`` on all three parts)."""
    return readme(servers, model, saver, compat=True)


def gate_docstring(servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]) -> Any:
    """The ``approval/gate.py`` docstring's wiring: every call through the gate, then one Send per call."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _agent(model))
    builder.add_node("approval_gate", create_approval_gate(servers, POLICY))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


def demo_graph(servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]) -> Any:
    """``examples.demo_graph.build_graph``: the CLI demo's graph and Studio's ``mcp_agent``."""
    return build_graph(servers, policy=POLICY, model=model, checkpointer=saver)


def demo_graph_compat(servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]) -> Any:
    """``build_graph(agent_chat_ui=True)``: Studio's ``mcp_agent_chat``."""
    return build_graph(servers, policy=POLICY, model=model, checkpointer=saver, agent_chat_ui=True)


async def agent_with_tools(servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]) -> Any:
    """``create_agent`` with the package's LangChain tools (``servers.get_tools()``)."""
    return create_agent(model, await servers.get_tools(), checkpointer=saver)


async def agent_with_middleware(
    servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]
) -> Any:
    """``create_agent`` with the package's tools and ``McpApprovalMiddleware`` (the gate's policy per call)."""
    tools = await servers.get_tools()
    return create_agent(model, tools, middleware=[McpApprovalMiddleware(servers, POLICY)], checkpointer=saver)


def agent_with_tools_sync(servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]) -> Any:
    return create_agent(model, servers.run_sync(servers.get_tools), checkpointer=saver)


WIRINGS: dict[str, Any] = {
    "plain": plain,
    "one_helper": one_helper,
    "readme": readme,
    "gate_docstring": gate_docstring,
    "compat": compat,
    "demo_graph": demo_graph,
    "demo_graph_compat": demo_graph_compat,
    "create_agent": agent_with_tools,
    "create_agent_middleware": agent_with_middleware,
}
GATED = {
    "one_helper",
    "readme",
    "gate_docstring",
    "compat",
    "demo_graph",
    "demo_graph_compat",
    "create_agent_middleware",
}
"""The wirings with an approval gate (the others have nothing that asks for approval)."""


def cases() -> Iterator[Any]:
    for wiring in WIRINGS:
        for n in (1, 2, 5):
            for pause in ("none", "approval", "elicitation", "all"):
                if pause == "approval" and wiring not in GATED:
                    continue
                for era in ERAS:
                    # Paused cases resume after a restart; the same-process resume (a legacy call still
                    # parked) with 5 calls here, with 2 in test_sync_invoke_and_stream and test_astream.
                    restarts = (False,) if pause == "none" else (True,) if n < 5 else (False, True)
                    for restart in restarts:
                        name = f"{wiring}-{n}-{pause}-{era}{'-restart' if restart else ''}"
                        yield pytest.param(wiring, n, pause, era, restart, id=name)


# ------------------------------------------------------------------------------------------------ driving


def answers_for(interrupts: Sequence[Interrupt]) -> Command[Any]:
    """Approve every pending approval and accept every pending question, in one ``Command``."""
    decisions: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    for item in interrupts:
        if item.value["type"] == "mcp_approval":
            decisions[item.value["tool_call_id"]] = {"type": "approve"}
        else:
            answers[item.value["tool_call_id"]] = accept_all(item)
    return resume_command(list(interrupts), decisions=decisions, answers=answers)


def check_turn(out: dict[str, Any], model: CountingModel, n: int) -> None:
    """The model ran twice (proposal, then once after every ToolMessage) and the run ended on its answer."""
    assert model.runs == [0, 0], f"model runs (calls unanswered at each run): {model.runs}"
    messages = out["messages"]
    final = messages[-1]
    assert isinstance(final, AIMessage) and not final.tool_calls, f"the run ended on {type(final).__name__}"
    assert final.content.startswith("Here is what happened:")
    assert "no result" not in final.content and "(error)" not in final.content, final.content
    proposal = next(m for m in messages if isinstance(m, AIMessage) and m.tool_calls)
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert sorted(answered) == sorted(c["id"] for c in proposal.tool_calls) and len(answered) == n


async def build(
    wiring: str, servers: McpServers, model: CountingModel, saver: BaseCheckpointSaver[Any]
) -> Any:
    graph = WIRINGS[wiring](servers, model, saver)
    return await graph if wiring.startswith("create_agent") else graph


@pytest.mark.parametrize(("wiring", "n", "pause", "era", "restart"), list(cases()))
async def test_model_runs_once_after_every_call_has_its_tool_message(
    tmp_path: Path, wiring: str, n: int, pause: str, era: str, restart: bool
) -> None:
    model = CountingModel(tool_calls=calls_for(n, pause, gated=wiring in GATED))
    config: Any = {"configurable": {"thread_id": "t"}}
    db = tmp_path / "threads.sqlite"
    servers = new_servers(era)
    try:
        async with open_checkpointer("sqlite", db) as saver:
            graph = await build(wiring, servers, model, saver)
            out = await graph.ainvoke({"messages": [HumanMessage("go")]}, config)
            if pause == "none":
                assert "__interrupt__" not in out
            else:
                assert out.get("__interrupt__"), "a paused case did not pause"
            while out.get("__interrupt__") and not restart:
                out = await graph.ainvoke(answers_for(out["__interrupt__"]), config)
        if restart:  # a new process in effect: new connections, a new graph, the checkpoint file reopened
            await servers.aclose()
            servers = new_servers(era)
            async with open_checkpointer("sqlite", db) as saver:
                graph = await build(wiring, servers, model, saver)
                while out.get("__interrupt__"):
                    out = await graph.ainvoke(answers_for(out["__interrupt__"]), config)
        check_turn(out, model, n)
    finally:
        await servers.aclose()


# ------------------------------------------------------------------------------------------------ entry points

SYNC_WIRINGS: dict[str, Build] = {
    "plain": plain,
    "one_helper": one_helper,
    "readme": readme,
    "gate_docstring": gate_docstring,
    "compat": compat,
    "create_agent": agent_with_tools_sync,
}


def _last_values(chunks: Iterator[Any]) -> dict[str, Any]:
    """The last ``values`` chunk of a stream, with the run's interrupts (``updates``) folded in."""
    out: dict[str, Any] = {}
    interrupts: list[Interrupt] = []
    for mode, chunk in chunks:
        if mode == "values":
            out = dict(chunk)
        elif mode == "updates" and "__interrupt__" in chunk:
            interrupts.extend(chunk["__interrupt__"])
    if interrupts:
        out["__interrupt__"] = interrupts
    return out


async def _alast_values(chunks: AsyncIterator[Any]) -> dict[str, Any]:
    return _last_values(iter([c async for c in chunks]))


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("pause", ["none", "all"])
@pytest.mark.parametrize("driver", ["invoke", "stream"])
@pytest.mark.parametrize("wiring", list(SYNC_WIRINGS))
def test_sync_invoke_and_stream(tmp_path: Path, wiring: str, driver: str, pause: str, era: str) -> None:
    model = CountingModel(tool_calls=calls_for(2, pause, gated=wiring in GATED))
    config: Any = {"configurable": {"thread_id": "t"}}
    servers = new_servers(era)
    try:
        with contextlib.closing(sqlite3.connect(tmp_path / "t.sqlite", check_same_thread=False)) as conn:
            graph = SYNC_WIRINGS[wiring](servers, model, SqliteSaver(conn))

            def run(value: Any) -> dict[str, Any]:
                if driver == "invoke":
                    return dict(graph.invoke(value, config))
                return _last_values(graph.stream(value, config, stream_mode=["values", "updates"]))

            out = run({"messages": [HumanMessage("go")]})
            assert bool(out.get("__interrupt__")) == (pause != "none")
            while out.get("__interrupt__"):
                out = run(answers_for(out["__interrupt__"]))
        check_turn(out, model, 2)
    finally:
        servers.close()


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("pause", ["none", "elicitation", "all"])
@pytest.mark.parametrize("wiring", list(WIRINGS))
async def test_astream(wiring: str, pause: str, era: str, checkpointer: BaseCheckpointSaver[Any]) -> None:
    model = CountingModel(tool_calls=calls_for(2, pause, gated=wiring in GATED))
    config: Any = {"configurable": {"thread_id": "t"}}
    servers = new_servers(era)
    try:
        graph = WIRINGS[wiring](servers, model, checkpointer)
        if wiring.startswith("create_agent"):
            graph = await graph

        async def run(value: Any) -> dict[str, Any]:
            return await _alast_values(graph.astream(value, config, stream_mode=["values", "updates"]))

        out = await run({"messages": [HumanMessage("go")]})
        assert bool(out.get("__interrupt__")) == (pause != "none")
        while out.get("__interrupt__"):
            out = await run(answers_for(out["__interrupt__"]))
        check_turn(out, model, 2)
    finally:
        await servers.aclose()
