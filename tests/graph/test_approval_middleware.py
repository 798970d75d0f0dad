"""``McpApprovalMiddleware`` in ``create_agent``: the gate's policy, its fail-closed rules and its decisions.

Every agent here is ``create_agent(model, tools=await servers.get_tools(), middleware=[McpApprovalMiddleware(
servers, policy)])`` with the scripted demo model and the bundled demo server; what ran is read from the
server's own record (``srv.events``, or ``DEMO_EVENTS_FILE`` for the stdio restart test), never from what the
agent says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.human_in_the_loop import HITLRequest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_mcp import (
    ApprovalPolicy,
    McpApprovalMiddleware,
    McpServers,
    pending_interrupts,
    resume_command,
)
from langgraph_mcp.errors import AnswerRefusedError
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from langgraph_mcp.examples.scripted_model import DEMO_PROMPT, ScriptedChatModel
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import ERAS, HANG_GUARD, OpenServers, event_pids
from tests.support.node_support import in_process

pytestmark = pytest.mark.anyio

DELETE = [("delete_file", {"path": "todo.txt"})]
CONFIG: Any = {"configurable": {"thread_id": "mw"}}


async def agent_over(
    servers: McpServers,
    calls: list[tuple[str, dict[str, Any]]] | None = None,
    policy: ApprovalPolicy | None = None,
    *,
    checkpointer: Any = "memory",
    extra_tools: list[Any] = (),  # type: ignore[assignment]
) -> Any:
    model = ScriptedChatModel() if calls is None else ScriptedChatModel(tool_calls=calls)
    return create_agent(
        model,
        tools=[*await servers.get_tools(), *extra_tools],
        middleware=[McpApprovalMiddleware(servers, policy)],
        checkpointer=InMemorySaver() if checkpointer == "memory" else checkpointer,
    )


def tool_messages(out: Any) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}


def text(message: ToolMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)


def demo(open_servers: OpenServers, era: str, **options: Any) -> tuple[McpServers, DemoServer]:
    srv = build_server()
    return open_servers({"demo": in_process(srv, era, **options)}), srv


@pytest.mark.parametrize("era", ERAS)
async def test_destructive_call_is_asked_read_only_runs_and_approve_runs_it_once(
    open_servers: OpenServers, era: str
) -> None:
    servers, srv = demo(open_servers, era)
    agent = await agent_over(servers)

    out = await agent.ainvoke({"messages": [HumanMessage(DEMO_PROMPT)]}, CONFIG)

    by_type = {i.value["type"]: i for i in out["__interrupt__"]}
    approval = by_type["mcp_approval"].value
    assert approval["tool_call_id"] == "call_delete_file_1"
    assert approval["reason"] == "destructiveHint (declared)"
    # LangChain's HITLRequest keys (what Agent Chat UI renders), one action per interrupt
    assert set(HITLRequest.__annotations__) <= set(approval)
    [request] = approval["action_requests"]  # the card's Remember box: tests/questions/test_card_remember.py
    assert request["name"] == "demo_delete_file" and request["args"]["path"] == "todo.txt"
    assert request["args"]["remember"].startswith("no - type thread")
    assert request["description"].startswith(approval["description"] + "\n\nNothing runs until you type")
    assert "To decide later calls" in request["description"]
    assert approval["allowed_decisions"] == ["approve", "edit", "reject", "respond"]  # the policy's
    assert approval["review_configs"] == [{"action_name": "demo_delete_file", "allowed_decisions": ["edit"]}]
    assert srv.events.counts["list_files.enter"] == 1  # read-only: not asked, already ran
    assert srv.events.counts["delete_file.enter"] == 0
    assert srv.events.counts["delete_file.request"] == 0  # never sent while waiting

    (question,) = [p for p in pending_interrupts(out) if p.kind == "elicitation"]
    (key,) = question.elicitation["requests"]
    command = resume_command(
        out["__interrupt__"],
        decisions={"call_delete_file_1": {"type": "approve"}},
        answers={"call_book_trip_1": {key: {"action": "accept", "content": {"date": "2026-12-24"}}}},
    )
    out = await agent.ainvoke(command, CONFIG)

    assert "__interrupt__" not in out
    assert srv.events.counts["delete_file.enter"] == 1
    assert "todo.txt" not in srv.workspace
    assert srv.events.counts["book_trip.commit"] == 1
    assert srv.events.counts["list_files.enter"] == 1  # a finished call never re-runs
    assert "Deleted todo.txt" in out["messages"][-1].content


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("decision", ["edit", "reject", "respond"])
async def test_agent_chat_ui_decisions_edit_reject_respond(
    open_servers: OpenServers, era: str, decision: str
) -> None:
    servers, srv = demo(open_servers, era)
    agent = await agent_over(servers, DELETE)
    out = await agent.ainvoke({"messages": [HumanMessage("delete it")]}, CONFIG)
    (pending,) = out["__interrupt__"]
    assert pending.value["type"] == "mcp_approval"
    [card] = pending.value["action_requests"]

    def typed(**boxes: str) -> dict[str, Any]:
        """Exactly what Agent Chat UI sends: no interrupt id, one edit holding the card's boxes as strings."""
        args = {**card["args"], **boxes}
        return {"decisions": [{"type": "edit", "edited_action": {"name": "demo_delete_file", "args": args}}]}

    # Submit, Ctrl+Enter or Reset on the card as shown, a whitespace Decision, a reason with no word: nothing runs
    for nothing in (typed(), typed(decision=" \n"), typed(reason="keep it"), typed(path="notes.txt")):
        with pytest.raises(AnswerRefusedError, match=r"(is empty|holds only spaces), so nothing was sent"):
            await agent.ainvoke(Command(resume=nothing), CONFIG)
    assert srv.events.counts["delete_file.enter"] == 0
    answers: dict[str, Any] = {
        # the edited box is a string; the edit is checked against the tool's inputSchema
        "edit": typed(path="notes.txt", decision="approve"),
        "reject": typed(reason="keep my todo list", decision="reject"),
        "respond": typed(reason="todo.txt is already gone", decision="respond"),
    }
    out = await agent.ainvoke(Command(resume=answers[decision]), CONFIG)

    assert "__interrupt__" not in out
    result = tool_messages(out)["call_delete_file_1"]
    if decision == "edit":
        assert srv.events.counts["delete_file.enter"] == 1
        assert "notes.txt" not in srv.workspace and "todo.txt" in srv.workspace
        assert result.status == "success" and "notes.txt" in text(result)
    else:
        assert srv.events.counts["delete_file.enter"] == 0
        assert srv.events.counts["delete_file.request"] == 0
        assert "todo.txt" in srv.workspace
    if decision == "reject":
        assert result.status == "error"
        assert "rejected" in text(result) and "keep my todo list" in text(result)
    if decision == "respond":
        assert result.status == "success" and text(result) == "todo.txt is already gone"
    assert out["messages"][-1].content.startswith("Here is what happened:")


async def test_a_bad_decision_is_refused_before_it_is_saved_and_the_same_interrupt_stays(
    open_servers: OpenServers,
) -> None:
    servers, srv = demo(open_servers, "modern")
    agent = await agent_over(servers, DELETE)
    out = await agent.ainvoke({"messages": [HumanMessage("delete it")]}, CONFIG)
    (pending,) = out["__interrupt__"]
    bad = {"type": "edit", "edited_action": {"name": "demo_move_file", "args": {"src": "a", "dst": "b"}}}

    with pytest.raises(AnswerRefusedError, match="must stay 'demo_delete_file'"):  # HITL shape: in words
        await agent.ainvoke(Command(resume={"decisions": [bad]}), CONFIG)

    state = await agent.aget_state(CONFIG)
    assert [i.id for i in state.interrupts] == [pending.id]
    assert srv.events.counts["delete_file.enter"] == 0 and srv.events.counts["move_file.enter"] == 0
    out = await agent.ainvoke(Command(resume={pending.id: {"decisions": [{"type": "approve"}]}}), CONFIG)
    assert srv.events.counts["delete_file.enter"] == 1


async def test_the_policy_decides_the_same_way_as_the_gate(open_servers: OpenServers) -> None:
    servers, srv = demo(open_servers, "modern")
    policy = ApprovalPolicy(tools={"demo_delete_file": "deny", "demo_write_file": "ask"})
    calls = [("delete_file", {"path": "todo.txt"}), ("write_file", {"path": "a.txt", "content": "x"})]
    agent = await agent_over(servers, calls, policy)

    out = await agent.ainvoke({"messages": [HumanMessage("go")]}, CONFIG)

    (pending,) = out["__interrupt__"]
    assert pending.value["tool_call_id"] == "call_write_file_1"
    assert pending.value["reason"] == "policy override 'demo_write_file': ask"
    denied = tool_messages(out)["call_delete_file_1"]
    assert (
        denied.status == "error" and "denied" in text(denied) and "'demo_delete_file': deny" in text(denied)
    )
    assert srv.events.counts["delete_file.request"] == 0 and srv.events.counts["write_file.enter"] == 0


async def test_untrusted_server_read_only_tool_is_asked(open_servers: OpenServers) -> None:
    servers, srv = demo(open_servers, "modern", trust_annotations=False)
    agent = await agent_over(servers, [("list_files", {})])

    out = await agent.ainvoke({"messages": [HumanMessage("list")]}, CONFIG)

    (pending,) = out["__interrupt__"]
    assert pending.value["reason"] == "server 'demo' is not trusted: its annotations are ignored"
    assert srv.events.counts["list_files.enter"] == 0


async def test_a_call_whose_server_could_not_be_listed_is_asked_not_run(
    open_servers: OpenServers, tmp_path: Path, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers(
        {"demo": in_process(srv, "modern"), "broken": {"command": str(tmp_path / "no-such-server")}},
        on_connection_error="ignore",
    )
    # The model calls "broken_wipe": a name the failed server would publish.
    agent = create_agent(
        ScriptedChatModel(tool_calls=[("broken_wipe", {})], prefix=""),
        tools=await servers.get_tools(),
        middleware=[McpApprovalMiddleware(servers)],
        checkpointer=checkpointer,
    )

    out = await agent.ainvoke({"messages": [HumanMessage("wipe")]}, CONFIG)

    (pending,) = out["__interrupt__"]
    assert pending.value["tool_call_id"] == "call_broken_wipe_1"
    assert pending.value["reason"].startswith("could not establish which MCP server 'broken_wipe' belongs to")


async def test_a_tool_that_is_not_an_mcp_tool_gets_the_non_mcp_verdict(open_servers: OpenServers) -> None:
    servers, _ = demo(open_servers, "modern")
    ran: list[str] = []

    @tool
    def shout(text: str) -> str:
        """Upper-case the text."""
        ran.append(text)
        return text.upper()

    calls = [("shout", {"text": "hi"}), ("demo_delete_file", {"path": "todo.txt"})]
    model = ScriptedChatModel(tool_calls=calls, prefix="")
    asked = create_agent(
        model,
        tools=[*await servers.get_tools(), shout],
        middleware=[McpApprovalMiddleware(servers, ApprovalPolicy(non_mcp="ask"))],
        checkpointer=StrictSaver(),
    )
    out = await asked.ainvoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert {i.value["tool_call_id"] for i in out["__interrupt__"]} == {
        "call_shout_1",
        "call_demo_delete_file_1",
    }
    assert ran == []

    allowed = create_agent(
        model,
        tools=[*await servers.get_tools(), shout],
        middleware=[McpApprovalMiddleware(servers)],
        checkpointer=StrictSaver(),
    )
    out = await allowed.ainvoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "2"}})
    assert ran == ["hi"]
    assert [i.value["tool_call_id"] for i in out["__interrupt__"]] == ["call_demo_delete_file_1"]


async def test_without_a_checkpointer_an_asked_call_is_denied_and_not_run(open_servers: OpenServers) -> None:
    servers, srv = demo(open_servers, "modern")
    agent = await agent_over(servers, [("list_files", {}), *DELETE], checkpointer=None)

    out = await agent.ainvoke({"messages": [HumanMessage("go")]})

    result = tool_messages(out)["call_delete_file_1"]
    assert result.status == "error" and "no checkpointer" in text(result)
    assert srv.events.counts["delete_file.request"] == 0
    assert srv.events.counts["list_files.enter"] == 1


def test_the_sync_agent_asks_and_runs_too(
    open_servers_sync: Any, sync_checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers_sync({"demo": in_process(srv, "modern")})
    agent = create_agent(
        ScriptedChatModel(tool_calls=[("list_files", {}), *DELETE]),
        tools=servers.run_sync(servers.get_tools),
        middleware=[McpApprovalMiddleware(servers)],
        checkpointer=sync_checkpointer,
    )
    out = agent.invoke({"messages": [HumanMessage("go")]}, CONFIG)
    (pending,) = out["__interrupt__"]
    assert pending.value["tool_call_id"] == "call_delete_file_1"
    assert srv.events.counts["list_files.enter"] == 1 and srv.events.counts["delete_file.enter"] == 0
    agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG)
    assert srv.events.counts["delete_file.enter"] == 1


# ------------------------------------------------------------------------------------------------ restart


def child(db: Path, era: str, events: Path, phase: str, decision: Any = None) -> dict[str, Any]:
    """One phase of the agent run in a fresh process (see ``tests/support/middleware_child.py``)."""
    argv = [sys.executable, "-m", "tests.support.middleware_child", str(db), "t1", era, phase]
    if decision is not None:
        argv.append(json.dumps(decision))
    env = {**os.environ, "DEMO_EVENTS_FILE": str(events)}
    result = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    parsed: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return parsed


@pytest.mark.slow
@pytest.mark.parametrize(
    ("era", "decision"), [("modern", "reject"), ("legacy", "reject"), ("modern", "approve")]
)
def test_pause_in_one_process_resume_in_another_sqlite(tmp_path: Path, era: str, decision: str) -> None:
    db, events = tmp_path / "threads.sqlite", tmp_path / "events.jsonl"

    paused = child(db, era, events, "start")

    by_type = {p["type"]: p for p in paused["pending"]}
    assert by_type["mcp_approval"]["tool_call_id"] == "call_delete_file_1"
    # a get_tools() tool pauses on its server's question too (and is answered from another process below)
    assert by_type["mcp_elicitation"]["tool_call_id"] == "call_book_trip_1"
    assert len(event_pids(events, "list_files")) == 1
    assert event_pids(events, "delete_file") == []

    answer = {"type": "approve"} if decision == "approve" else {"type": "reject", "message": "not today"}
    done = child(db, era, events, "resume", answer)

    # the same interrupt ids in the new process
    assert sorted(done["resumed"]) == sorted(p["id"] for p in paused["pending"])
    assert done["pending"] == []
    results = {m["id"]: m for m in done["tool_messages"]}
    pids = event_pids(events, "delete_file")
    if decision == "approve":
        assert len(pids) == 1 and results["call_delete_file_1"]["status"] == "success"
    else:
        assert pids == []  # the server never ran the rejected call, in either process
        assert results["call_delete_file_1"]["status"] == "error"
        assert "not today" in results["call_delete_file_1"]["text"]
    assert len(event_pids(events, "list_files")) == 1  # the finished sibling did not run again
    assert len(event_pids(events, "book_trip", "commit")) == 1
    assert results["call_book_trip_1"]["text"] == "Booked Rome on 2026-12-24"
