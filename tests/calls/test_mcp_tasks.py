"""MCP Tasks (SEP-2663) against a real ``fastmcp-tasks`` server on 127.0.0.1: a call answered with a task is
polled to its end, its questions are interrupts, and its handle is kept in the checkpoint."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from mcp import Client

from langgraph_mcp import ApprovalPolicy, McpServers, pending_interrupts, resume_command
from langgraph_mcp.connection.tasks import TasksExtension, get_task
from langgraph_mcp.servers.mcp_servers import server_access
from tests.scale.test_multiworker import pg_dsn, pg_server  # noqa: F401  (the PostgreSQL tier's fixtures)
from tests.support.node_support import call, one_turn_graph, start, text_of, tool_messages
from tests.support.tasks_support import TasksServer, tasks_server, wait_listening

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""These tests are about tasks and sampling, not approvals: the tool node runs every call unasked (the tasks
server's tools carry no annotations, which the default policy asks about)."""


pytestmark = pytest.mark.anyio


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[TasksServer]:
    with tasks_server(tmp_path) as running:
        await wait_listening(running)
        yield running


def servers_for(server: TasksServer, **options: Any) -> McpServers:
    return McpServers({"mcpServers": {"jobs": server.spec(**options)}})


async def test_a_task_that_completes_becomes_its_tool_message(server: TasksServer) -> None:
    server.release()
    servers = servers_for(server)
    try:
        graph = one_turn_graph(
            servers, [call("jobs_crunch", "c1", label="a")], InMemorySaver(), policy=NO_APPROVALS
        )
        config = {"configurable": {"thread_id": "t"}}
        statuses: list[dict[str, Any]] = []
        out: dict[str, Any] = {}
        async for mode, chunk in graph.astream(start(), config, stream_mode=["custom", "values"]):
            if mode == "custom" and chunk.get("type") == "mcp_task_status":
                statuses.append(chunk)
            elif mode == "values":
                out = chunk
        message = tool_messages(out)["c1"]
        assert text_of(message) == "crunched a" and message.status == "success"
        assert len(server.recorded("crunch", "start")) == 1
        assert statuses and statuses[-1]["status"] == "completed"
        assert {s["task_id"] for s in statuses} == {statuses[0]["task_id"]} and statuses[0][
            "tool_call_id"
        ] == "c1"
    finally:
        await servers.aclose()


async def test_a_task_that_asks_becomes_an_elicitation_interrupt_answered_through_tasks_update(
    server: TasksServer,
) -> None:
    servers = servers_for(server)
    try:
        graph = one_turn_graph(
            servers, [call("jobs_ask_name", "c1", greeting="Hello")], InMemorySaver(), policy=NO_APPROVALS
        )
        config = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke(start(), config)
        [item] = pending_interrupts(out)
        assert item.kind == "elicitation" and item.tool_call_id == "c1"
        [(key, request)] = item.elicitation["requests"].items()
        assert request["mode"] == "form" and request["message"] == "What is your name?"
        # A wrong answer is refused before it is saved; the same interrupt stays answerable.
        with pytest.raises(Exception, match="name"):
            await graph.ainvoke(
                resume_command(
                    out["__interrupt__"], answers={"c1": {key: {"action": "accept", "content": {}}}}
                ),
                config,
            )
        out = await graph.ainvoke(
            resume_command(
                out["__interrupt__"], answers={"c1": {key: {"action": "accept", "content": {"name": "Ada"}}}}
            ),
            config,
        )
        assert text_of(tool_messages(out)["c1"]) == "Hello, Ada"
        answered = server.recorded("ask_name", "answered")
        assert [a["content"] for a in answered] == [{"name": "Ada"}]
        assert len(server.recorded("ask_name", "leg")) == 2  # the question's leg and the answer's, once each
    finally:
        await servers.aclose()


async def test_a_decline_cancels_the_task_on_the_server(server: TasksServer) -> None:
    servers = servers_for(server)
    try:
        graph = one_turn_graph(
            servers, [call("jobs_ask_name", "c1", greeting="Hello")], InMemorySaver(), policy=NO_APPROVALS
        )
        config = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke(start(), config)
        [item] = pending_interrupts(out)
        [key] = item.elicitation["requests"]
        out = await graph.ainvoke(
            resume_command(out["__interrupt__"], answers={"c1": {key: {"action": "decline"}}}), config
        )
        message = tool_messages(out)["c1"]
        assert message.status == "error" and "cancelled" in text_of(message)
        task_id = text_of(message).split("of task ")[1].split(";")[0]
        assert await server_status(server, task_id) == "cancelled"
        assert server.recorded("ask_name", "answered") == []  # the tool never got an answer
    finally:
        await servers.aclose()


async def server_status(server: TasksServer, task_id: str) -> str:
    """The task's status as the server reports it to a fresh client (its own record)."""
    async with Client(server.url, extensions=[TasksExtension()]) as client:
        return (await get_task(client.session, task_id)).status


async def test_a_task_past_tool_timeout_is_cancelled(server: TasksServer) -> None:
    servers = servers_for(server, tool_timeout=1.0)
    try:
        graph = one_turn_graph(
            servers, [call("jobs_crunch", "c1", label="slow")], InMemorySaver(), policy=NO_APPROVALS
        )
        out = await graph.ainvoke(start(), {"configurable": {"thread_id": "t"}})
        message = tool_messages(out)["c1"]
        assert message.status == "error"
        assert "did not finish within tool_timeout (1s); it was cancelled (tasks/cancel)" in text_of(message)
        task_id = text_of(message).split("Task ")[1].split(" ")[0]
        assert await server_status(server, task_id) == "cancelled"
        assert server.recorded("crunch", "end") == []
    finally:
        await servers.aclose()


async def test_a_failed_task_is_an_error_tool_message_with_the_servers_message(server: TasksServer) -> None:
    servers = servers_for(server)
    try:
        graph = one_turn_graph(
            servers, [call("jobs_protocol_fault", "c1")], InMemorySaver(), policy=NO_APPROVALS
        )
        out = await graph.ainvoke(start(), {"configurable": {"thread_id": "t"}})
        message = tool_messages(out)["c1"]
        assert message.status == "error"
        assert text_of(message) == "The task failed on the server: the backend refused the job"
    finally:
        await servers.aclose()


async def test_two_tasks_asking_at_once_are_answered_with_one_command(server: TasksServer) -> None:
    servers = servers_for(server)
    try:
        calls = [call("jobs_ask_name", "c1", greeting="Hi"), call("jobs_ask_name", "c2", greeting="Hey")]
        graph = one_turn_graph(servers, calls, InMemorySaver(), policy=NO_APPROVALS)
        config = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke(start(), config)
        items = pending_interrupts(out)
        assert sorted(i.tool_call_id for i in items) == ["c1", "c2"]
        answers = {
            i.tool_call_id: {
                key: {"action": "accept", "content": {"name": "Ada" if i.tool_call_id == "c1" else "Bob"}}
                for key in i.elicitation["requests"]
            }
            for i in items
        }
        out = await graph.ainvoke(resume_command(out["__interrupt__"], answers=answers), config)
        messages = tool_messages(out)
        assert text_of(messages["c1"]) == "Hi, Ada" and text_of(messages["c2"]) == "Hey, Bob"
        assert len(server.recorded("ask_name", "answered")) == 2
    finally:
        await servers.aclose()


async def test_servers_call_tool_and_tasks_off(server: TasksServer) -> None:
    server.release()
    servers = servers_for(server)
    off = McpServers({"mcpServers": {"jobs": server.spec(tasks=False)}})
    try:
        result = await servers.call_tool("jobs_quick", {"label": "x"})
        assert result.content[0].text == "quick x"  # type: ignore[union-attr]
        assert not result.is_error
        # Off: the extension isn't advertised, so the server runs the tool in the foreground.
        result = await off.call_tool("jobs_quick", {"label": "y"})
        assert result.content[0].text == "quick y"  # type: ignore[union-attr]
        assert (
            server_access(off).connections.connection("jobs").offers_tasks is False
            and server_access(servers).connections.connection("jobs").offers_tasks
        )
        assert [e["background"] for e in server.recorded("quick", "start")] == [True, False]
    finally:
        await servers.aclose()
        await off.aclose()


# ------------------------------------------------------------------------------------------ durable handle

CHILD = Path(__file__).resolve().parents[1] / "support" / "tasks_child.py"


async def saved_handles(saver: Any) -> list[dict[str, Any]]:
    """The task handles saved in the thread's checkpoint (pending writes of ``mcp_call_leg``)."""
    found = await saver.aget_tuple({"configurable": {"thread_id": "durable"}})
    if found is None:
        return []
    return [
        value["task"]
        for _, _, value in found.pending_writes or []
        if isinstance(value, dict) and value.get("sent") == "task"
    ]


async def kill_while_running_then_continue(server: TasksServer, where: str, saver: Any) -> dict[str, Any]:
    """Start the call in one process, kill it (SIGKILL) while the task runs, finish it in a fresh process."""
    first = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CHILD),
        where,
        server.url,
        "start",
        "jobs_crunch",
        json.dumps({"label": "once"}),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert first.stdout is not None
        with anyio.fail_after(60):
            while True:
                line = await first.stdout.readline()
                assert line, "the first process ended before its task was seen working"
                if json.loads(line).get("status") == "working":
                    break
            while not await saved_handles(saver):  # on its way into the checkpoint before the first poll
                await anyio.sleep(0.02)
    finally:
        first.kill()
        await first.wait()
    [handle] = await saved_handles(saver)
    assert handle["server"] == "jobs" and handle["tool"] == "crunch" and handle["tool_call_id"] == "c1"
    assert len(server.recorded("crunch", "start")) == 1 and server.recorded("crunch", "end") == []
    server.release()
    second = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CHILD),
        where,
        server.url,
        "continue",
        "jobs_crunch",
        json.dumps({"label": "once"}),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(second.communicate(), 90)
    assert second.returncode == 0
    lines = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    assert {line["task_id"] for line in lines if "task_id" in line} == {handle["task_id"]}
    report: dict[str, Any] = lines[-1]
    return report


async def test_a_killed_process_leaves_the_task_to_the_next_one_which_polls_it(
    server: TasksServer, tmp_path: Path
) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    db = tmp_path / "checkpoints.db"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        await saver.setup()
        report = await kill_while_running_then_continue(server, f"sqlite:{db}", saver)
    assert report["messages"] == {"c1": {"status": "success", "text": "crunched once"}}
    assert len(server.recorded("crunch", "start")) == 1  # the tool body ran once: never called again


async def test_another_worker_on_postgresql_polls_the_task_a_killed_worker_left(
    server: TasksServer,
    pg_dsn: str,  # noqa: F811
) -> None:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
        report = await kill_while_running_then_continue(server, f"postgres:{pg_dsn}", saver)
    assert report["messages"] == {"c1": {"status": "success", "text": "crunched once"}}
    assert len(server.recorded("crunch", "start")) == 1


# ------------------------------------------------------------------------------------------ other paths


async def test_get_tools_in_create_agent_pause_on_a_tasks_question_and_resume(server: TasksServer) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, BaseMessage
    from langgraph.types import Command

    from tests.calls.test_agent_tools import ScriptedModel

    servers = servers_for(server)
    try:
        tools = await servers.get_tools()
        turns: list[BaseMessage] = [
            AIMessage("", tool_calls=[{"name": "jobs_ask_name", "args": {"greeting": "Hi"}, "id": "t1"}]),
            AIMessage("All done."),
        ]
        agent = create_agent(ScriptedModel(messages=iter(turns)), tools, checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": "agent"}}
        out = await agent.ainvoke({"messages": [{"role": "user", "content": "greet me"}]}, config)
        (pending,) = out["__interrupt__"]
        assert pending.value["type"] == "mcp_elicitation" and pending.value["tool_call_id"] == "t1"
        [key] = pending.value["requests"]
        out = await agent.ainvoke(
            Command(resume={pending.id: {key: {"action": "accept", "content": {"name": "Ada"}}}}), config
        )
        assert text_of(tool_messages(out)["t1"]) == "Hi, Ada"
        assert len(server.recorded("ask_name", "leg")) == 2  # the task was never created twice
    finally:
        await servers.aclose()


async def test_a_url_question_of_a_task_is_a_url_request(server: TasksServer) -> None:
    servers = servers_for(server)
    try:
        graph = one_turn_graph(
            servers,
            [call("jobs_visit", "c1", url="https://example.com/login")],
            InMemorySaver(),
            policy=NO_APPROVALS,
        )
        config = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke(start(), config)
        [item] = pending_interrupts(out)
        [(key, request)] = item.elicitation["requests"].items()
        assert request["mode"] == "url" and request["url"] == "https://example.com/login"
        out = await graph.ainvoke(
            resume_command(out["__interrupt__"], answers={"c1": {key: {"action": "accept"}}}), config
        )
        assert text_of(tool_messages(out)["c1"]) == "visited: accept"
    finally:
        await servers.aclose()


def test_a_sync_graph_polls_the_task_in_memory(tmp_path: Path) -> None:
    import anyio.from_thread

    with tasks_server(tmp_path) as running:
        anyio.run(wait_listening, running)
        running.release()
        servers = servers_for(running)
        try:
            graph = one_turn_graph(
                servers, [call("jobs_crunch", "c1", label="sync")], InMemorySaver(), policy=NO_APPROVALS
            )
            out = graph.invoke(start(), {"configurable": {"thread_id": "t"}})
            assert text_of(tool_messages(out)["c1"]) == "crunched sync"
            assert [e["background"] for e in running.recorded("crunch", "start")] == [True]
        finally:
            servers.close()


async def test_a_tasks_status_is_a_tool_output_delta_of_its_call(server: TasksServer) -> None:
    """Under ``stream_mode="tools"`` a task's status changes are ``tool-output-delta`` events of the call's tool
    run (issue 28), so any LangGraph UI shows them in place without knowing MCP."""
    server.release()
    servers = servers_for(server)
    try:
        graph = one_turn_graph(
            servers, [call("jobs_crunch", "c1", label="a")], InMemorySaver(), policy=NO_APPROVALS
        )
        chunks = [
            c async for c in graph.astream(start(), {"configurable": {"thread_id": "t"}}, stream_mode="tools")
        ]
        events = [c["event"] for c in chunks]
        assert events[0] == "tool-started" and events[-1] == "tool-finished"
        deltas = [c["delta"] for c in chunks if c["event"] == "tool-output-delta"]
        assert deltas and all(d["type"] == "mcp_task_status" and d["tool_call_id"] == "c1" for d in deltas)
        assert deltas[-1]["status"] == "completed"
        assert len(server.recorded("crunch", "start")) == 1
    finally:
        await servers.aclose()


class SlowHandleSaver(InMemorySaver):
    """A checkpointer whose write of a task handle lands late: held until the node reads the checkpoint back (what
    waiting for the handle looks like) or the task's first status reaches the stream (a node that did not wait)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.holding = False
        self.events: list[str] = []

    async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if any(isinstance(value, dict) and value.get("sent") == "task" for _, value in writes):
            self.holding = True
            await self.release.wait()
            self.events.append("handle saved")
        await super().aput_writes(config, writes, task_id, task_path)

    async def aget_tuple(self, config: Any) -> Any:
        if self.holding:
            self.release.set()  # the node reads back while the write is pending: let it land
        return await super().aget_tuple(config)


async def test_the_node_polls_a_task_only_once_its_handle_is_in_the_checkpoint(server: TasksServer) -> None:
    server.release()
    saver = SlowHandleSaver()
    servers = servers_for(server)
    try:
        graph = one_turn_graph(servers, [call("jobs_crunch", "c1", label="a")], saver, policy=NO_APPROVALS)
        config = {"configurable": {"thread_id": "t"}}
        out: dict[str, Any] = {}
        async for mode, chunk in graph.astream(start(), config, stream_mode=["custom", "values"]):
            if mode == "custom" and chunk.get("type") == "mcp_task_status":
                saver.events.append("status")
                saver.release.set()
            elif mode == "values":
                out = chunk
    finally:
        await servers.aclose()
    assert text_of(tool_messages(out)["c1"]) == "crunched a"
    assert saver.events[:2] == ["handle saved", "status"]


async def test_a_process_ending_between_tools_call_and_the_handles_checkpoint_write_never_starts_a_second_task(
    server: TasksServer, tmp_path: Path
) -> None:
    """The crash window of a task: the server answered ``tools/call`` with a task, and the process ended (a hook
    the test injects ends it right there) before that answer reached the checkpoint. The next run does not send
    ``tools/call`` again: the call fails saying a task may be running. Counted from the server's record."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    db = tmp_path / "checkpoints.db"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        await saver.setup()
    where, args = f"sqlite:{db}", json.dumps({"label": "once"})
    first = await anyio.run_process(
        [sys.executable, str(CHILD), where, server.url, "start-die-on-task", "jobs_crunch", args], check=False
    )
    assert first.returncode == 9, first.stderr.decode()[-2000:]
    assert '"died_after"' in first.stdout.decode()
    assert len(server.recorded("crunch", "start")) == 1  # the server did create (and start) the task

    second = await anyio.run_process(
        [sys.executable, str(CHILD), where, server.url, "continue", "jobs_crunch", args], check=False
    )
    assert second.returncode == 0, second.stderr.decode()[-2000:]
    report = json.loads(second.stdout.decode().splitlines()[-1])
    message = report["messages"]["c1"]
    assert message["status"] == "error"
    assert "may still be running on the server" in message["text"] and "not sent again" in message["text"]
    assert len(server.recorded("crunch", "start")) == 1  # never a second task
