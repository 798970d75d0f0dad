"""Legacy-era calls run concurrently, and a pushed question still always reaches its own call (or is refused).

The server (``tests/support/servers/concurrency_server.py``) counts its calls in flight, so overlap is what the *server*
saw. Its ``ask`` tool asks the same question on every call, so a crossed answer can't be told apart by its text.
"""

from __future__ import annotations

import contextvars
import importlib.metadata
import sys
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Interrupt
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from langgraph_mcp import ApprovalPolicy, McpServers
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import serve_asgi
from tests.support.node_support import call, one_turn_graph, start, text_of, tool_messages
from tests.support.servers.concurrency_server import ConcurrencyServer

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""Not about approvals: the tool node runs every call unasked (since issue 19 it asks about destructive and
unannotated tools by default)."""

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).resolve().parents[1] / "support" / "servers" / "concurrency_server.py"
TRANSPORTS = ["stdio", "streamable_http"]


@asynccontextmanager
async def legacy_server(transport: str, **options: Any) -> AsyncIterator[McpServers]:
    """The concurrency server on ``transport``, forced onto the legacy era, as server ``c``."""
    if transport == "stdio":
        spec = {"c": {"command": sys.executable, "args": [str(SERVER)], "mode": "legacy", **options}}
        async with aclosing(McpServers(spec)) as servers:
            yield servers
        return
    async with (
        serve_asgi(ConcurrencyServer().server.streamable_http_app()) as base,
        aclosing(McpServers({"c": {"url": f"{base}/mcp", "mode": "legacy", **options}})) as servers,
    ):
        yield servers


async def peak(servers: McpServers) -> int:
    result = await servers.call_tool("c_peak")
    return int(text_of_result(result))


def text_of_result(result: Any) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


def answers(interrupts: list[Interrupt]) -> dict[str, Any]:
    """Answer each call's question with a code naming that call."""
    return {
        i.id: {
            key: {"action": "accept", "content": {"code": f"code-{i.value['tool_call_id']}"}}
            for key in i.value["requests"]
        }
        for i in interrupts
    }


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_parallel_legacy_calls_are_in_flight_together(transport: str) -> None:
    async with legacy_server(transport) as servers:
        results = [""] * 8

        async def meet(i: int) -> None:
            results[i] = text_of_result(await servers.call_tool("c_meet", {"n": 8}))

        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(meet, i)
        assert results == ["8"] * 8  # each call saw all eight in flight at once (serialised calls never meet)
        assert await peak(servers) == 8


async def test_over_http_concurrent_questions_reach_their_own_calls(
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    async with legacy_server("streamable_http") as servers:
        calls = [call("c_ask", f"c{i}", tag=f"c{i}", meet=3) for i in range(3)]
        graph = one_turn_graph(servers, calls, checkpointer, policy=NO_APPROVALS)
        cfg: Any = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke(start(), cfg)
        pending = out["__interrupt__"]
        assert sorted(i.value["tool_call_id"] for i in pending) == ["c0", "c1", "c2"]
        out = await graph.ainvoke(Command(resume=answers(pending)), cfg)
        messages = tool_messages(out)
        assert {cid: text_of(m) for cid, m in messages.items()} == {
            f"c{i}": f"c{i}=code-c{i}" for i in range(3)
        }
        assert await peak(servers) == 3  # the three asked while in flight together


async def test_over_stdio_a_question_is_held_until_the_other_calls_finish_then_reaches_its_call(
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    async with legacy_server("stdio") as servers:
        calls = [call("c_ask", "a", tag="a", meet=2), call("c_meet", "m", n=2)]
        graph = one_turn_graph(servers, calls, checkpointer, policy=NO_APPROVALS)
        cfg: Any = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke(start(), cfg)
        (pending,) = out["__interrupt__"]
        assert pending.value["tool_call_id"] == "a"
        assert text_of(tool_messages(out)["m"]) == "2"  # the two were in flight together when "a" asked
        out = await graph.ainvoke(Command(resume=answers([pending])), cfg)
        assert text_of(tool_messages(out)["a"]) == "a=code-a"


async def test_over_stdio_questions_that_cannot_be_told_apart_are_refused_never_crossed() -> None:
    async with legacy_server("stdio") as servers:
        # Three calls of a tool not yet seen to ask, all asking while in flight together: no way to tell whose
        # question is whose on stdio.
        calls = [call("c_ask", f"c{i}", tag=f"c{i}", meet=3) for i in range(3)]
        graph = one_turn_graph(servers, calls, StrictSaver(), policy=NO_APPROVALS)
        out = await graph.ainvoke(start(), {"configurable": {"thread_id": "t1"}})
        assert "__interrupt__" not in out
        for message in tool_messages(out).values():
            assert message.status == "error"
            assert "could not tell which of 3 concurrent tool calls (ask)" in text_of(message)
        # The tool now runs alone: the same three calls pause one after another and each gets its own answer.
        calls = [call("c_ask", f"c{i}", tag=f"c{i}") for i in range(3)]
        graph = one_turn_graph(servers, calls, StrictSaver(), policy=NO_APPROVALS)
        cfg: Any = {"configurable": {"thread_id": "t2"}}
        out = await graph.ainvoke(start(), cfg)
        pending = out["__interrupt__"]
        assert len(pending) == 3
        out = await graph.ainvoke(Command(resume=answers(pending)), cfg)
        messages = tool_messages(out)
        assert {cid: text_of(m) for cid, m in messages.items()} == {
            f"c{i}": f"c{i}=code-c{i}" for i in range(3)
        }


async def test_over_stdio_exclusive_tools_run_alone_from_the_first_call(
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    async with legacy_server("stdio", exclusive_tools=["ask"]) as servers:
        calls = [call("c_ask", f"c{i}", tag=f"c{i}") for i in range(3)] + [call("c_meet", "m", n=1)]
        graph = one_turn_graph(servers, calls, checkpointer, policy=NO_APPROVALS)
        cfg: Any = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke(start(), cfg)
        pending = out["__interrupt__"]
        assert len(pending) == 3
        out = await graph.ainvoke(Command(resume=answers(pending)), cfg)
        messages = tool_messages(out)
        assert {cid: text_of(messages[cid]) for cid in ("c0", "c1", "c2")} == {
            f"c{i}": f"c{i}=code-c{i}" for i in range(3)
        }


@pytest.mark.parametrize("transport", ["streamable_http", "in_process"])
async def test_the_sdk_runs_the_elicitation_callback_in_the_sending_tasks_context(transport: str) -> None:
    """Rule 1 of ``langgraph_mcp.connection.legacy_routing`` rests on this mcp SDK behaviour (its dispatcher propagates the
    sender's contextvars); if an mcp upgrade drops it, questions on these transports fall back to rule 2."""
    sender: contextvars.ContextVar[str | None] = contextvars.ContextVar("sender", default=None)
    seen: list[tuple[str | None, str]] = []

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        seen.append((sender.get(), params.message))
        return types.ElicitResult(action="accept", content={"code": str(sender.get())})

    srv = ConcurrencyServer()

    async def run(target: Any) -> None:
        async with Client(target, mode="legacy", elicitation_callback=on_elicit) as client:

            async def one(i: int) -> None:
                sender.set(f"call{i}")
                result = await client.session.call_tool("ask", {"tag": f"call{i}", "meet": 3})
                assert text_of_result(result) == f"call{i}=call{i}"

            async with anyio.create_task_group() as tg:
                for i in range(3):
                    tg.start_soon(one, i)

    if transport == "in_process":
        await run(srv.server)
    else:
        async with serve_asgi(srv.server.streamable_http_app()) as base:
            await run(streamable_http_client(f"{base}/mcp"))
    assert sorted(s for s, _ in seen) == ["call0", "call1", "call2"], (
        f"mcp {importlib.metadata.version('mcp')} no longer runs the elicitation callback in the sending task's "
        f"context over {transport}: update langgraph_mcp/legacy_routing.py (rule 1): {seen}"
    )
