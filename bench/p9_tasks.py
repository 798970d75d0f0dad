"""P9 MCP Tasks: what a task-answered call adds over the same tool answered directly, and polling's CPU.

Server: ``bench/servers/tasks_server.py`` (``fastmcp-tasks``, memory backend) over streamable HTTP on 127.0.0.1.

* **Added cost** — the same ``echo`` tool through the same graph (``agent → route_tool_calls → McpToolNode``,
  ``InMemorySaver``, a new thread per call), interleaved: ``tasks`` on (the server answers with a task: the
  ``mcp_call_leg`` @task saves the handle, then ``tasks/get`` until completed) vs ``tasks`` off (the server runs
  the tool in the foreground). Reported per call: time, and HTTP requests the server saw (its access log). The
  task's first ``tasks/get`` usually finds it done; a task still ``working`` adds one poll interval (the server's
  ``pollIntervalMs``, here 20 ms, floored at ``task_poll_floor``).
* **Polling CPU** — 100 ``hold`` tasks at once through ``McpToolNode`` (one ``Send`` each) while the server says
  ``pollIntervalMs`` 1000: this process's CPU time per second of waiting, and ``tasks/get`` per second.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from bench.common import PY, Section, Summary, free_port, interleave, main
from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode, route_tool_calls

SERVER = Path(__file__).resolve().parent / "servers" / "tasks_server.py"
_ids = itertools.count()


@contextmanager
def tasks_server(interval_ms: int, workdir: Path) -> Iterator[tuple[str, Path, Path]]:
    """The server in its own process; yields its URL, its access log and its release file."""
    port = free_port()
    log, release = workdir / f"access-{port}.log", workdir / f"release-{port}"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [PY, str(SERVER), str(port), str(interval_ms), str(release)], stdout=sink, stderr=sink
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"tasks server did not start (exit code {proc.poll()})") from None
                time.sleep(0.05)  # a port opening in another process: nothing to await on
        yield f"http://127.0.0.1:{port}/mcp", log, release
    finally:
        proc.terminate()
        proc.wait(10)


def requests_seen(log: Path) -> int:
    return sum(1 for line in log.read_text(errors="replace").splitlines() if "POST /mcp" in line)


def graph_for(servers: McpServers, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    async def agent(state: MessagesState) -> dict[str, Any]:
        tool_calls = [
            {"name": name, "args": args, "id": f"c{next(_ids)}", "type": "tool_call"} for name, args in calls
        ]
        return {"messages": [AIMessage("", tool_calls=tool_calls)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    # The tasks server's tools are unannotated: the node would ask about each (issue 19); this measures calls.
    builder.add_node("tools", McpToolNode(servers, policy=ApprovalPolicy(tools={"*": "allow"})))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=InMemorySaver())


async def added_cost(quick: bool, workdir: Path) -> tuple[list[list[str]], dict[str, Any]]:
    with tasks_server(20, workdir) as (url, log, _):
        on = McpServers({"jobs": {"url": url, "mode": "modern"}})
        off = McpServers({"jobs": {"url": url, "mode": "modern", "tasks": False}})
        try:
            graphs = {
                "tasks off (answered directly)": graph_for(off, [("jobs_echo", {"text": "x"})]),
                "tasks on (answered with a task)": graph_for(on, [("jobs_echo", {"text": "x"})]),
            }
            requests: dict[str, list[float]] = {name: [] for name in graphs}

            def runner(name: str) -> Any:
                async def run(n: int) -> float:
                    before, began = requests_seen(log), time.perf_counter()
                    for _ in range(n):
                        config = {"configurable": {"thread_id": f"t{next(_ids)}"}}
                        out = await graphs[name].ainvoke({"messages": []}, config)
                        assert out["messages"][-1].status == "success", out["messages"][-1]
                    elapsed = time.perf_counter() - began
                    await asyncio.sleep(0.2)  # let the access log catch up (written by another process)
                    requests[name].append((requests_seen(log) - before) / n)
                    return elapsed

                return run

            comparison = await interleave(
                {name: runner(name) for name in graphs},
                blocks=3 if quick else 8,
                per_block=5 if quick else 25,
                baseline="tasks off (answered directly)",
            )
        finally:
            await on.aclose()
            await off.aclose()
    rows = []
    for name, values in comparison.times.items():
        ratio = Summary.of(comparison.ratios(name))
        seen = Summary.of(requests[name][1:] or requests[name])  # the first block includes the warm-up's
        rows.append([name, Summary.of(values).ms(), ratio.ratio(), f"{seen.median:.2f}"])
    return rows, {"comparison": comparison.as_dict(), "requests_per_call": requests}


async def polling_cpu(quick: bool, workdir: Path) -> tuple[list[str], dict[str, Any]]:
    count, window = (20, 3.0) if quick else (100, 10.0)
    with tasks_server(1000, workdir) as (url, log, release):
        servers = McpServers({"jobs": {"url": url, "mode": "modern", "tool_timeout": 300}})
        try:
            graph = graph_for(servers, [("jobs_hold", {"label": f"h{i}"}) for i in range(count)])
            statuses: set[str] = set()
            seen_working = asyncio.Event()

            async def run() -> Any:
                out: Any = None
                config = {"configurable": {"thread_id": f"t{next(_ids)}"}}
                async for mode, chunk in graph.astream(
                    {"messages": []}, config, stream_mode=["custom", "values"]
                ):
                    if mode == "custom" and chunk.get("type") == "mcp_task_status":
                        statuses.add(chunk["task_id"])
                        if len(statuses) == count:
                            seen_working.set()
                    elif mode == "values":
                        out = chunk
                return out

            job = asyncio.create_task(run())
            await asyncio.wait_for(seen_working.wait(), 120)
            before_requests, cpu, began = requests_seen(log), time.process_time(), time.perf_counter()
            await asyncio.sleep(window)
            cpu_used, elapsed = time.process_time() - cpu, time.perf_counter() - began
            gets = requests_seen(log) - before_requests
            release.touch()
            out = await asyncio.wait_for(job, 120)
            done = [m for m in out["messages"] if getattr(m, "status", None) == "success"]
            assert len(done) == count, f"{len(done)} of {count} tasks finished"
        finally:
            await servers.aclose()
    row = [
        f"{count} tasks waiting, pollIntervalMs 1000",
        f"{cpu_used / elapsed * 100:.2f} % of a core",
        f"{gets / elapsed:.1f} tasks/get per s",
    ]
    return row, {"tasks": count, "cpu_fraction": cpu_used / elapsed, "gets_per_second": gets / elapsed}


async def measure(quick: bool) -> Section:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        rows, cost = await added_cost(quick, workdir)
        poll_row, poll = await polling_cpu(quick, workdir)
    section = Section(
        "p9",
        "P9 MCP Tasks: a task-answered call vs the same tool answered directly; polling CPU",
        ["variant", "per call", "ratio", "HTTP requests per call"],
        rows=[*rows, [poll_row[0], poll_row[1], "", poll_row[2]]],
        data={"added_cost": cost, "polling": poll},
        notes=[
            "Same server, same tool, same graph; `tasks` on vs off on the client, interleaved blocks.",
            "Polling row: this process's CPU per second while every task waits (no answer yet), and the "
            "tasks/get rate the server saw (its access log).",
        ],
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
