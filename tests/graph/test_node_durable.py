"""The durable paths: resume in another process, after a server restart, after the park timeout; retries."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from langgraph_mcp import McpServers
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import ERAS, HANG_GUARD, OpenServers, crashing_demo_spec
from tests.support.node_support import (
    TOMORROW,
    accept_all,
    call,
    in_process,
    one_turn_graph,
    start,
    text_of,
    tool_messages,
)

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
CHILD = ROOT / "tests" / "support" / "node_child.py"


def events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def count(path: Path, tool: str, event: str) -> int:
    return sum(1 for e in events(path) if e["tool"] == tool and e["event"] == event)


def child(
    db: Path, mode: str, tool: str, args: dict[str, Any], log: Path, resume: Any = None
) -> dict[str, Any]:
    argv = [sys.executable, str(CHILD), str(db), mode, tool, json.dumps(args), str(log)]
    if resume is not None:
        argv.append(json.dumps(resume))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=HANG_GUARD, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("mode", ERAS)
def test_pause_in_one_process_resume_in_others_commits_once(tmp_path: Path, mode: str) -> None:
    db, log = tmp_path / "checkpoints.sqlite", tmp_path / "events.jsonl"
    args = {"destination": "Oslo"}
    report = child(db, mode, "demo_two_questions_commit", args, log)
    answered = 0
    while report["interrupts"]:
        (pending,) = report["interrupts"]
        answered += 1
        resume = {pending["id"]: _accept(pending["value"])}
        report = child(db, mode, "demo_two_questions_commit", args, log, resume)
    assert report["messages"]["c1"]["status"] == "success"
    assert report["messages"]["c1"]["text"].startswith(f"Booked Oslo on {TOMORROW}")
    assert answered == (1 if mode == "modern" else 2)
    assert count(log, "two_questions_commit", "commit") == 1
    assert len({e["pid"] for e in events(log)}) == answered + 1  # a new server process every time


def _accept(value: dict[str, Any]) -> dict[str, Any]:
    from langgraph.types import Interrupt

    return accept_all(Interrupt(value=value, id="x"))


def _stdio(log: Path, mode: str, **options: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
        "env": {"DEMO_EVENTS_FILE": str(log)},
        "mode": mode,
        **options,
    }


async def _server_pid(servers: McpServers) -> int:
    result = await servers.call_tool("demo_stats", {})
    pid: int = result.structured_content["pid"]
    return pid


async def test_modern_state_refused_after_restart_falls_back_to_reissue(
    open_servers: OpenServers, tmp_path: Path, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    log = tmp_path / "events.jsonl"
    servers = open_servers({"demo": _stdio(log, "modern")})
    graph = one_turn_graph(servers, [call("demo_book_three_rounds", "c1", destination="Lima")], checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(start(), cfg)
    (pending,) = out["__interrupt__"]
    old_pid = await _server_pid(servers)
    os.kill(old_pid, signal.SIGKILL)  # the saved requestState's key dies with the process
    async with asyncio.timeout(10):  # the client has read the end of the dead server's stdout
        await server_access(servers).connections.connection("demo").owner.transport_ended()
    assert not server_access(servers).connections.connection("demo").owner.alive
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), cfg)
    while "__interrupt__" in out:
        (pending,) = out["__interrupt__"]
        out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), cfg)
    message = tool_messages(out)["c1"]
    assert message.status == "success", text_of(message)
    assert await _server_pid(servers) != old_pid
    assert count(log, "book_three_rounds", "commit") == 1


async def test_modern_fast_path_costs_one_call_per_round(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "modern")})
    graph = one_turn_graph(servers, [call("demo_book_three_rounds", "c1", destination="Lima")], checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(start(), cfg)
    while "__interrupt__" in out:
        (pending,) = out["__interrupt__"]
        out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), cfg)
    assert tool_messages(out)["c1"].status == "success"
    # The first call plus one call per answered round — never a re-issue from scratch.
    assert srv.events.counts["book_three_rounds.request"] == 4


async def test_legacy_fast_path_does_pre_question_work_once(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "legacy")})
    graph = one_turn_graph(servers, [call("demo_book_trip_legacy", "c1", destination="Rome")], checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(start(), cfg)
    (pending,) = out["__interrupt__"]
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), cfg)
    assert text_of(tool_messages(out)["c1"]) == f"Booked Rome on {TOMORROW}"
    counts = srv.events.counts
    assert counts["book_trip_legacy.enter"] == 1  # parked: one attempt, no replay
    assert counts["book_trip_legacy.request"] == 1
    assert counts["book_trip_legacy.answered:accept"] == 1
    assert not [k for k in counts if k.endswith(".cancelled")]


async def test_parked_call_past_its_park_timeout_is_cancelled_then_replayed(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "legacy", park_timeout=0.3)})
    graph = one_turn_graph(servers, [call("demo_book_trip_legacy", "c1", destination="Rome")], checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(start(), cfg)
    (pending,) = out["__interrupt__"]
    paused = server_access(servers).connections.paused_rounds("demo")
    assert len(paused) == 1
    # Wait for what the park timeout does: the parked call is dropped here, then cancelled on the server.
    async with asyncio.timeout(10):
        await srv.events.reached("server.cancelled")
    assert len(paused) == 0
    assert srv.events.counts["book_trip_legacy.commit"] == 0
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), cfg)
    assert text_of(tool_messages(out)["c1"]) == f"Booked Rome on {TOMORROW}"
    assert srv.events.counts["book_trip_legacy.enter"] == 2  # replayed once
    assert srv.events.counts["book_trip_legacy.commit"] == 1


async def test_three_concurrent_legacy_calls_with_identical_questions_get_their_own_answers(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "legacy")})
    calls = [call("demo_book_trip_legacy", f"c{i}", destination="Rome") for i in range(3)]
    graph = one_turn_graph(servers, calls, checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(start(), cfg)
    pending = {i.value["tool_call_id"]: i for i in out["__interrupt__"]}
    assert len(pending) == 3 and len({i.id for i in pending.values()}) == 3
    dates = {"c0": "2027-01-01", "c1": "2027-02-02", "c2": "2027-03-03"}
    resume = {
        i.id: {key: {"action": "accept", "content": {"date": dates[cid]}} for key in i.value["requests"]}
        for cid, i in pending.items()
    }
    out = await graph.ainvoke(Command(resume=resume), cfg)
    messages = tool_messages(out)
    assert {cid: text_of(messages[cid]) for cid in dates} == {
        cid: f"Booked Rome on {date}" for cid, date in dates.items()
    }


@pytest.mark.parametrize(("tool", "retried"), [("demo_flaky_read", True), ("demo_flaky_delete", False)])
async def test_transport_failure_is_retried_only_for_retry_safe_tools(
    open_servers: OpenServers,
    tmp_path: Path,
    tool: str,
    retried: bool,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    log = tmp_path / "events.jsonl"
    servers = open_servers({"demo": crashing_demo_spec(events_file=log, mode="modern")})
    marker = tmp_path / "marker"
    graph = one_turn_graph(servers, [call(tool, "c1", marker=str(marker))], checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(start(), cfg)
    if not retried:  # destructive: the tool node asks first (no gate judged it); the human approves
        [asked] = out["__interrupt__"]
        assert asked.value["type"] == "mcp_approval"
        out = await graph.ainvoke(Command(resume={asked.id: {"type": "approve"}}), cfg)
    message = tool_messages(out)["c1"]
    name = tool.removeprefix("demo_")
    if retried:
        assert message.status == "success", text_of(message)
        assert count(log, name, "enter") == 2
    else:
        assert message.status == "error"
        assert count(log, name, "enter") == 1
