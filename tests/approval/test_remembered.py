"""Remembered decisions (``"remember": "thread" | "principal"``) in real graphs, both wirings of the gate and
``create_agent`` + ``McpApprovalMiddleware``: what is offered, what a later call gets without asking, what voids
it, what it never answers, and that nothing but an entry this package signed counts. What ran is read from the
server's own record."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.approval.memory import MEMORY_NAMESPACE, list_approvals, memory_namespace
from langgraph_mcp.payloads import DecisionRecord
from tests.support.helpers import OpenServers
from tests.support.memory_support import (
    WIRINGS,
    Graph,
    answer,
    cfg,
    decide,
    deletes,
    demo,
    refusal,
    turn,
    wired,
)
from tests.support.servers.versioned_server import build_versioned_server

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_thread_memory_without_a_store(open_servers: OpenServers, wiring: str) -> None:
    servers, srv = demo(open_servers)
    graph = await wired(servers, wiring)
    out = await turn(graph, cfg("t1", "ann"))
    [pending] = out["__interrupt__"]
    assert pending.value["remember"] == ["thread"]
    assert "store" in pending.value["remember_unavailable"]["principal"]

    # principal memory without a store: refused before it is saved, and the same interrupt stays answerable
    with pytest.raises(refusal(wiring), match="LangGraph store"):
        await graph.ainvoke(
            Command(resume={pending.id: answer({"type": "approve", "remember": "principal"}, wiring)}),
            cfg("t1", "ann"),
        )
    state = await graph.aget_state(cfg("t1", "ann"))
    assert [i.id for i in state.interrupts] == [pending.id]
    assert deletes(srv) == 0

    out = await decide(graph, out, cfg("t1", "ann"), wiring, {"type": "approve", "remember": "thread"})
    assert "__interrupt__" not in out and deletes(srv) == 1
    out = await turn(graph, cfg("t1", "ann"), "again")  # the same thread: remembered, not asked
    assert "__interrupt__" not in out and deletes(srv) == 2
    out = await turn(graph, cfg("t2", "ann"))  # another thread: asked
    assert "__interrupt__" in out and deletes(srv) == 2


@pytest.mark.parametrize("wiring", [*WIRINGS, "gate-router-agent-chat-ui"])
async def test_principal_memory_in_the_store_across_threads(open_servers: OpenServers, wiring: str) -> None:
    servers, srv = demo(open_servers)
    store = InMemoryStore()
    graph = await wired(servers, wiring, store=store)
    out = await turn(graph, cfg("t1", "ann.smith"))
    assert out["__interrupt__"][0].value["remember"] == ["thread", "principal"]
    out = await decide(
        graph, out, cfg("t1", "ann.smith"), wiring, {"type": "approve", "remember": "principal"}
    )
    assert deletes(srv) == 1
    [kept] = list_approvals(store)
    assert (kept.scope, kept.owner, kept.key) == ("principal", "ann.smith", "demo/delete_file")
    assert store.search(memory_namespace("principal", "ann.smith"))  # a dot in the principal is fine

    out = await turn(graph, cfg("t2", "ann.smith"))  # another thread of the same principal: not asked
    assert "__interrupt__" not in out and deletes(srv) == 2
    out = await turn(graph, cfg("t3", "bob"))  # another principal: asked
    assert "__interrupt__" in out and deletes(srv) == 2


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_a_remembered_rejection_answers_later_calls(open_servers: OpenServers, wiring: str) -> None:
    servers, srv = demo(open_servers)
    graph = await wired(servers, wiring, store=InMemoryStore())
    out = await turn(graph, cfg("t1", "ann"))
    rejection = {"type": "reject", "message": "never delete todo", "remember": "principal"}
    out = await decide(graph, out, cfg("t1", "ann"), wiring, rejection)
    out = await turn(graph, cfg("t2", "ann"))
    assert "__interrupt__" not in out and deletes(srv) == 0
    [message] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert message.status == "error" and "never delete todo" in str(message.content)


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_locked_rules_and_remember_off_offer_nothing_and_memory_never_answers_them(
    open_servers: OpenServers, wiring: str
) -> None:
    servers, _ = demo(open_servers)
    store = InMemoryStore()
    graph = await wired(
        servers, wiring, [("reset_stats", {}), ("move_file", {"src": "a", "dst": "b"})], store=store
    )
    out = await turn(graph, cfg("t1", "ann"))
    by_tool = {i.value["tool"]: i for i in out["__interrupt__"]}
    assert set(by_tool) == {"reset_stats", "move_file"}
    for interrupt in by_tool.values():
        assert "remember" not in interrupt.value
    assert "locked" in by_tool["reset_stats"].value["remember_unavailable"]["principal"]
    with pytest.raises(refusal(wiring), match="locked"):
        await graph.ainvoke(
            Command(
                resume={
                    by_tool["reset_stats"].id: answer({"type": "approve", "remember": "principal"}, wiring)
                }
            ),
            cfg("t1", "ann"),
        )
    assert list_approvals(store) == []


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_same_args_memory_covers_only_those_arguments(open_servers: OpenServers, wiring: str) -> None:
    servers, srv = demo(open_servers)
    store = InMemoryStore()
    write = ("write_file", {"path": "a.txt", "content": "x"})
    graph = await wired(servers, wiring, [write], store=store)
    out = await turn(graph, cfg("t1", "ann"))
    await decide(graph, out, cfg("t1", "ann"), wiring, {"type": "approve", "remember": "principal"})
    [kept] = list_approvals(store)
    assert kept.key.startswith("demo/write_file/") and kept.entry["args_digest"] is not None
    assert "__interrupt__" not in await turn(graph, cfg("t2", "ann"))
    other = await wired(servers, wiring, [("write_file", {"path": "b.txt", "content": "x"})], store=store)
    assert "__interrupt__" in await turn(other, cfg("t3", "ann"))
    assert srv.events.counts["write_file.commit"] == 2


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_a_changed_definition_voids_the_memory(open_servers: OpenServers, wiring: str) -> None:
    store = InMemoryStore()
    lookup = [("lookup", {"key": "k"})]
    v2 = build_versioned_server(2)  # lookup: destructive (the built-in hint rule asks)
    servers = open_servers({"ver": {"transport": "in_process", "server": v2, "mode": "modern"}})
    graph = await wired(servers, wiring, lookup, store=store, prefix="ver_")
    out = await turn(graph, cfg("t1", "ann"))
    assert out["__interrupt__"][0].value["rule"] == "hints:destructive"
    await decide(graph, out, cfg("t1", "ann"), wiring, {"type": "approve", "remember": "principal"})
    assert "__interrupt__" not in await turn(graph, cfg("t2", "ann"))
    assert v2.ran.count(("lookup", "run")) == 2

    v3 = build_versioned_server(3)  # redeployed: the same tool with a new description
    servers3 = open_servers({"ver": {"transport": "in_process", "server": v3, "mode": "modern"}})
    graph3 = await wired(servers3, wiring, lookup, store=store, prefix="ver_")
    out = await turn(graph3, cfg("t3", "ann"))
    assert "__interrupt__" in out and v3.ran == []
    assert list_approvals(store) == []  # the void entry is gone


async def records_of(graph: Graph, value: Any, config: Any) -> tuple[list[dict[str, Any]], bool]:
    """The run's ``mcp_decision`` events, and whether it paused."""
    events, paused = [], False
    async for _ns, mode, chunk in graph.astream(
        value, config, stream_mode=["custom", "updates"], subgraphs=True
    ):
        if mode == "custom" and isinstance(chunk, dict) and chunk.get("type") == "mcp_decision":
            events.append(chunk)
        elif mode == "updates" and "__interrupt__" in chunk:
            paused = True
    return events, paused


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_one_mcp_decision_per_remembered_call(open_servers: OpenServers, wiring: str) -> None:
    servers, srv = demo(open_servers)
    graph = await wired(servers, wiring, store=InMemoryStore())
    out = await turn(graph, cfg("t1", "ann"))
    [pending] = out["__interrupt__"]
    approval = answer({"type": "approve", "remember": "principal"}, wiring)
    [asked], _ = await records_of(graph, Command(resume={pending.id: approval}), cfg("t1", "ann"))
    assert (asked["decided_by"], asked["decision"], asked["outcome"]) == ("human", "approve", "ran")

    events, paused = await records_of(graph, {"messages": [HumanMessage("again")]}, cfg("t2", "ann"))
    assert not paused and deletes(srv) == 2
    [event] = events
    assert set(event) == set(DecisionRecord.__annotations__)
    assert (event["verdict"], event["decided_by"], event["decision"], event["outcome"]) == (
        "ask",
        "remembered",
        "approve",
        "failed",  # sent on; todo.txt was deleted by the first call
    )
    assert (event["server"], event["tool"], event["rule"], event["principal"]) == (
        "demo",
        "delete_file",
        "deletes",
        "ann",
    )
    assert (
        event["definition_hash"] == asked["definition_hash"] and event["args_digest"] == asked["args_digest"]
    )


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_a_rule_locked_later_is_never_answered_by_memory(
    open_servers: OpenServers, wiring: str
) -> None:
    servers, srv = demo(open_servers)
    store = InMemoryStore()
    graph = await wired(servers, wiring, store=store)
    out = await turn(graph, cfg("t1", "ann"))
    await decide(graph, out, cfg("t1", "ann"), wiring, {"type": "approve", "remember": "principal"})
    assert len(list_approvals(store)) == 1 and deletes(srv) == 1

    # the operator locks the rule: the entry is still there, and still genuine, but answers nothing
    locked = ApprovalPolicy.load(
        {"rules": [{"id": "deletes", "tool": "demo_delete_file", "verdict": "ask", "locked": True}]}
    )
    graph = await wired(servers, wiring, store=store, pol=locked)
    out = await turn(graph, cfg("t2", "ann"))
    [pending] = out["__interrupt__"]
    assert pending.value["rule"] == "deletes" and "remember" not in pending.value
    assert deletes(srv) == 1 and len(list_approvals(store)) == 1


@pytest.mark.parametrize("wiring", ["gate-router", "route-through-gate"])
async def test_a_sync_graph_remembers_too(open_servers: OpenServers, wiring: str) -> None:
    servers, srv = demo(open_servers)
    graph = await wired(servers, wiring, store=InMemoryStore())

    def run() -> None:
        out = graph.invoke({"messages": [HumanMessage("go")]}, cfg("t1", "ann"))
        [pending] = out["__interrupt__"]
        graph.invoke(
            Command(resume={pending.id: {"type": "approve", "remember": "principal"}}), cfg("t1", "ann")
        )
        assert "__interrupt__" not in graph.invoke({"messages": [HumanMessage("go")]}, cfg("t2", "ann"))

    await anyio.to_thread.run_sync(run)
    assert deletes(srv) == 2


def test_the_namespace_is_documented() -> None:
    assert MEMORY_NAMESPACE == ("langgraph_mcp", "approvals")
    assert memory_namespace("principal", "a.b%c") == ("langgraph_mcp", "approvals", "principal", "a%2Eb%25c")


def test_remember_is_checked_against_what_the_payload_offers() -> None:
    from langgraph_mcp.errors import DecisionError
    from langgraph_mcp.questions.decisions import decision_json_schema, validate_decision

    payload: Any = {
        "type": "mcp_approval",
        "tool_call_id": "c1",
        "server": "demo",
        "tool": "delete_file",
        "published_name": "demo_delete_file",
        "arguments": {},
        "hints": None,
        "reason": "r",
        "allowed_decisions": ["approve", "edit", "reject"],
        "description": "d",
        "remember": ["thread"],
        "remember_unavailable": {"principal": "the graph has no LangGraph store"},
    }
    assert validate_decision(payload, {"type": "reject", "message": "no", "remember": "thread"}) == {
        "type": "reject",
        "message": "no",
        "remember": "thread",
    }
    with pytest.raises(DecisionError, match="for the principal: the graph has no LangGraph store"):
        validate_decision(payload, {"type": "approve", "remember": "principal"})
    with pytest.raises(DecisionError, match="'remember' must be one of 'thread', 'principal'"):
        validate_decision(payload, {"type": "approve", "remember": "forever"})
    with pytest.raises(DecisionError, match="has no 'remember'"):
        validate_decision(
            payload,
            {"type": "edit", "edited_action": {"name": "demo_delete_file", "args": {}}, "remember": "thread"},
        )
    schema = decision_json_schema(payload)
    approve = next(b for b in schema["oneOf"] if b["title"] == "approve")
    assert approve["properties"]["remember"] == {"const": "thread", "type": "string"}  # the one offered
    del payload["remember"]
    with pytest.raises(DecisionError, match="no scope is offered"):
        validate_decision(payload, {"type": "approve", "remember": "thread"})
