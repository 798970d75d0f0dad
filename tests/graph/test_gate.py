"""The approval gate in real compiled graphs: bundled demo servers in-process, real checkpointers."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command, Interrupt
from pydantic import ValidationError

from langgraph_mcp import McpServers, McpToolNode, ToolCallRouter
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from langgraph_mcp.graph.gate import approval_payload, create_approval_gate
from langgraph_mcp.policy.policy import ApprovalPolicy, Verdict
from langgraph_mcp.questions.agent_chat_ui import AGENT_CHAT_UI
from langgraph_mcp.questions.resume import pending_for_thread, pending_interrupts, resume_command
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import OpenServers, OpenServersSync

Graph = CompiledStateGraph[Any, Any, Any, Any]


# ------------------------------------------------------------------------------------------------ helpers


class Demo:
    """Two in-process demo servers: ``demo`` (trusted) and ``untrusted`` (trust_annotations=False)."""

    def __init__(self, make: OpenServers | OpenServersSync) -> None:
        self.demo: DemoServer = build_server()
        self.untrusted: DemoServer = build_server("untrusted")
        self.servers = make(
            {
                "demo": {"transport": "in_process", "server": self.demo},
                "untrusted": {
                    "transport": "in_process",
                    "server": self.untrusted,
                    "trust_annotations": False,
                },
            }
        )


@pytest.fixture
def demo(open_servers: OpenServers) -> Demo:
    return Demo(open_servers)


@pytest.fixture
def sync_demo(open_servers_sync: OpenServersSync) -> Demo:
    return Demo(open_servers_sync)


def call(name: str, call_id: str, **args: Any) -> ToolCall:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def scripted(*calls: ToolCall) -> Callable[[MessagesState], dict[str, list[AnyMessage]]]:
    """A model that makes ``calls`` on its first turn and then says it is done."""

    def agent(state: MessagesState) -> dict[str, list[AnyMessage]]:
        if any(isinstance(m, AIMessage) for m in state["messages"]):
            return {"messages": [AIMessage("done")]}
        return {"messages": [AIMessage("", id="ai-1", tool_calls=list(calls))]}

    return agent


def build_graph(
    servers: McpServers,
    policy: ApprovalPolicy | None,
    agent: Callable[[MessagesState], dict[str, list[AnyMessage]]],
    *,
    agent_chat_ui: bool = False,
) -> Graph:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers, policy, agent_chat_ui=agent_chat_ui))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=StrictSaver())


def outside_scratch(c: ToolCall, tool: Any) -> str | None:
    """Argument predicate: writes outside ``scratch/`` need a human."""
    return None if str(c["args"].get("path", "")).startswith("scratch/") else "ask"


def five_call_policy() -> ApprovalPolicy:
    policy = ApprovalPolicy(tools={"demo_book_trip": "allow"})
    policy.when("demo_write_file", outside_scratch)
    return policy


def by_call(interrupts: list[Interrupt]) -> dict[str, Interrupt]:
    return {i.value["tool_call_id"]: i for i in interrupts}


def tool_messages(messages: list[AnyMessage]) -> dict[str, ToolMessage]:
    found: dict[str, ToolMessage] = {}
    for m in messages:
        if isinstance(m, ToolMessage):
            assert m.tool_call_id not in found, f"two ToolMessages for {m.tool_call_id}"
            found[m.tool_call_id] = m
    return found


def text(message: ToolMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)


def config(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


# -------------------------------------------------------------------------------------------- acceptance 1


@pytest.mark.anyio
async def test_five_calls_gate_router_tool_node(demo: Demo) -> None:
    """Read-only passes, three calls pause in their own tasks, one Command decides them all, then a form."""
    graph = build_graph(
        demo.servers,
        five_call_policy(),
        scripted(
            call("demo_read_file", "c-read", path="notes.txt"),
            call("demo_delete_file", "c-delete", path="todo.txt"),
            call("untrusted_read_file", "c-untrusted", path="notes.txt"),
            call("demo_book_trip", "c-trip", destination="Rome"),
            call("demo_write_file", "c-write", path="etc/motd", content="hello"),
        ),
    )
    cfg = config()
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)

    # Three approvals, each in its own task: distinct ids. The read-only call and the trip aren't asked about.
    pending = by_call(out["__interrupt__"])
    assert set(pending) == {"c-delete", "c-untrusted", "c-write"}
    assert len({i.id for i in pending.values()}) == 3
    assert all(i.value["type"] == "mcp_approval" for i in pending.values())

    delete = pending["c-delete"].value
    assert delete["server"] == "demo" and delete["tool"] == "delete_file"
    assert delete["published_name"] == "demo_delete_file"
    assert delete["arguments"] == {"path": "todo.txt"}
    assert delete["reason"] == "destructiveHint (declared)"
    assert delete["hints"]["effective"]["destructiveHint"] is True
    assert delete["hints"]["declared"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
    }
    assert delete["allowed_decisions"] == ["approve", "edit", "reject", "respond"]
    assert delete["input_schema"]["required"] == ["path"]
    assert "demo_delete_file" in delete["description"]
    assert "action_requests" not in delete  # not compat mode
    assert (
        pending["c-untrusted"].value["reason"]
        == "server 'untrusted' is not trusted: its annotations are ignored"
    )
    assert pending["c-untrusted"].value["hints"]["declared"]["readOnlyHint"] is True
    assert pending["c-write"].value["reason"] == "rule outside_scratch for 'demo_write_file'"
    # The response schema is surfaced to clients (JSON Schema of the allowed decisions).
    assert pending["c-delete"].response_schema is not None

    # Subgraph interrupts are listed on the parent snapshot and by pending_for_thread.
    snapshot = graph.get_state(cfg)
    assert {i.id for i in snapshot.interrupts} == {i.id for i in pending.values()}
    assert snapshot.next == ("approval_gate",)
    assert {p.tool_call_id for p in pending_for_thread(graph, cfg)} == set(pending)
    # Nothing ran yet: every call of the turn waits for the gate.
    assert demo.demo.events.snapshot() == {}

    command = resume_command(
        out["__interrupt__"],
        decisions={
            "c-delete": {"type": "approve"},
            "c-write": {
                "type": "edit",
                "edited_action": {
                    "name": "demo_write_file",
                    "args": {"path": "scratch/motd", "content": "hi!"},
                },
            },
            "c-untrusted": {"type": "reject", "message": "that server is not trusted"},
        },
    )
    out = await graph.ainvoke(command, cfg)

    # Approved calls ran; the trip passed the gate and now asks for a date (an elicitation in the tool node).
    [question] = pending_interrupts(out)
    assert (question.kind, question.tool_call_id) == ("elicitation", "c-trip")
    ai = next(m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai.id == "ai-1"
    edited = next(c for c in ai.tool_calls if c["id"] == "c-write")
    assert edited["args"] == {"path": "scratch/motd", "content": "hi!"}
    assert ai.response_metadata["mcp_approval_edits"] == {"c-write": {"path": "etc/motd", "content": "hello"}}
    assert [m.id for m in out["messages"]].count("ai-1") == 1

    [key] = question.elicitation["requests"]
    out = await graph.ainvoke(
        resume_command(
            out, answers={"c-trip": {key: {"action": "accept", "content": {"date": "2026-10-01"}}}}
        ),
        cfg,
    )
    assert "__interrupt__" not in out
    results = tool_messages(out["messages"])
    assert set(results) == {"c-read", "c-delete", "c-untrusted", "c-trip", "c-write"}
    assert text(results["c-read"]) == "Remember: LangGraph + MCP.\n"
    assert text(results["c-delete"]) == "Deleted todo.txt"
    assert text(results["c-write"]) == "Wrote 3 characters to scratch/motd"
    assert text(results["c-trip"]) == "Booked Rome on 2026-10-01"
    rejected = results["c-untrusted"]
    assert rejected.status == "error"
    assert "rejected" in text(rejected) and "that server is not trusted" in text(rejected)
    assert all(results[c].status == "success" for c in ("c-read", "c-delete", "c-write", "c-trip"))
    assert isinstance(out["messages"][-1], AIMessage) and out["messages"][-1].content == "done"

    # The server received the edited arguments, and nothing else ran.
    assert demo.demo.workspace == {"notes.txt": "Remember: LangGraph + MCP.\n", "scratch/motd": "hi!"}
    counts = demo.demo.events.snapshot()
    assert counts["write_file.commit"] == 1 and counts["delete_file.commit"] == 1
    assert counts["read_file.enter"] == 1 and counts["book_trip.commit"] == 1
    assert demo.untrusted.events.snapshot() == {}


# -------------------------------------------------------------------------------------------- acceptance 2


@pytest.mark.anyio
async def test_bad_decisions_are_refused_before_saving(demo: Demo) -> None:
    policy = ApprovalPolicy(
        tools={"demo_delete_file": {"verdict": "ask", "allowed_decisions": ["approve", "reject"]}}
    )
    graph = build_graph(
        demo.servers,
        policy,
        scripted(
            call("demo_delete_file", "c-delete", path="todo.txt"),
            call("demo_move_file", "c-move", src="notes.txt", dst="old/notes.txt"),
        ),
    )
    cfg = config()
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    pending = by_call(out["__interrupt__"])
    assert pending["c-move"].value["reason"] == "destructiveHint (spec default)"  # no annotations at all
    assert pending["c-delete"].value["allowed_decisions"] == ["approve", "reject"]
    delete_id, move_id = pending["c-delete"].id, pending["c-move"].id

    bad_edit = {"type": "edit", "edited_action": {"name": "demo_move_file", "args": {"src": 1}}}
    with pytest.raises(ValidationError, match="c-move"):
        await graph.ainvoke(Command(resume={move_id: bad_edit}), cfg)
    with pytest.raises(ValidationError, match="not allowed"):
        await graph.ainvoke(Command(resume={delete_id: {"type": "respond", "message": "no"}}), cfg)
    renamed = {
        "type": "edit",
        "edited_action": {"name": "demo_delete_file", "args": {"src": "a", "dst": "b"}},
    }
    with pytest.raises(ValidationError, match="must stay"):
        await graph.ainvoke(Command(resume={move_id: renamed}), cfg)

    # Nothing was saved: the same interrupts are still pending, nothing ran.
    assert {i.id for i in graph.get_state(cfg).interrupts} == {delete_id, move_id}
    assert demo.demo.events.snapshot() == {}

    good_edit = {
        "type": "edit",
        "edited_action": {"name": "demo_move_file", "args": {"src": "notes.txt", "dst": "n.txt"}},
    }
    out = await graph.ainvoke(Command(resume={move_id: good_edit, delete_id: {"type": "reject"}}), cfg)
    results = tool_messages(out["messages"])
    assert text(results["c-move"]) == "Moved notes.txt to n.txt"
    assert results["c-delete"].status == "error" and "rejected" in text(results["c-delete"])
    assert sorted(demo.demo.workspace) == ["n.txt", "todo.txt"]


# ------------------------------------------------------------------------------------------------ decisions


@pytest.mark.anyio
async def test_respond_deny_and_allowed_calls(demo: Demo) -> None:
    policy = ApprovalPolicy(tools={"demo_move_file": "deny"})
    graph = build_graph(
        demo.servers,
        policy,
        scripted(
            call("demo_delete_file", "c-delete", path="todo.txt"),
            call("demo_move_file", "c-move", src="notes.txt", dst="x.txt"),
            call("demo_write_file", "c-write", path="a.txt", content="A"),  # non-destructive write: allowed
            call("demo_list_files", "c-list"),
        ),
    )
    cfg = config()
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    assert [i.value["tool_call_id"] for i in out["__interrupt__"]] == ["c-delete"]  # deny: nobody asked
    out = await graph.ainvoke(
        resume_command(out, decisions={"c-delete": {"type": "respond", "message": "Pretend it is gone."}}),
        cfg,
    )
    results = tool_messages(out["messages"])
    assert results["c-delete"].status == "success" and text(results["c-delete"]) == "Pretend it is gone."
    assert results["c-move"].status == "error"
    assert "denied" in text(results["c-move"]) and "policy override 'demo_move_file': deny" in text(
        results["c-move"]
    )
    assert text(results["c-write"]) == "Wrote 1 characters to a.txt"
    assert set(demo.demo.workspace) == {"notes.txt", "todo.txt", "a.txt"}  # neither delete nor move ran
    counts = demo.demo.events.snapshot()
    assert "delete_file.enter" not in counts and "move_file.enter" not in counts


@pytest.mark.anyio
async def test_every_call_answered_by_the_gate_goes_back_to_the_model(demo: Demo) -> None:
    graph = build_graph(demo.servers, None, scripted(call("demo_delete_file", "c-delete", path="todo.txt")))
    cfg = config()
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    out = await graph.ainvoke(resume_command(out, decisions={"c-delete": {"type": "reject"}}), cfg)
    kinds = [type(m).__name__ for m in out["messages"]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert (
        text(out["messages"][2])
        == "A human reviewer rejected this call to 'demo_delete_file'; it was not run."
    )
    assert "todo.txt" in demo.demo.workspace


@pytest.mark.anyio
async def test_parallel_edits_of_one_message_merge(demo: Demo) -> None:
    """Three edits of three calls of one AIMessage, decided in one Command: all land in the message."""
    policy = ApprovalPolicy(ask_writes=True)
    graph = build_graph(
        demo.servers,
        policy,
        scripted(
            call("demo_write_file", "w1", path="one.txt", content="1"),
            call("demo_write_file", "w2", path="two.txt", content="2"),
            call("demo_read_file", "r", path="notes.txt"),
            call("demo_write_file", "w3", path="three.txt", content="3"),
        ),
    )
    cfg = config()
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    assert len(out["__interrupt__"]) == 3

    def edit(path: str, content: str) -> dict[str, Any]:
        return {
            "type": "edit",
            "edited_action": {"name": "demo_write_file", "args": {"path": path, "content": content}},
        }

    out = await graph.ainvoke(
        resume_command(
            out,
            decisions={
                "w1": edit("uno.txt", "I"),
                "w2": edit("dos.txt", "II"),
                "w3": edit("tres.txt", "III"),
            },
        ),
        cfg,
    )
    ai = next(m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai.id == "ai-1"
    assert [c["args"] for c in ai.tool_calls] == [
        {"path": "uno.txt", "content": "I"},
        {"path": "dos.txt", "content": "II"},
        {"path": "notes.txt"},
        {"path": "tres.txt", "content": "III"},
    ]
    assert set(ai.response_metadata["mcp_approval_edits"]) == {"w1", "w2", "w3"}
    assert demo.demo.workspace["uno.txt"] == "I" and demo.demo.workspace["tres.txt"] == "III"
    assert not {"one.txt", "two.txt", "three.txt"} & set(demo.demo.workspace)


@pytest.mark.anyio
async def test_partial_answers_keep_the_other_interrupts(demo: Demo) -> None:
    graph = build_graph(
        demo.servers,
        None,
        scripted(
            call("demo_delete_file", "d1", path="todo.txt"), call("demo_delete_file", "d2", path="notes.txt")
        ),
    )
    cfg = config()
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    first = by_call(out["__interrupt__"])
    out = await graph.ainvoke(resume_command(out, decisions={"d1": {"type": "approve"}}), cfg)
    [still] = out["__interrupt__"]
    assert still.id == first["d2"].id  # same id for the unanswered call
    assert demo.demo.events.snapshot() == {}  # nothing runs until the gate is done
    out = await graph.ainvoke(resume_command(out, decisions={"d2": {"type": "approve"}}), cfg)
    assert demo.demo.workspace == {}
    assert len(tool_messages(out["messages"])) == 2


@pytest.mark.anyio
async def test_non_mcp_tools_follow_the_policy_default(demo: Demo) -> None:
    policy = ApprovalPolicy(non_mcp="ask", default_decisions=["approve", "reject"])
    graph = build_graph(demo.servers, policy, scripted(call("local_calculator", "c-local", x=1)))
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, config())
    [intr] = out["__interrupt__"]
    value = intr.value
    assert value["server"] is None and value["hints"] is None and "input_schema" not in value
    assert value["tool"] == value["published_name"] == "local_calculator"
    assert value["allowed_decisions"] == ["approve", "reject"]


@pytest.mark.anyio
async def test_unreachable_server_is_denied_not_treated_as_non_mcp(open_servers: OpenServers) -> None:
    """A tool of a server that failed to list can't be checked: with ``unresolved="deny"`` it is denied (it must
    not pass as 'non-MCP'; the default, ``ask``, is tested in tests/graph/test_security_gate.py)."""
    servers = open_servers(
        {
            "demo": {"transport": "in_process", "server": build_server()},
            "broken": {
                "command": sys.executable,
                "args": ["-c", "import sys; sys.exit(3)"],
                "connect_timeout": 5,
                "restart_attempts": 0,
            },
        },
        on_connection_error="ignore",
    )
    graph = build_graph(
        servers,
        ApprovalPolicy(unresolved="deny"),
        scripted(call("broken_delete_everything", "c-broken"), call("local_tool", "c-local")),
    )
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, config())
    assert "__interrupt__" not in out
    results = tool_messages(out["messages"])
    assert results["c-broken"].status == "error"
    assert "denied" in text(results["c-broken"]) and "'broken'" in text(results["c-broken"])
    # A name no server could publish is a non-MCP tool: allowed by default (the tool node then says so).
    assert "denied" not in text(results["c-local"])


@pytest.mark.anyio
async def test_gate_without_pending_calls_is_a_no_op(demo: Demo) -> None:
    gate = create_approval_gate(demo.servers, agent_chat_ui=True, name="gate")
    assert gate.name == "gate"
    messages = [HumanMessage("hi", id="h"), AIMessage("hello", id="a")]
    out = await gate.ainvoke({"messages": messages})
    assert [m.id for m in out["messages"]] == ["h", "a"]
    assert set(out) == {"messages"}  # the private channels do not leak
    answered = [
        HumanMessage("hi", id="h"),
        AIMessage("", id="a", tool_calls=[call("demo_delete_file", "c1", path="x")]),
        ToolMessage("done", tool_call_id="c1", id="t"),
    ]
    out = await gate.ainvoke({"messages": answered})
    assert [m.id for m in out["messages"]] == ["h", "a", "t"]


@pytest.mark.anyio
async def test_without_a_checkpointer_asked_calls_are_denied(demo: Demo) -> None:
    """Nobody can answer without a checkpointer: fail closed with a message saying how to fix it."""
    gate = create_approval_gate(demo.servers)
    messages = [
        HumanMessage("hi", id="h"),
        AIMessage(
            "",
            id="a",
            tool_calls=[call("demo_delete_file", "c1", path="todo.txt"), call("demo_list_files", "c2")],
        ),
    ]
    out = await gate.ainvoke({"messages": messages})
    assert "__interrupt__" not in out
    [denied] = [m for m in out["messages"] if isinstance(m, ToolMessage)]  # the read-only call passes
    assert denied.tool_call_id == "c1" and denied.status == "error"
    assert "no checkpointer" in text(denied) and "destructiveHint (declared)" in text(denied)


def test_payload_of_a_predicate_verdict() -> None:
    payload = AGENT_CHAT_UI.approval(
        approval_payload(call("x_tool", "c1", a=1), None, Verdict.ask("because", ["reject"]))
    )
    assert payload["allowed_decisions"] == ["reject"]
    [request] = payload["action_requests"]
    assert request["name"] == "x_tool" and request["description"].startswith(payload["description"])
    assert {k: v for k, v in request["args"].items() if k != "how_to_answer"} == {
        "a": 1,
        "reason": "",
        "decision": "",
    }
    assert "reject: refuses it" in request["args"]["how_to_answer"]
    assert "approve" not in request["args"]["how_to_answer"]  # the predicate allows only reject
    assert payload["review_configs"] == [{"action_name": "x_tool", "allowed_decisions": ["edit"]}]


@pytest.mark.anyio
async def test_edit_rewrites_provider_tool_blocks(demo: Demo) -> None:
    """An Anthropic-style AIMessage repeats the args in ``tool_use`` content blocks: they are edited too."""

    def agent(state: MessagesState) -> dict[str, list[AnyMessage]]:
        if len(state["messages"]) > 1:
            return {"messages": [AIMessage("done")]}
        blocks: list[str | dict[str, Any]] = [
            {"type": "text", "text": "deleting"},
            {"type": "tool_use", "id": "c1", "name": "demo_delete_file", "input": {"path": "todo.txt"}},
        ]
        return {
            "messages": [
                AIMessage(
                    content=blocks,
                    id="ai-1",
                    tool_calls=[call("demo_delete_file", "c1", path="todo.txt")],
                    additional_kwargs={
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "demo_delete_file", "arguments": '{"path": "todo.txt"}'},
                            }
                        ]
                    },
                )
            ]
        }

    graph = build_graph(demo.servers, None, agent)
    cfg = config()
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    decision = {"type": "edit", "edited_action": {"name": "demo_delete_file", "args": {"path": "notes.txt"}}}
    out = await graph.ainvoke(resume_command(out, decisions={"c1": decision}), cfg)
    ai = out["messages"][1]
    assert ai.content[1]["input"] == {"path": "notes.txt"}
    assert ai.additional_kwargs["tool_calls"][0]["function"]["arguments"] == '{"path": "notes.txt"}'
    assert set(demo.demo.workspace) == {"todo.txt"}


# -------------------------------------------------------------------------------------------- acceptance 5


def agent_chat_ui_accepts(value: Any) -> bool:
    """Agent Chat UI's ``isAgentInboxInterruptSchema`` (src/lib/agent-inbox-interrupt.ts), on one value."""
    actions = value.get("action_requests") if isinstance(value, dict) else None
    configs = value.get("review_configs") if isinstance(value, dict) else None
    return (
        isinstance(actions, list)
        and len(actions) > 0
        and all(
            isinstance(a, dict) and isinstance(a.get("name"), str) and isinstance(a.get("args"), dict)
            for a in actions
        )
        and isinstance(configs, list)
        and len(configs) > 0
        and all(
            isinstance(c, dict)
            and isinstance(c.get("action_name"), str)
            and isinstance(c.get("allowed_decisions"), list)
            for c in configs
        )
    )


@pytest.mark.anyio
async def test_compat_mode_asks_one_call_at_a_time(demo: Demo) -> None:
    graph = build_graph(
        demo.servers,
        None,
        scripted(
            call("demo_delete_file", "d1", path="todo.txt"),
            call("demo_read_file", "r", path="notes.txt"),
            call("demo_delete_file", "d2", path="notes.txt"),
        ),
        agent_chat_ui=True,
    )
    cfg = config()
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    [first] = out["__interrupt__"]  # one pending interrupt at a time
    assert first.value["tool_call_id"] == "d1"
    assert agent_chat_ui_accepts(first.value)
    [request] = first.value[
        "action_requests"
    ]  # the card's Remember box: tests/questions/test_card_remember.py
    assert request["name"] == "demo_delete_file" and request["args"]["path"] == "todo.txt"
    assert request["args"]["remember"].startswith("no - type thread")
    assert request["description"].startswith(first.value["description"] + "\n\nNothing runs until you type")
    assert "To decide later calls" in request["description"]
    assert first.value["review_configs"] == [
        {"action_name": "demo_delete_file", "allowed_decisions": ["edit"]}
    ]

    # A bare decision is not the HITLResponse shape: refused, nothing saved.
    with pytest.raises(ValidationError):
        await graph.ainvoke(Command(resume={"type": "approve"}), cfg)
    # What Agent Chat UI sends: an un-keyed {"decisions": [decision]}.
    out = await graph.ainvoke(Command(resume={"decisions": [{"type": "approve"}]}), cfg)
    [second] = out["__interrupt__"]
    assert second.value["tool_call_id"] == "d2" and second.id != first.id
    assert agent_chat_ui_accepts(second.value)
    assert demo.demo.events.snapshot() == {}

    # resume_command wraps a plain decision for a compat payload.
    command = resume_command(out, decisions={"d2": {"type": "reject", "message": "keep notes"}})
    assert command.resume == {second.id: {"decisions": [{"type": "reject", "message": "keep notes"}]}}
    out = await graph.ainvoke(command, cfg)
    results = tool_messages(out["messages"])
    assert text(results["d1"]) == "Deleted todo.txt"
    assert "keep notes" in text(results["d2"]) and results["d2"].status == "error"
    assert text(results["r"]) == "Remember: LangGraph + MCP.\n"
    assert demo.demo.workspace == {"notes.txt": "Remember: LangGraph + MCP.\n"}


# ------------------------------------------------------------------------------------------------ sync


def test_sync_invoke(sync_demo: Demo) -> None:
    graph = build_graph(
        sync_demo.servers,
        five_call_policy(),
        scripted(
            call("demo_read_file", "c-read", path="notes.txt"),
            call("demo_write_file", "c-write", path="etc/x", content="x"),
            call("demo_delete_file", "c-delete", path="todo.txt"),
        ),
    )
    cfg = config()
    out = graph.invoke({"messages": [HumanMessage("go")]}, cfg)
    assert set(by_call(out["__interrupt__"])) == {"c-write", "c-delete"}
    edit = {
        "type": "edit",
        "edited_action": {"name": "demo_write_file", "args": {"path": "scratch/x", "content": "y"}},
    }
    out = graph.invoke(
        resume_command(graph.get_state(cfg), decisions={"c-write": edit, "c-delete": {"type": "approve"}}),
        cfg,
    )
    results = tool_messages(out["messages"])
    assert text(results["c-write"]) == "Wrote 1 characters to scratch/x"
    assert text(results["c-delete"]) == "Deleted todo.txt"
    assert text(results["c-read"]) == "Remember: LangGraph + MCP.\n"
    assert sync_demo.demo.workspace == {"notes.txt": "Remember: LangGraph + MCP.\n", "scratch/x": "y"}
