"""A Send fan-out of n calls splits the turn once (the router), not once more in each of its n tasks (issue 25)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.graph import messages
from tests.support.helpers import ERAS, OpenServers
from tests.support.node_support import call, in_process, one_turn_graph, start, text_of, tool_messages

pytestmark = pytest.mark.anyio

N = 16


def count_split_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Wrap ``split_calls`` wherever the package holds it; the list gets the size of every turn it splits."""
    original = messages.split_calls
    sizes: list[int] = []

    def counted(calls: Sequence[ToolCall]) -> Any:
        sizes.append(len(calls))
        return original(calls)

    for name, module in list(sys.modules.items()):
        if name.startswith("langgraph_mcp") and getattr(module, "split_calls", None) is original:
            monkeypatch.setattr(module, "split_calls", counted)
    return sizes


@pytest.mark.parametrize("mode", ERAS)
async def test_a_fan_out_of_n_calls_splits_its_turn_once_not_once_per_task(
    open_servers: OpenServers,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    calls = [call("demo_add", f"c{i}", a=i, b=1) for i in range(N)]
    graph = one_turn_graph(servers, calls, checkpointer, policy=ApprovalPolicy(tools={"*": "allow"}))
    sizes = count_split_calls(monkeypatch)
    out = await graph.ainvoke(start(), {"configurable": {"thread_id": "t"}})
    results = tool_messages(out)
    assert {i: text_of(results[f"c{i}"]) for i in range(N)} == {i: str(i + 1) for i in range(N)}
    assert srv.events.counts["add.enter"] == N
    # The router splits the n calls once; each task checks its own id (the old code split all n in each: n + n²).
    assert sum(sizes) <= 2 * N, sizes


@pytest.mark.parametrize(
    "calls, expect",
    [
        ([call("demo_add", "a", a=1, b=1), call("demo_add", "b", a=2, b=2)], ("a", [], "runnable")),
        ([call("demo_add", "a", a=1, b=1), call("demo_list_files", "a")], ("a", ["a"], "refused")),
        ([call("demo_add", None, a=1, b=1), call("demo_add", "b", a=2, b=2)], ("", [""], "refused")),
        ([call("demo_add", "b", a=2, b=2)], ("zz", [], "none")),
    ],
)
def test_one_calls_view_agrees_with_the_whole_turns(
    calls: list[ToolCall], expect: tuple[str, list[str], str]
) -> None:
    own_id, refused_ids, kind = expect
    ai = AIMessage("", tool_calls=calls, id="ai")
    own = next((c for c in calls if (c.get("id") or "") == own_id), call("demo_add", own_id))
    for answered in (False, True):
        turn: list[Any] = [ai] + ([ToolMessage("x", tool_call_id=own_id)] if answered else [])
        whole = messages.pending_calls(turn)
        one = messages.pending_call(turn, own)
        assert [g.tool_call_id for g in one.refused] == [
            g.tool_call_id for g in whole.refused if g.tool_call_id == own_id
        ]
        assert [g.calls for g in one.refused] == [g.calls for g in whole.refused if g.tool_call_id == own_id]
        assert one.runnable == [c for c in whole.runnable if c.get("id") == own_id]
        assert one.ai is whole.ai
        if not answered:
            assert kind == ("refused" if one.refused else "runnable" if one.runnable else "none")
            assert [g.tool_call_id for g in one.refused] == refused_ids


def test_the_payloads_of_one_step_are_those_of_one_call_each() -> None:
    calls = [call("demo_add", f"c{i}", a=i, b=1) for i in (3, 1, 2)] + [call("demo_add", None, a=0, b=0)]
    turn: list[Any] = [AIMessage("", tool_calls=calls, id="ai")]
    together = messages.calls_with_context(calls, turn, "messages")
    assert together == [messages.call_with_context(c, turn, "messages", calls) for c in calls]
    assert [messages.batch_of(p) for p in together] == [["", "c1", "c2", "c3"]] * 4
    together[0][messages.BATCH_KEY].append("mutated")  # each payload owns its lists
    assert messages.batch_of(together[1]) == ["", "c1", "c2", "c3"]
