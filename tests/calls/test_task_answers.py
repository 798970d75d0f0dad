"""What a tasks server may not do to a call: ask forever across resumes, or answer ``tasks/get`` falsely.

Against the real ``fastmcp-tasks`` server (``tests/support/servers/tasks_server.py``): ``ask_forever`` asks a new question
after every answer; ``tell``'s ``tasks/get`` answers with another task's ``taskId`` (and its result), or says
``completed`` with no ``result``. Counted from the server's own record.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_mcp import ApprovalPolicy, McpServers, pending_interrupts, resume_command
from tests.support.node_support import call, one_turn_graph, start, text_of, tool_messages
from tests.support.tasks_support import TasksServer, tasks_server, wait_listening

pytestmark = pytest.mark.anyio
NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[TasksServer]:
    with tasks_server(tmp_path) as running:
        await wait_listening(running)
        yield running


def servers_for(server: TasksServer, **options: Any) -> McpServers:
    return McpServers({"mcpServers": {"jobs": server.spec(**options)}})


async def test_a_task_asking_after_every_answer_stops_at_max_elicitation_rounds_across_resumes(
    server: TasksServer,
) -> None:
    servers = servers_for(server, max_elicitation_rounds=3)
    try:
        graph = one_turn_graph(
            servers, [call("jobs_ask_forever", "c1")], InMemorySaver(), policy=NO_APPROVALS
        )
        config = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke(start(), config)
        asked: list[str] = []
        for _ in range(10):  # far more than the cap: the call must end before
            pending = pending_interrupts(out)
            if not pending:
                break
            [item] = pending
            [key] = item.elicitation["requests"]
            asked.append(key)
            answer = {"c1": {key: {"action": "accept", "content": {"n": len(asked)}}}}
            out = await graph.ainvoke(resume_command(out["__interrupt__"], answers=answer), config)
        assert len(asked) == 3 and len(set(asked)) == 3  # three different questions, then no more
        message = tool_messages(out)["c1"]
        assert message.status == "error"
        assert "more than 3" in text_of(message) and "max_elicitation_rounds" in text_of(message)
        assert len(server.recorded("ask_forever", "leg")) == 4  # the question legs of q1..q3 and the fourth's
    finally:
        await servers.aclose()


@pytest.mark.parametrize(
    ("lie", "said"),
    [
        ("other-task", "with another task's id"),
        ("no-result", "status 'completed' with no 'result'"),
    ],
)
async def test_a_false_tasks_get_answer_is_an_error_tool_message_saying_what_the_server_sent(
    server: TasksServer, lie: str, said: str
) -> None:
    servers = servers_for(server)
    try:
        graph = one_turn_graph(
            servers, [call("jobs_tell", "c1", lie=lie)], InMemorySaver(), policy=NO_APPROVALS
        )
        out = await graph.ainvoke(start(), {"configurable": {"thread_id": "t"}})
        message = tool_messages(out)["c1"]
        assert message.status == "error", text_of(message)
        assert said in text_of(message)
        assert "another task's result" not in text_of(message)
        assert [e["lie"] for e in server.recorded("tell", "lied")] == [lie]  # the server did lie, once
    finally:
        await servers.aclose()
