"""P6 resume: one elicitation round trip (``book_trip`` asks for a date) with ``AsyncSqliteSaver``, over stdio.

For each era: the graph pauses on the question, then resumes with the answer either in the same process (same
``McpServers``, same saver: the fast path) or after a restart (everything closed, a new ``McpServers`` and a new
saver on the same database file: the durable path). Reported: the time the question adds over a plain call through
the same graph (pause leg + resume leg − one ``echo`` run) and the ``tools/call`` requests the server saw.
``langchain.mcp`` (``MCPAdapter`` tools in ``ToolNode``, interrupt-based elicitation) is measured on the same server
in its own venv (modern era only: it answers 2026-07-28 ``InputRequiredResult`` rounds, not pushed questions).
"""

from __future__ import annotations

import itertools
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command

from bench import peers
from bench.common import DEMO_ARGS, ERAS, PY, Section, Summary, demo_stdio, main
from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode, route_tool_calls

_ids = itertools.count()
ANSWER_DATE = "2027-01-15"
PLAIN_RUNS = 4


class State(MessagesState):
    tool: str


def graph_for(servers: McpServers, saver: Any) -> Any:
    async def agent(state: State) -> dict[str, Any]:
        if state["messages"]:
            return {}
        tool = state["tool"]
        args = {"destination": "Lima"} if tool == "book_trip" else {"text": "hi"}
        call = {"name": f"demo_{tool}", "args": args, "id": f"c{next(_ids)}", "type": "tool_call"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    # The plain baseline calls ``echo``, which declares no annotations: the default policy would ask a human
    # about it (the spec's defaults make it destructive). Allowed here: P6 times a server's question, not a gate.
    builder.add_node("tools", McpToolNode(servers, policy=ApprovalPolicy(tools={"demo_echo": "allow"})))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=saver)


def answers_for(interrupt: Any) -> dict[str, Any]:
    return {
        key: {"action": "accept", "content": {"date": ANSWER_DATE}} for key in interrupt.value["requests"]
    }


def requests_seen(events: Path, tool: str) -> int:
    if not events.exists():
        return 0
    lines = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    return sum(1 for e in lines if e["tool"] == tool and e["event"] == "request")


async def round_trip(era: str, workdir: Path, *, restart: bool) -> dict[str, float]:
    events = workdir / f"events-{next(_ids)}.jsonl"
    spec = demo_stdio(era, env={"DEMO_EVENTS_FILE": str(events)})
    db = str(workdir / "checkpoints.sqlite")
    servers = McpServers({"demo": spec})
    saver_cm = AsyncSqliteSaver.from_conn_string(db)
    saver = await saver_cm.__aenter__()
    try:
        await servers.list_tools()
        graph = graph_for(servers, saver)
        plains = []
        for _ in range(PLAIN_RUNS):  # the first one warms the graph and the connection up
            plain_cfg: Any = {"configurable": {"thread_id": f"plain-{next(_ids)}"}}
            began = time.perf_counter()
            out = await graph.ainvoke({"messages": [], "tool": "echo"}, plain_cfg)
            plains.append(time.perf_counter() - began)
            reply = out["messages"][-1]
            assert isinstance(reply, ToolMessage) and reply.status == "success", out
        plain = statistics.median(plains[1:])

        cfg: Any = {"configurable": {"thread_id": f"ask-{next(_ids)}"}}
        began = time.perf_counter()
        out = await graph.ainvoke({"messages": [], "tool": "book_trip"}, cfg)
        pause = time.perf_counter() - began
        (pending,) = out["__interrupt__"]
        if restart:
            await servers.aclose()
            await saver_cm.__aexit__(None, None, None)
            servers = McpServers({"demo": spec})
            saver_cm = AsyncSqliteSaver.from_conn_string(db)
            saver = await saver_cm.__aenter__()
            graph = graph_for(servers, saver)
            await servers.list_tools()  # a restarted app connects at start-up, not inside the resume
        began = time.perf_counter()
        out = await graph.ainvoke(Command(resume={pending.id: answers_for(pending)}), cfg)
        resume = time.perf_counter() - began
        reply = out["messages"][-1]
        assert isinstance(reply, ToolMessage) and reply.status == "success", out
        assert ANSWER_DATE in str(reply.content), reply
    finally:
        await servers.aclose()
        await saver_cm.__aexit__(None, None, None)
    return {
        "plain": plain,
        "pause": pause,
        "resume": resume,
        "added": pause + resume - plain,
        "requests": requests_seen(events, "book_trip"),
    }


async def measure(quick: bool) -> Section:
    reps = 2 if quick else 4
    section = Section(
        "p6",
        "P6 resume: one elicitation round trip with AsyncSqliteSaver (stdio)",
        [
            "client",
            "era",
            "path",
            "added ms: median [p25–p75]",
            "pause leg",
            "resume leg",
            "tools/call requests",
        ],
    )
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for era in ERAS:
            for restart in (False, True):
                runs = [await round_trip(era, workdir, restart=restart) for _ in range(reps)]
                path = "after restart" if restart else "same process"
                add_row(section, "langgraph-mcp", era, path, runs)
        peer = peers.run_side(
            "lcmcp",
            "lcmcp_side.py",
            "resume",
            "--server-python",
            PY,
            "--server-args",
            json.dumps([*DEMO_ARGS, "stdio"]),
            "--workdir",
            str(workdir),
            "--reps",
            str(reps),
        )
        if "error" in peer:
            section.notes.append(f"langchain.mcp not measured: {peer['error']}")
        else:
            for path, runs in peer["runs"].items():
                add_row(section, f"langchain.mcp {peer['version']}", "modern", path, runs)
    section.notes.append(
        f"{reps} round trips per row. `added ms` = pause leg + resume leg − a plain `echo` run through the same "
        "graph (median of 3 after a warm-up); after a restart the new client is connected before the resume is timed. Requests are `tools/call book_trip` as recorded by the server (every attempt and round)."
    )
    return section


def add_row(section: Section, client: str, era: str, path: str, runs: list[dict[str, float]]) -> None:
    added = Summary.of([r["added"] for r in runs])
    pause = Summary.of([r["pause"] for r in runs]).median
    resume = Summary.of([r["resume"] for r in runs]).median
    requests = sorted({int(r["requests"]) for r in runs})
    section.rows.append(
        [
            client,
            era,
            path,
            f"{added.median * 1e3:.1f} [{added.p25 * 1e3:.1f}–{added.p75 * 1e3:.1f}]",
            f"{pause * 1e3:.1f} ms",
            f"{resume * 1e3:.1f} ms",
            "/".join(map(str, requests)),
        ]
    )
    section.data[f"{client}/{era}/{path}"] = runs


if __name__ == "__main__":
    main(__doc__ or "", measure)
