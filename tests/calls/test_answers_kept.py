"""Issue 10 items 7-9: a human's answer is not lost when the server restarts, changes its question, or gets a
refused answer first."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pydantic
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command
from mcp import MCPError
from mcp.server import Server, ServerRequestContext

from langgraph_mcp import ApprovalPolicy, McpServers
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import (
    HANG_GUARD,
    OpenServers,
    child_pids,
    event_pids,
    free_port,
    stdio_demo_spec,
    wait_exit,
    wait_for_writes,
)
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

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""These tests are about answers kept across rounds, not approvals: the tool node runs every call unasked (their
servers' tools carry no annotations, which the default policy asks about)."""


def config(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


# ------------------------------------------------------------------------------------------------ item 7


async def test_legacy_server_restarted_while_paused_the_answer_is_replayed_on_the_new_session(
    open_servers: OpenServers,
    tmp_path: Path,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    events = tmp_path / "events.jsonl"
    servers = open_servers({"demo": stdio_demo_spec(events_file=events, mode="legacy")})
    graph = one_turn_graph(
        servers,
        [call("demo_book_trip_legacy", "c1", destination="Rome")],
        checkpointer,
        policy=NO_APPROVALS,
    )
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    (first,) = event_pids(events, "book_trip_legacy")
    os.kill(first, signal.SIGKILL)  # the server dies while the call is parked in its question
    await wait_exit(first)
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    message = tool_messages(out)["c1"]
    assert message.status == "success", text_of(message)
    assert text_of(message) == f"Booked Rome on {TOMORROW}"
    second = event_pids(events, "book_trip_legacy", "commit")
    assert len(second) == 1 and second[0] != first  # re-issued on the new server, answered from storage
    assert "__interrupt__" not in out  # the stored answer answered the replayed question: nobody was asked
    assert child_pids() == {second[0]}


async def start_http_demo(
    port: int, events: Path, log: Path, started: list[subprocess.Popen[bytes]]
) -> subprocess.Popen[bytes]:
    """The demo server over HTTP in a process of its own (appended to ``started`` at once, for the caller to stop),
    returned once uvicorn's log says it listens."""
    env = {**os.environ, "DEMO_EVENTS_FILE": str(events)}
    argv = [sys.executable, "-m", "langgraph_mcp.examples.demo_server", "http", str(port)]
    with log.open("wb") as stderr:
        process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    started.append(process)

    def listening() -> bool:
        assert process.poll() is None, (
            f"the demo server exited ({process.returncode}): {log.read_text()[-2000:]}"
        )
        return b"Uvicorn running on" in log.read_bytes()

    await wait_for_writes(log.parent, listening, bound=20)
    return process


async def test_legacy_http_server_restarted_while_paused_the_answer_is_replayed_on_the_new_session(
    tmp_path: Path,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    events, port = tmp_path / "events.jsonl", free_port()
    started: list[subprocess.Popen[bytes]] = []
    servers = McpServers({"demo": {"url": f"http://127.0.0.1:{port}/mcp", "mode": "legacy"}})
    try:
        first = await start_http_demo(port, events, tmp_path / "first.log", started)
        graph = one_turn_graph(
            servers,
            [call("demo_book_trip_legacy", "c1", destination="Rome")],
            checkpointer,
            policy=NO_APPROVALS,
        )
        out = await graph.ainvoke(start(), config())
        (pending,) = out["__interrupt__"]
        first.kill()  # the server dies while the call is parked in its question (its POST stream open)
        first.wait(HANG_GUARD)
        second = await start_http_demo(port, events, tmp_path / "second.log", started)
        out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
        message = tool_messages(out)["c1"]
        assert message.status == "success", text_of(message)
        assert text_of(message) == f"Booked Rome on {TOMORROW}"
        assert event_pids(events, "book_trip_legacy", "commit") == [second.pid]  # answered from storage there
        assert "__interrupt__" not in out
    finally:
        await servers.aclose()
        for process in started:
            if process.poll() is None:
                process.terminate()
                process.wait(HANG_GUARD)


# ------------------------------------------------------------------------------------------------ item 8


class ChangingServer:
    """A 2026-07-28 server whose ``book`` tool asks ``when`` (a date); ``change()`` adds a required ``time`` field to
    the same request key and refuses request states issued before (as after a redeploy)."""

    def __init__(self) -> None:
        self.version = 1
        self.committed: list[dict[str, Any]] = []
        self.server: Server[Any] = Server("changing", on_list_tools=self._list, on_call_tool=self._call)

    def change(self) -> None:
        self.version = 2

    def _schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {"date": {"type": "string"}}
        if self.version == 2:
            props["time"] = {"type": "string"}
        return {"type": "object", "properties": props, "required": list(props)}

    async def _list(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {}}
        return types.ListToolsResult(tools=[types.Tool(name="book", input_schema=schema)])

    async def _call(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        state, responses = params.request_state, params.input_responses or {}
        if state is not None and state != f"v{self.version}":
            raise MCPError(types.INVALID_PARAMS, "requestState is not valid for this server")
        answer = responses.get("when")
        content = getattr(answer, "content", None) or (
            answer.get("content") if isinstance(answer, dict) else None
        )
        if content is None or set(content) != set(self._schema()["properties"]):
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message="When?", requested_schema=self._schema())
            )
            return types.InputRequiredResult(
                input_requests={"when": request}, request_state=f"v{self.version}"
            )
        self.committed.append(dict(content))
        return types.CallToolResult(content=[types.TextContent(text=f"booked {sorted(content.items())}")])


async def test_modern_server_changed_the_question_the_old_answer_is_shown_and_the_new_question_asked(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = ChangingServer()
    servers = open_servers({"c": {"transport": "in_process", "server": srv.server, "mode": "modern"}})
    graph = one_turn_graph(servers, [call("c_book", "c1")], checkpointer, policy=NO_APPROVALS)
    out = await graph.ainvoke(start(), config())
    (first,) = out["__interrupt__"]
    assert set(first.value["requests"]["when"]["requested_schema"]["properties"]) == {"date"}
    srv.change()
    old = {"when": {"action": "accept", "content": {"date": TOMORROW}}}
    out = await graph.ainvoke(Command(resume={first.id: old}), config())
    # Not forced on the changed question, not an error: the new question, with the old answer as context.
    (second,) = out["__interrupt__"]
    assert second.id != first.id
    assert set(second.value["requests"]["when"]["requested_schema"]["properties"]) == {"date", "time"}
    assert second.value["previous_answers"] == old
    assert srv.committed == []
    new = {"when": {"action": "accept", "content": {"date": TOMORROW, "time": "09:00"}}}
    out = await graph.ainvoke(Command(resume={second.id: new}), config())
    message = tool_messages(out)["c1"]
    assert message.status == "success", text_of(message)
    assert srv.committed == [{"date": TOMORROW, "time": "09:00"}]


async def test_modern_server_changed_the_question_before_a_resume_in_another_process(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    """The durable path: the resume reaches a fresh ``McpServers`` (another worker), so no live round remembers
    what the human was shown; the checkpoint does."""
    srv = ChangingServer()
    spec = {"c": {"transport": "in_process", "server": srv.server, "mode": "modern"}}
    first_worker, second_worker = open_servers(spec), open_servers(spec)
    graph = one_turn_graph(first_worker, [call("c_book", "c1")], checkpointer, policy=NO_APPROVALS)
    out = await graph.ainvoke(start(), config())
    (first,) = out["__interrupt__"]
    srv.change()
    old = {"when": {"action": "accept", "content": {"date": TOMORROW}}}
    graph = one_turn_graph(second_worker, [call("c_book", "c1")], checkpointer, policy=NO_APPROVALS)
    out = await graph.ainvoke(Command(resume={first.id: old}), config())
    (second,) = out["__interrupt__"]
    assert second.id != first.id
    assert set(second.value["requests"]["when"]["requested_schema"]["properties"]) == {"date", "time"}
    assert second.value["previous_answers"] == old
    new = {"when": {"action": "accept", "content": {"date": TOMORROW, "time": "09:00"}}}
    out = await graph.ainvoke(Command(resume={second.id: new}), config())
    assert tool_messages(out)["c1"].status == "success"
    assert srv.committed == [{"date": TOMORROW, "time": "09:00"}]


async def test_a_wrong_answer_to_an_unchanged_question_in_another_process_is_still_refused(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = ChangingServer()
    spec = {"c": {"transport": "in_process", "server": srv.server, "mode": "modern"}}
    first_worker, second_worker = open_servers(spec), open_servers(spec)
    out = await one_turn_graph(
        first_worker, [call("c_book", "c1")], checkpointer, policy=NO_APPROVALS
    ).ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    graph = one_turn_graph(second_worker, [call("c_book", "c1")], checkpointer, policy=NO_APPROVALS)
    wrong = {"when": {"action": "accept", "content": {"date": TOMORROW, "seats": 2}}}
    with pytest.raises(pydantic.ValidationError):
        await graph.ainvoke(Command(resume={pending.id: wrong}), config())
    assert [i.id for i in (await graph.aget_state(config())).interrupts] == [pending.id]


# ------------------------------------------------------------------------------------------------ item 9


async def test_legacy_refused_answer_keeps_the_call_parked_and_the_tool_body_runs_once(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "legacy")})
    graph = one_turn_graph(
        servers,
        [call("demo_book_trip_legacy", "c1", destination="Rome")],
        checkpointer,
        policy=NO_APPROVALS,
    )
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    (key,) = pending.value["requests"]
    with pytest.raises(pydantic.ValidationError):
        await graph.ainvoke(
            Command(resume={pending.id: {key: {"action": "accept", "content": {"date": "soon"}}}}),
            config(),
        )
    assert [i.id for i in (await graph.aget_state(config())).interrupts] == [pending.id]
    assert (
        len(server_access(servers).connections.paused_rounds("demo")) == 1
    )  # still parked, waiting for the corrected answer
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    assert text_of(tool_messages(out)["c1"]) == f"Booked Rome on {TOMORROW}"
    counts = srv.events.counts
    assert counts["book_trip_legacy.enter"] == 1  # the server's tool body ran once
    assert counts["book_trip_legacy.commit"] == 1
    assert counts["server.cancelled"] == 0  # nothing was left open or cancelled on the server


async def test_legacy_refused_answer_on_the_replayed_call_keeps_that_call_parked(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "legacy", park_timeout=0.2)})
    graph = one_turn_graph(
        servers,
        [call("demo_book_trip_legacy", "c1", destination="Rome")],
        checkpointer,
        policy=NO_APPROVALS,
    )
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    (key,) = pending.value["requests"]
    paused = server_access(servers).connections.paused_rounds("demo")
    with anyio.fail_after(10):  # the park timeout ends the first call: the resume takes the durable path
        await srv.events.reached("server.cancelled")
    assert len(paused) == 0
    with pytest.raises(pydantic.ValidationError):
        await graph.ainvoke(
            Command(resume={pending.id: {key: {"action": "accept", "content": {"date": "soon"}}}}),
            config(),
        )
    assert len(paused) == 1  # the replayed call is kept open for the corrected answer, not cancelled
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    assert text_of(tool_messages(out)["c1"]) == f"Booked Rome on {TOMORROW}"
    counts = srv.events.counts
    assert counts["book_trip_legacy.enter"] == 2  # the first attempt, then one replay (not one per answer)
    assert counts["book_trip_legacy.commit"] == 1
