"""Every decision on the record: one ``mcp_decision`` custom stream event per tool call, every field filled, and
the same record on the ``langgraph_mcp.audit`` logger — for allowed, approved, rejected, denied and expired calls."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langgraph_mcp import resume_command
from langgraph_mcp.catalog import args_digest
from langgraph_mcp.graph import node as node_module
from langgraph_mcp.payloads import DecisionRecord
from tests.graph.test_policy_gate import WIRINGS, setup
from tests.support.helpers import OpenServers
from tests.support.node_support import call

pytestmark = pytest.mark.anyio

FIELDS = set(DecisionRecord.__annotations__)


async def run(graph: Any, value: Any, cfg: Any, events: list[dict[str, Any]]) -> dict[str, Any]:
    """Stream one run: custom events go to ``events``; returns the pending interrupts by tool call id.

    ``subgraphs=True``: the gate is a subgraph, and the records of calls it answers itself come from inside it."""
    pending: dict[str, Any] = {}
    async for _ns, mode, chunk in graph.astream(
        value, cfg, stream_mode=["custom", "updates"], subgraphs=True
    ):
        if mode == "custom" and isinstance(chunk, dict) and chunk.get("type") == "mcp_decision":
            events.append(chunk)
        elif mode == "updates" and "__interrupt__" in chunk:
            pending.update({i.value["tool_call_id"]: i for i in chunk["__interrupt__"]})
    return pending


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_one_mcp_decision_per_call_with_every_field(
    open_servers: OpenServers, wiring: str, caplog: pytest.LogCaptureFixture
) -> None:
    calls = [
        call("demo_read_file", "read", path="notes.txt"),
        call("demo_delete_file", "approved", path="todo.txt"),
        call("demo_delete_file", "rejected", path="notes.txt"),
        call("demo_read_file", "denied", path="/etc/passwd"),
        call("demo_delete_file", "late", path="notes.txt"),
    ]
    srv, clock, graph = setup(open_servers, calls, wiring)
    cfg: Any = {"configurable": {"thread_id": "t", "user_id": "ann"}}
    events: list[dict[str, Any]] = []
    caplog.set_level(logging.INFO, logger="langgraph_mcp.audit")

    pending = await run(graph, {"messages": [HumanMessage("go")]}, cfg, events)
    assert set(pending) == {"approved", "rejected", "late"}
    decisions = {"approved": {"type": "approve"}, "rejected": {"type": "reject", "message": "no"}}
    await run(graph, resume_command([pending[k] for k in decisions], decisions=decisions), cfg, events)
    clock.now += 61
    await run(graph, resume_command([pending["late"]], decisions={"late": {"type": "approve"}}), cfg, events)

    by_call = {e["tool_call_id"]: e for e in events}
    assert len(events) == len(calls) == len(by_call), events  # exactly one each
    expected = {
        "read": ("allow", "policy", "hints:read-only", None, "ran"),
        "approved": ("ask", "human", "deletes", "approve", "ran"),
        "rejected": ("ask", "human", "deletes", "reject", "rejected"),
        "denied": ("deny", "policy", "no-etc", None, "denied"),
        "late": ("ask", "human", "deletes", "approve", "expired"),
    }
    for c in calls:
        event = by_call[c["id"]]
        assert set(event) == FIELDS
        assert (
            event["verdict"],
            event["decided_by"],
            event["rule"],
            event["decision"],
            event["outcome"],
        ) == (expected[c["id"]]), c["id"]
        assert event["server"] == "demo" and event["tool"] == c["name"].removeprefix("demo_")
        assert event["principal"] == "ann"
        assert event["args_digest"] == args_digest(c["args"])
        assert isinstance(event["definition_hash"], str) and len(event["definition_hash"]) == 64
    assert by_call["approved"]["definition_hash"] == by_call["rejected"]["definition_hash"]
    assert by_call["read"]["definition_hash"] != by_call["approved"]["definition_hash"]
    # what the server ran agrees with the record
    assert srv.events.counts["delete_file.commit"] == 1 and srv.events.counts["read_file.enter"] == 1

    logged = [r.mcp_decision for r in caplog.records if r.name == "langgraph_mcp.audit"]  # type: ignore[attr-defined]
    assert sorted(logged, key=lambda e: e["tool_call_id"]) == sorted(events, key=lambda e: e["tool_call_id"])


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_no_record_is_built_for_a_call_nobody_hears_about(
    open_servers: OpenServers, wiring: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    original = node_module.decision_record

    def counted(**fields: Any) -> DecisionRecord:
        built.append(fields["tool_call_id"])
        return original(**fields)

    monkeypatch.setattr(node_module, "decision_record", counted)
    caplog.set_level(logging.WARNING, logger="langgraph_mcp.audit")
    _srv, _clock, graph = setup(open_servers, [call("demo_read_file", "quiet", path="notes.txt")], wiring)
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "q"}})
    assert [m.tool_call_id for m in out["messages"] if m.type == "tool" and m.status != "error"] == ["quiet"]
    assert built == []  # no custom stream, the audit logger below INFO, no tracer: nothing to build it for

    _srv, _clock, graph = setup(open_servers, [call("demo_read_file", "heard", path="notes.txt")], wiring)
    events: list[dict[str, Any]] = []
    await run(graph, {"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "h"}}, events)
    assert built == ["heard"] and [e["tool_call_id"] for e in events] == ["heard"]
    caplog.set_level(logging.INFO, logger="langgraph_mcp.audit")
    _srv, _clock, graph = setup(open_servers, [call("demo_read_file", "logged", path="notes.txt")], wiring)
    await graph.ainvoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "l"}})
    assert built == ["heard", "logged"]
    assert [r.mcp_decision["tool_call_id"] for r in caplog.records if hasattr(r, "mcp_decision")][
        -1
    ] == "logged"
