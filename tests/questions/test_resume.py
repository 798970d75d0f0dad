"""``resume_command`` and the pending-interrupt helpers: unit checks, real graphs, a two-process resume."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command, GraphOutput, Interrupt, interrupt

from langgraph_mcp import McpServers, McpToolNode, ResumeError, ToolCallRouter
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.graph.gate import create_approval_gate
from langgraph_mcp.payloads import ApprovalInterrupt, ElicitationInterrupt
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.resume import (
    PendingMcpInterrupt,
    apending_for_thread,
    pending_for_thread,
    pending_interrupts,
    resume_command,
)
from tests.support import gate_two_process_child as child
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import HANG_GUARD, OpenServers

CHILD = Path(__file__).resolve().parents[1] / "support" / "gate_two_process_child.py"

ID_A, ID_B, ID_C, ID_D = ("a" * 32, "b" * 32, "c" * 32, "d" * 32)


# ------------------------------------------------------------------------------------------------ fixtures


def approval(call_id: str, *, compat: bool = False, allowed: list[Any] | None = None) -> ApprovalInterrupt:
    payload: ApprovalInterrupt = {
        "type": "mcp_approval",
        "tool_call_id": call_id,
        "server": "demo",
        "tool": "delete_file",
        "published_name": "demo_delete_file",
        "arguments": {"path": "x"},
        "hints": None,
        "reason": "destructiveHint (declared)",
        "allowed_decisions": allowed or ["approve", "edit", "reject", "respond"],
        "description": "delete x?",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
    if compat:
        payload["action_requests"] = [{"name": "demo_delete_file", "args": {"path": "x"}}]
        payload["review_configs"] = [{"action_name": "demo_delete_file", "allowed_decisions": ["approve"]}]
    return payload


def elicitation(call_id: str) -> ElicitationInterrupt:
    return {
        "type": "mcp_elicitation",
        "tool_call_id": call_id,
        "server": "demo",
        "tool": "book_trip",
        "published_name": "demo_book_trip",
        "arguments": {"destination": "Rome"},
        "round": 1,
        "requests": {
            "when": {
                "mode": "form",
                "message": "When?",
                "requested_schema": {
                    "type": "object",
                    "properties": {
                        "date": {"type": "string", "format": "date"},
                        "seats": {"type": "integer", "default": 1},
                    },
                    "required": ["date"],
                },
                "sensitive": [],
            },
            "consent": {
                "mode": "url",
                "message": "Pay",
                "url": "https://pay.example.com/x",
                "host": "pay.example.com",
            },
        },
    }


ANSWERS = {"when": {"action": "accept", "content": {"date": "2026-10-01"}}, "consent": {"action": "decline"}}


@pytest.fixture
def pending() -> list[Interrupt]:
    return [
        Interrupt(value=approval("c1"), id=ID_A),
        Interrupt(value=elicitation("c2"), id=ID_B),
        Interrupt(value=approval("c2", compat=True), id=ID_C),  # same call, other kind
        Interrupt(value={"question": "not an MCP interrupt"}, id=ID_D),
    ]


# ------------------------------------------------------------------------------------------------ unit


def test_pending_interrupts_is_typed_and_skips_other_interrupts(pending: list[Interrupt]) -> None:
    items = pending_interrupts(pending)
    assert [(p.interrupt_id, p.kind, p.tool_call_id) for p in items] == [
        (ID_A, "approval", "c1"),
        (ID_B, "elicitation", "c2"),
        (ID_C, "approval", "c2"),
    ]
    assert items[0].approval["tool"] == "delete_file" and not items[0].is_card
    assert items[1].elicitation["round"] == 1
    assert items[2].is_card
    with pytest.raises(TypeError):
        _ = items[0].elicitation


def test_pending_input_shapes(pending: list[Interrupt]) -> None:
    expected = [ID_A, ID_B, ID_C]

    def ids(value: object) -> list[str]:
        return [p.interrupt_id for p in pending_interrupts(value)]

    assert ids(tuple(pending)) == expected
    assert ids({"messages": [], "__interrupt__": pending}) == expected  # invoke output (v1)
    assert ids(GraphOutput(value={}, interrupts=tuple(pending))) == expected  # version="v2"
    assert ids([{"id": i.id, "value": i.value} for i in pending]) == expected  # LangGraph SDK dicts
    assert ids(pending[0]) == [ID_A]
    assert ids(pending + pending) == expected  # each once
    assert ids([]) == []
    assert ids(pending_interrupts(pending)) == expected  # its own output
    with pytest.raises(TypeError, match="pending must be interrupts"):
        pending_interrupts("nope")
    sdk_state = {"values": {}, "interrupts": [{"id": i.id, "value": i.value} for i in pending], "tasks": []}
    assert ids(sdk_state) == expected  # the LangGraph SDK's thread state
    # A finished run's output has no "__interrupt__": nothing is pending, so `while pending_interrupts(out):` ends.
    assert ids({"messages": []}) == []


def test_one_command_for_both_kinds(pending: list[Interrupt]) -> None:
    command = resume_command(
        pending,
        decisions={
            "c1": {"type": "edit", "edited_action": {"name": "demo_delete_file", "args": {"path": "y"}}}
        },
        answers={"c2": ANSWERS},
    )
    assert isinstance(command, Command)
    assert command.resume == {
        ID_A: {"type": "edit", "edited_action": {"name": "demo_delete_file", "args": {"path": "y"}}},
        # normalized: the form's default filled in
        ID_B: {
            "when": {"action": "accept", "content": {"date": "2026-10-01", "seats": 1}},
            "consent": {"action": "decline"},
        },
    }
    # The same tool call's approval, told apart by the argument; compat payloads get {"decisions": [...]}.
    command = resume_command(pending, decisions={"c2": {"type": "approve"}})
    assert command.resume == {ID_C: {"decisions": [{"type": "approve"}]}}
    # Already in HITLResponse shape, or keyed by interrupt id: same result.
    assert (
        resume_command(pending, decisions={ID_C: {"decisions": [{"type": "approve"}]}}).resume
        == command.resume
    )
    assert list(resume_command(pending, answers={ID_B: ANSWERS}).resume) == [ID_B]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"decisions": {"c9": {"type": "approve"}}},
            r"no pending approval for tool call 'c9'; pending: 'c1'",
        ),
        (
            {"decisions": {"e" * 32: {"type": "approve"}}},
            r"interrupt e{32} is not pending \(already answered",
        ),
        (
            {"answers": {"c1": ANSWERS}},
            r"tool call 'c1' has no pending elicitation; it is waiting for an approval",
        ),
        ({"decisions": {ID_B: {"type": "approve"}}}, r"interrupt b{32} \(tool call 'c2'\) is an elicitation"),
        ({"answers": {ID_A: ANSWERS}}, r"is an approval, not an elicitation; give its value in decisions="),
        ({"answers": {ID_D: {}}}, r"interrupt d{32} is not pending"),
        (
            {"answers": {"c2": {"when": ANSWERS["when"]}}},
            r"answers\['c2'\] \(request key 'consent'\).*no answer for 'consent'",
        ),
        ({"answers": {"c2": {**ANSWERS, "extra": {"action": "cancel"}}}}, r"request key 'extra'"),
        (
            {"answers": {"c2": {**ANSWERS, "when": {"action": "accept", "content": {"date": "soon"}}}}},
            r"answers\['c2'\] \(request key 'when'\)",
        ),
        (
            {"decisions": {"c1": {"type": "maybe"}}},
            r"decisions\['c1'\]: tool call 'c1' \(demo_delete_file\): unknown decision",
        ),
        (
            {
                "decisions": {
                    "c1": {"type": "edit", "edited_action": {"name": "demo_delete_file", "args": {}}}
                }
            },
            r"decisions\['c1'\].*edited arguments do not match.*'path' is a required property",
        ),
        (
            {"decisions": {"c1": {"type": "approve"}, ID_A: {"type": "reject"}}},
            r"already answered by decisions\['c1'\]",
        ),
        ({"decisions": {"c2": {"decisions": [{"type": "approve"}] * 2}}}, r"exactly one decision"),
        ({}, r"nothing to resume"),
        ({"decisions": {}}, r"nothing to resume"),
        ({"decisions": [("c1", {"type": "approve"})]}, r"decisions must be a mapping"),
    ],
)
def test_resume_errors(pending: list[Interrupt], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ResumeError, match=message):
        resume_command(pending, **kwargs)


def test_disallowed_decision_type() -> None:
    pending = [Interrupt(value=approval("c1", allowed=["approve", "reject"]), id=ID_A)]
    with pytest.raises(ResumeError, match="decision type 'respond' is not allowed; allowed: approve, reject"):
        resume_command(pending, decisions={"c1": {"type": "respond", "message": "hi"}})


def test_two_pending_of_one_kind_for_one_call_need_the_interrupt_id() -> None:
    pending = [Interrupt(value=approval("c1"), id=ID_A), Interrupt(value=approval("c1"), id=ID_B)]
    with pytest.raises(ResumeError, match=r"has 2 pending approvals.*key the value by interrupt id"):
        resume_command(pending, decisions={"c1": {"type": "approve"}})
    assert resume_command(pending, decisions={ID_B: {"type": "approve"}}).resume == {
        ID_B: {"type": "approve"}
    }


# ------------------------------------------------------------------------------------------------ real graphs


def agent(state: MessagesState) -> dict[str, list[AnyMessage]]:
    if any(isinstance(m, AIMessage) for m in state["messages"]):
        return {"messages": [AIMessage("done")]}
    calls: list[ToolCall] = [
        {"name": "demo_delete_file", "args": {"path": "todo.txt"}, "id": "c-delete", "type": "tool_call"},
        {"name": "demo_delete_file", "args": {"path": "notes.txt"}, "id": "c-delete-2", "type": "tool_call"},
        {"name": "demo_book_trip", "args": {"destination": "Rome"}, "id": "c-trip", "type": "tool_call"},
    ]
    return {"messages": [AIMessage("", id="ai-1", tool_calls=calls)]}


@pytest.fixture
def graph_and_servers(open_servers: OpenServers) -> tuple[CompiledStateGraph[Any, Any, Any, Any], McpServers]:
    servers = open_servers({"demo": {"transport": "in_process", "server": build_server()}})
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node(
        "approval_gate", create_approval_gate(servers, ApprovalPolicy(tools={"demo_book_trip": "allow"}))
    )
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=StrictSaver()), servers


@pytest.mark.anyio
async def test_stale_unknown_and_missing_keys_on_a_real_graph(
    graph_and_servers: tuple[CompiledStateGraph[Any, Any, Any, Any], McpServers],
) -> None:
    graph, _ = graph_and_servers
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg, version="v2")
    assert isinstance(out, GraphOutput)
    first = {p.tool_call_id: p for p in pending_interrupts(out)}
    assert set(first) == {"c-delete", "c-delete-2"}

    # The same pending set, read every way: invoke output, parent snapshot, nested snapshot, thread helpers.
    def ids(items: list[PendingMcpInterrupt]) -> set[str]:
        return {p.interrupt_id for p in items}

    expected = ids(list(first.values()))
    assert ids(pending_interrupts(graph.get_state(cfg))) == expected
    nested = graph.get_state(cfg, subgraphs=True)
    assert nested.tasks[0].state.interrupts  # the gate's own snapshot has them too (type: StateSnapshot)
    assert ids(pending_interrupts(nested)) == expected
    assert ids(pending_for_thread(graph, cfg)) == expected
    assert ids(await apending_for_thread(graph, cfg)) == expected

    with pytest.raises(ResumeError, match="no pending approval for tool call 'c-nope'"):
        resume_command(out, decisions={"c-nope": {"type": "approve"}})

    # Answer one approval only: the other stays pending with the same id.
    out = await graph.ainvoke(
        resume_command(out, decisions={"c-delete": {"type": "approve"}}), cfg, version="v2"
    )
    assert [p.interrupt_id for p in pending_interrupts(out)] == [first["c-delete-2"].interrupt_id]
    stale = first["c-delete"].interrupt_id
    with pytest.raises(ResumeError, match=f"interrupt {stale} is not pending \\(already answered"):
        resume_command(graph.get_state(cfg), decisions={stale: {"type": "approve"}})
    with pytest.raises(ResumeError, match="no pending approval for tool call 'c-delete'"):
        resume_command(graph.get_state(cfg), decisions={"c-delete": {"type": "approve"}})

    out = await graph.ainvoke(
        resume_command(out, decisions={"c-delete-2": {"type": "reject"}}), cfg, version="v2"
    )
    [question] = pending_interrupts(out)
    assert (question.kind, question.tool_call_id) == ("elicitation", "c-trip")
    [key] = question.elicitation["requests"]
    with pytest.raises(ResumeError, match=f"answers\\['c-trip'\\] \\(request key '{key}'\\).*no answer for"):
        resume_command(out, answers={"c-trip": {}})
    with pytest.raises(
        ResumeError, match="tool call 'c-trip' has no pending approval; it is waiting for an elicitation"
    ):
        resume_command(out, decisions={"c-trip": {"type": "approve"}})
    out = await graph.ainvoke(
        resume_command(
            out, answers={"c-trip": {key: {"action": "accept", "content": {"date": "2026-05-01"}}}}
        ),
        cfg,
        version="v2",
    )
    assert pending_interrupts(out) == []
    results = {m.tool_call_id: m for m in out.value["messages"] if isinstance(m, ToolMessage)}
    assert results["c-trip"].text == "Booked Rome on 2026-05-01"
    assert results["c-delete-2"].status == "error"


def test_interrupts_of_other_nodes_are_ignored(sync_checkpointer: BaseCheckpointSaver[Any]) -> None:
    def ask(state: MessagesState) -> dict[str, list[AnyMessage]]:
        interrupt("plain question")
        return {"messages": []}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=sync_checkpointer)
    cfg: Any = {"configurable": {"thread_id": "x"}}
    out = graph.invoke({"messages": []}, cfg)
    assert len(out["__interrupt__"]) == 1
    assert pending_interrupts(out) == [] and pending_for_thread(graph, cfg) == []
    with pytest.raises(ResumeError, match="nothing is pending"):
        resume_command(out, decisions={"c1": {"type": "approve"}})


# -------------------------------------------------------------------------------------------- acceptance 4


def test_pause_in_one_process_resume_in_another(tmp_path: Path) -> None:
    """Approvals paused here (stdio server, SqliteSaver) are resumed by a new process; its question here."""
    db = str(tmp_path / "checkpoints.sqlite")
    cfg: Any = {"configurable": {"thread_id": "two-process"}}

    servers = child.stdio_servers()
    try:
        with sqlite3.connect(db, check_same_thread=False) as conn:
            graph = child.build_graph(servers, SqliteSaver(conn))
            out = graph.invoke({"messages": [HumanMessage("go")]}, cfg)
            paused = {p.tool_call_id: p.interrupt_id for p in pending_interrupts(out)}
    finally:
        servers.close()
    assert set(paused) == {"c-delete", "c-write"}

    edit = {
        "type": "edit",
        "edited_action": {"name": "demo_write_file", "args": {"path": "scratch/y", "content": "yy"}},
    }
    values = {"decisions": {"c-delete": {"type": "approve"}, "c-write": edit}}
    proc = subprocess.run(
        [sys.executable, str(CHILD), db, "two-process", json.dumps(values)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(result["found"]) == sorted([[i, "approval", c] for c, i in paused.items()])  # same ids
    assert result["ai"] == {
        "id": "ai-1",
        "calls": [
            ["c-delete", {"path": "todo.txt"}],
            ["c-write", {"path": "scratch/y", "content": "yy"}],
            ["c-trip", {"destination": "Oslo"}],
        ],
    }
    assert result["tool_messages"] == {
        "c-delete": ["success", "Deleted todo.txt"],
        "c-write": ["success", "Wrote 2 characters to scratch/y"],
    }
    assert result["files"] == {"result": ["notes.txt", "scratch/y"]}  # the child's server ran the edited call
    [[question_id, kind, call_id]] = result["left"]
    assert (kind, call_id) == ("elicitation", "c-trip")

    # Back in this process (a third server process): answer the question the child's run paused on.
    servers = child.stdio_servers()
    try:
        with sqlite3.connect(db, check_same_thread=False) as conn:
            graph = child.build_graph(servers, SqliteSaver(conn))
            [pending] = pending_for_thread(graph, cfg)
            assert pending.interrupt_id == question_id
            [key] = pending.elicitation["requests"]
            answer = {key: {"action": "accept", "content": {"date": "2026-12-24"}}}
            out = graph.invoke(resume_command(graph.get_state(cfg), answers={"c-trip": answer}), cfg)
    finally:
        servers.close()
    assert "__interrupt__" not in out
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["c-trip"].text == "Booked Oslo on 2026-12-24"
    assert isinstance(out["messages"][-1], AIMessage) and out["messages"][-1].content == "done"
