"""P12 memory: what looking up a remembered decision costs the approval gate, side by side with a call without memory.

Two tables, each measured in interleaved blocks (every variant once per block, in a rotating order), so the ratios
compare variants run at the same moment on the same box:

* **The lookup** (µs per asked call, gc off): the gate's work for a call the policy asks about when no memory is
  involved — ``policy.verdict`` and the ``mcp_approval`` payload — is the 1.00× row; the other rows add
  ``arecall`` (what ``GateCheck`` runs per asked call): without a store (thread memory read from 20 messages), with
  an empty store, and with a hit (a signed entry found and verified), for ``InMemoryStore`` and ``AsyncSqliteStore``
  (a file). A hit builds no payload (the remembered decision answers the call).
* **A turn** (ms per turn: agent → gate → tools → agent over the in-process demo server, a new thread each turn):
  the destructive call allowed by a policy rule (no memory involved) vs the same call asked about and answered by a
  remembered approval for the principal (``InMemoryStore``). Both run the tool body once per turn (the server's
  own ``delete_file.enter`` count; the in-process workspace is shared, so after the first turn the file is gone and
  the tool says so: the same work for both variants).
"""

from __future__ import annotations

import gc
import itertools
import logging
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite.aio import AsyncSqliteStore
from langgraph.types import Command

from bench.common import Section, Summary, main
from langgraph_mcp.approval.audit import AUDIT_LOGGER
from langgraph_mcp.approval.memory import arecall, aremember, signed_entry
from langgraph_mcp.approval.oversight import signer_for
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.graph.gate import create_approval_gate, route_through_gate
from langgraph_mcp.graph.node import McpToolNode, ToolCallsDone
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.approval import approval_payload
from langgraph_mcp.servers.mcp_servers import McpServers

PRINCIPAL = "ann"
HISTORY = 20  # messages in the thread a store-less lookup reads
_ids = itertools.count()


def _delete_call() -> ToolCall:
    return {
        "name": "demo_delete_file",
        "args": {"path": "todo.txt"},
        "id": f"c{next(_ids)}",
        "type": "tool_call",
    }


def _history() -> list[Any]:
    out: list[Any] = []
    for i in range(HISTORY // 2):
        out.append(AIMessage("", tool_calls=[{"name": "demo_list_files", "args": {}, "id": f"h{i}"}]))
        out.append(ToolMessage("notes.txt todo.txt", tool_call_id=f"h{i}"))
    return out


async def _per_call(fn: Callable[[], Awaitable[Any]], calls: int) -> float:
    began = time.perf_counter()
    for _ in range(calls):
        await fn()
    return (time.perf_counter() - began) / calls


async def _interleaved(
    variants: dict[str, Callable[[], Awaitable[float]]], blocks: int
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for block in range(blocks):
        for name in names[block % len(names) :] + names[: block % len(names)]:
            times[name].append(await variants[name]())
    return times


def _rows(section: Section, times: dict[str, list[float]], base: str, unit: float, fmt: str) -> None:
    for name, values in times.items():
        summary = Summary.of([t * unit for t in values])
        ratio = Summary.of([a / b for a, b in zip(values, times[base], strict=True)])
        added = Summary.of([(a - b) * unit for a, b in zip(values, times[base], strict=True)])
        section.rows.append(
            [
                name,
                f"{summary.median:{fmt}} [{summary.p25:{fmt}}–{summary.p75:{fmt}}]",
                "1.00×" if name == base else f"{ratio.median:.2f}× [{ratio.p25:.2f}–{ratio.p75:.2f}]",
                "—" if name == base else f"{added.median:+{fmt}}",
            ]
        )
        section.data[name] = {
            "per_call": summary.as_dict(),
            "ratio": ratio.as_dict(),
            "added": added.as_dict(),
        }


async def _lookup_table(servers: McpServers, section: Section, quick: bool) -> None:
    blocks, calls = (7, 500) if quick else (15, 2_000)
    [tool] = [t for t in await servers.list_tools() if t.published_name == "demo_delete_file"]
    policy = ApprovalPolicy()
    signer = signer_for(servers)
    key, identity = signer.key, signer.server_identity("demo")
    call = _delete_call()
    verdict = policy.verdict(call, tool, principal=PRINCIPAL)
    assert verdict.needs_approval and verdict.remember == "any_args", verdict
    history = _history()

    def entry() -> Any:
        return signed_entry(
            key,
            scope="principal",
            owner=PRINCIPAL,
            server="demo",
            identity=identity,
            tool=tool.name,
            definition_hash=tool.definition_hash,
            decision={"type": "approve"},
            arguments=call["args"],
            same_args=False,
            rule=verdict.rule,
            now=time.time(),
            tool_call_id="c-remembered",
        )

    empty_mem, hit_mem = InMemoryStore(), InMemoryStore()
    assert await aremember(hit_mem, entry())
    folder = Path(tempfile.mkdtemp(prefix="lgmcp-p12-"))
    async with (
        AsyncSqliteStore.from_conn_string(str(folder / "empty.sqlite")) as empty_sql,
        AsyncSqliteStore.from_conn_string(str(folder / "hit.sqlite")) as hit_sql,
    ):
        await empty_sql.setup()
        await hit_sql.setup()
        assert await aremember(hit_sql, entry())

        async def lookup(store: Any) -> Any:
            return await arecall(
                store,
                history,
                key,
                verdict,
                tool,
                identity=identity,
                thread_id="t-bench",
                principal=PRINCIPAL,
                arguments=call["args"],
            )

        for store, hit in (
            (None, False),
            (empty_mem, False),
            (hit_mem, True),
            (empty_sql, False),
            (hit_sql, True),
        ):
            assert ((await lookup(store)).decision is not None) == hit  # each variant does what its row says

        async def without_memory() -> Any:
            judged = policy.verdict(call, tool, principal=PRINCIPAL)
            return approval_payload(call, tool, judged)

        def asked(store: Any) -> Callable[[], Awaitable[Any]]:
            async def run() -> Any:
                judged = policy.verdict(call, tool, principal=PRINCIPAL)
                found = await lookup(store)
                return found if found.decision is not None else approval_payload(call, tool, judged)

            return run

        fns: dict[str, Callable[[], Awaitable[Any]]] = {
            "asked, no memory (verdict + payload)": without_memory,
            "+ lookup, no store (thread memory in 20 messages)": asked(None),
            "+ lookup, empty InMemoryStore": asked(empty_mem),
            "+ lookup, hit in InMemoryStore (no payload)": asked(hit_mem),
            "+ lookup, empty AsyncSqliteStore": asked(empty_sql),
            "+ lookup, hit in AsyncSqliteStore (no payload)": asked(hit_sql),
        }

        def timed(fn: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[float]]:
            return lambda: _per_call(fn, calls)

        gc.disable()
        try:
            times = await _interleaved({name: timed(fn) for name, fn in fns.items()}, blocks)
        finally:
            gc.enable()
    _rows(section, times, "asked, no memory (verdict + payload)", 1e6, ".1f")
    section.notes.append(
        f"The lookup: {blocks} interleaved blocks of {calls:,} calls each, gc off; µs per call; ratio and added "
        "µs per block against the first row of the same block."
    )


def _turn_graph(servers: McpServers, policy: ApprovalPolicy, store: Any) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        if not isinstance(state["messages"][-1], HumanMessage):
            return {"messages": [AIMessage("done")]}
        return {"messages": [AIMessage("", tool_calls=[_delete_call()])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers, policy))
    builder.add_node("tools", McpToolNode(servers, policy=policy))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges(
        "agent", route_through_gate(servers, policy), ["approval_gate", "tools", END]
    )
    builder.add_edge("approval_gate", "tools")
    builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=InMemorySaver(), store=store)


async def _turn_table(servers: McpServers, srv: Any, section: Section, quick: bool) -> None:
    blocks, turns = (5, 20) if quick else (15, 60)
    store = InMemoryStore()
    allowed = _turn_graph(servers, ApprovalPolicy(tools={"demo_delete_file": "allow"}), store)
    asked = _turn_graph(servers, ApprovalPolicy(), store)

    def config() -> Any:
        return {"configurable": {"thread_id": f"t{next(_ids)}", "user_id": PRINCIPAL}}

    first = config()  # remember an approval for the principal once, the way a human does
    out = await asked.ainvoke({"messages": [HumanMessage("go")]}, first)
    [pending] = out["__interrupt__"]
    await asked.ainvoke(Command(resume={pending.id: {"type": "approve", "remember": "principal"}}), first)

    async def turn(graph: Any) -> None:
        out = await graph.ainvoke({"messages": [HumanMessage("go")]}, config())
        # the server ran the body (the in-process workspace is shared: after the first turn the file is gone)
        assert "__interrupt__" not in out and "todo.txt" in out["messages"][-2].text, out

    def timed(graph: Any) -> Callable[[], Awaitable[float]]:
        async def run() -> float:
            began = time.perf_counter()
            for _ in range(turns):
                await turn(graph)
            return (time.perf_counter() - began) / turns

        return run

    ran_before = srv.events.counts["delete_file.enter"]
    names = {"allowed by a rule (no memory)": allowed, "asked, answered by a remembered approval": asked}
    for graph in names.values():
        await turn(graph)  # warm
    times = await _interleaved({name: timed(graph) for name, graph in names.items()}, blocks)
    ran = srv.events.counts["delete_file.enter"] - ran_before
    assert ran == 2 + 2 * blocks * turns, ran  # every turn of both variants ran the tool once
    _rows(section, times, "allowed by a rule (no memory)", 1e3, ".2f")
    section.notes.append(
        f"A turn: {blocks} interleaved blocks of {turns} turns each (gc on), ms per turn; the server's own record "
        f"shows the tool ran {ran} times (once per turn, both variants)."
    )


async def measure(quick: bool) -> Section:
    srv = build_server()
    # one mcp_decision record and one server log line per turn would flood the output (and time the logging)
    AUDIT_LOGGER.setLevel(logging.WARNING)
    logging.getLogger().setLevel(logging.WARNING)
    servers = McpServers({"demo": {"transport": "in_process", "server": srv, "mode": "modern"}})
    section = Section(
        "p12",
        "P12 memory: the remembered-decision lookup vs a call without memory",
        ["variant", "per call: µs (lookup) / ms (turn), median [p25–p75]", "× the first row", "added"],
    )
    try:
        await _lookup_table(servers, section, quick)
        section.rows.append(["—", "—", "—", "—"])
        await _turn_table(servers, srv, section, quick)
    finally:
        await servers.aclose()
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
