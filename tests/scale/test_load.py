"""Load: 150 concurrent threads per era against one HTTP server, each paused on a question, then all resumed.

Every thread runs one ``demo_book_trip`` call through ``McpToolNode`` and pauses on the server's date
question: on the legacy era each paused call stays parked inside its ``elicitation/create`` (holding its POST's
SSE response open), on the 2026-07-28 era the round's ``requestState`` waits in memory. Then every thread is
resumed at once with its own date, and each must finish with its own booking (the server's record says each
trip was committed once). Afterwards the process has the file descriptors and child processes it had before.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from langgraph_mcp import McpServers
from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import ERAS, child_pids, http_demo_server
from tests.support.node_support import call, one_turn_graph, start, text_of, tool_messages

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
THREADS = 150
BOUND = 240.0  # seconds for the whole test: a hang fails it instead of waiting forever


def open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


async def wait_for_fds(baseline: set[int], bound: float = 10.0) -> set[int]:
    """Wait (bounded) until every descriptor opened since ``baseline`` is closed; returns those still open."""
    with anyio.move_on_after(bound):
        while open_fds() - baseline:
            await anyio.sleep(0.05)
    return open_fds() - baseline


def describe(fds: set[int]) -> list[str]:
    out = []
    for fd in sorted(fds):
        try:
            out.append(f"{fd} -> {os.readlink(f'/proc/self/fd/{fd}')}")
        except OSError:
            out.append(f"{fd} (closed)")
    return out


@pytest.mark.parametrize("era", ERAS)
async def test_150_paused_threads_over_http_resume_with_their_own_answers(
    era: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    server = build_server()
    fds_before, children_before = open_fds(), child_pids()
    threads = {f"load-{i}": (f"City{i}", f"2027-{i % 12 + 1:02d}-{i % 28 + 1:02d}") for i in range(THREADS)}
    saver = checkpointer

    with anyio.fail_after(BOUND):
        async with (
            http_demo_server(server) as url,
            aclosing(McpServers({"demo": {"url": url, "mode": era}})) as servers,
        ):
            graphs = {
                thread: one_turn_graph(servers, [call("demo_book_trip", "c1", destination=city)], saver)
                for thread, (city, _) in threads.items()
            }

            async def pause(thread: str) -> Any:
                out = await graphs[thread].ainvoke(start(), {"configurable": {"thread_id": thread}})
                [interrupt] = out["__interrupt__"]
                return interrupt

            interrupts = dict(zip(threads, await asyncio.gather(*map(pause, threads)), strict=True))
            assert len({i.id for i in interrupts.values()}) == THREADS
            assert server.events.counts["book_trip.commit"] == 0

            async def resume(thread: str) -> dict[str, Any]:
                interrupt = interrupts[thread]
                answer = {"action": "accept", "content": {"date": threads[thread][1]}}
                value = {key: answer for key in interrupt.value["requests"]}
                return await graphs[thread].ainvoke(
                    Command(resume={interrupt.id: value}), {"configurable": {"thread_id": thread}}
                )

            finished = dict(zip(threads, await asyncio.gather(*map(resume, threads)), strict=True))

    for thread, (city, date) in threads.items():
        out = finished[thread]
        assert "__interrupt__" not in out, thread
        message = tool_messages(out)["c1"]
        assert (message.status, text_of(message)) == ("success", f"Booked {city} on {date}"), thread
    assert server.events.counts["book_trip.commit"] == THREADS
    # Every thread came back on the fast path (nothing fell back to re-issuing): a legacy call was answered inside
    # its one parked request; a modern one sent its answer with the round's requestState (two requests).
    requests_per_call = {"legacy": 1, "modern": 2}[era]
    assert server.events.counts["book_trip.request"] == requests_per_call * THREADS

    leaked = await wait_for_fds(fds_before)
    assert not leaked, f"file descriptors left open: {describe(leaked)}"
    assert child_pids() == children_before


def test_fd_reader_sees_a_new_descriptor(tmp_path: Path) -> None:
    """The descriptor check can fail: an open file shows up, and is gone once closed."""
    before = open_fds()
    with open(tmp_path / "x", "w"):
        assert len(open_fds() - before) == 1
    assert not open_fds() - before
