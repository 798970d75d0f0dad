"""Several calls in one task of a *synchronous* run: each is its own (sync) LangGraph task, as in async runs."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_mcp import McpServers, resume_command
from langgraph_mcp.examples.demo_server import build_server
from tests.support.node_support import (
    TOMORROW,
    call,
    fill,
    in_process,
    one_turn_graph,
    text_of,
    tool_messages,
)

CFG: Any = {"configurable": {"thread_id": "t"}}


def test_two_calls_in_one_sync_task_pause_together_and_a_finished_call_never_reruns(
    sync_checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = build_server()
    servers = McpServers({"demo": in_process(srv, "auto")})
    calls = [
        call("demo_add", "sum", a=1, b=2),
        call("demo_book_trip", "rome", destination="Rome"),
        call("demo_book_trip", "oslo", destination="Oslo"),
    ]
    graph = one_turn_graph(servers, calls, sync_checkpointer, fan_out=False)  # one task, three calls

    out = graph.invoke({"messages": [HumanMessage("go")]}, CFG)
    pending = {i.value["tool_call_id"]: i for i in out["__interrupt__"]}
    assert set(pending) == {"rome", "oslo"}
    answers = {
        call_id: {key: fill(request) for key, request in item.value["requests"].items()}
        for call_id, item in pending.items()
    }
    out = graph.invoke(resume_command(out["__interrupt__"], answers=answers), CFG)

    messages = tool_messages(out)
    assert text_of(messages["sum"]) == "3"
    assert text_of(messages["rome"]) == f"Booked Rome on {TOMORROW}"
    assert text_of(messages["oslo"]) == f"Booked Oslo on {TOMORROW}"
    assert srv.events.counts["add.enter"] == 1  # not run again when the paused siblings resumed
    assert srv.events.counts["book_trip.commit"] == 2
    servers.close()
