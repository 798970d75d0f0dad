"""P1 per-call cost over stdio, both eras: raw ``mcp`` session vs ``servers.call_tool`` vs graphs around each.

Variants (one fast ``add`` call each, interleaved in one process):

* ``raw session`` — ``mcp.Client.call_tool`` on an open session (the floor).
* ``servers.call_tool`` — ``McpServers.call_tool`` by published name.
* ``raw session, own task`` (legacy) — the raw call awaited in a task of its own, its result handed back through a
  future: the floor of a call that can stay open ("parked") after its caller was interrupted, which is how a legacy
  call runs (mcp 2.3 awaits a response inside the frame that sent the request, so it can't move there later).
* ``graph: McpToolNode`` — a compiled graph ``agent → tools`` with ``McpToolNode`` (plain edge).
* ``graph: McpToolNode via Send`` — the same with ``route_tool_calls`` (one ``Send`` per call, the standard wiring).
* ``graph: McpToolNode, decision checked`` — the policy asks about ``demo_add``; the model's turn carries a decision
  signed for the call (what the gate leaves), which the node verifies (HMAC, digests) before sending.
* ``graph: McpToolNode, unchecked`` — the node with its proof and its listing check skipped (issue 19's cost floor:
  the two rows above against this one are what the binding and the node's check cost).
* ``graph: hand-written node`` — the same graph, the node awaiting the raw session and building a ToolMessage.
* ``graph: ToolNode(get_tools())`` — LangGraph's ``ToolNode`` with this package's LangChain tools.
* ``… + tracer`` — the McpToolNode and ToolNode graphs with a callback handler attached (it keeps every tool
  run's start and end, as a tracer would): what a listener costs. Without one, no tool run is built (#28).

Graph rows are compared with the hand-written graph as well as with the raw session, and with the unchecked node.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from contextlib import AsyncExitStack
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench.common import DEMO_ARGS, ERAS, PY, Comparison, Section, demo_stdio, era_mode, interleave, main
from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode, route_tool_calls
from langgraph_mcp.approval.judge import Proof
from langgraph_mcp.approval.oversight import signer_for
from langgraph_mcp.policy.policy import Verdict

_ids = itertools.count()


async def agent(state: MessagesState) -> dict[str, Any]:  # async: a sync node would run in a thread
    call = {"name": "demo_add", "args": {"a": 1, "b": 2}, "id": f"c{next(_ids)}", "type": "tool_call"}
    return {"messages": [AIMessage("", tool_calls=[call])]}


def signed_agent(servers: McpServers) -> Any:
    """The model's turn as the gate leaves it: a call with a decision signed for it. A decision runs its call at
    most once, so every run gets a call of its own; the decisions are signed ahead, in batches outside the
    timed node (signing is the gate's work, once per decision; verifying it is the node's, on every call)."""
    tool = servers.cached_tool("demo_add")
    assert tool is not None
    args = {"a": 1, "b": 2}
    signer = signer_for(servers)
    ready: list[tuple[str, dict[str, Any]]] = []

    def sign_batch(size: int = 256) -> None:
        for _ in range(size):
            call_id = f"c-signed-{next(_ids)}"
            binding = signer.key.sign(
                "approve",
                thread_id="",
                tool_call_id=call_id,
                server=tool.server,
                identity=signer.server_identity(tool.server),
                tool=tool.name,
                definition_hash=tool.definition_hash,
                arguments=args,
            )
            ready.append(
                (
                    call_id,
                    {"server": tool.server, "tool": tool.name, "verdict": "approve", "binding": binding},
                )
            )

    async def signed(state: MessagesState) -> dict[str, Any]:
        if not ready:
            sign_batch()
        call_id, record = ready.pop()
        call = {"name": "demo_add", "args": dict(args), "id": call_id, "type": "tool_call"}
        return {
            "messages": [AIMessage("", tool_calls=[call], response_metadata={"mcp_gate": {call_id: record}})]
        }

    sign_batch()
    return signed


class UncheckedNode(McpToolNode):
    """``McpToolNode`` without its proof: the floor the checked node is measured against (its target's listing check,
    an attribute read before the send, stays)."""

    def _prove(self, call: Any, resolution: Any, record: Any) -> Proof:
        return Proof(Verdict.allow("unchecked"), True)


def graph_with(node: Any, *, send: bool = False, model: Any = agent) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", model)
    builder.add_node("tools", node)
    builder.add_edge(START, "agent")
    if send:
        builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    else:
        builder.add_edge("agent", "tools")
    builder.add_edge("tools", END)
    return builder.compile()


class ToolRunCollector(BaseCallbackHandler):
    """A minimal tracer: keeps what every tool run's start and end say (LangSmith's tracer does more)."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, Any]] = []

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kwargs: Any) -> None:
        self.runs.append(("start", kwargs.get("metadata")))

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.runs.append(("end", output))


async def raw_client(stack: AsyncExitStack, era: str) -> Client:
    params = StdioServerParameters(command=PY, args=[*DEMO_ARGS, "stdio"])
    client = await stack.enter_async_context(Client(stdio_client(params), mode=era_mode(era)))
    return client


async def variants_for(stack: AsyncExitStack, era: str) -> dict[str, Any]:
    client = await raw_client(stack, era)
    servers = McpServers({"demo": demo_stdio(era)})
    stack.push_async_callback(servers.aclose)
    await servers.list_tools()
    lc_tools = await servers.get_tools()

    async def hand_written(state: MessagesState) -> dict[str, Any]:
        call = state["messages"][-1].tool_calls[0]  # type: ignore[union-attr]
        result = await client.call_tool("add", call["args"])
        text = "".join(getattr(block, "text", "") for block in result.content)
        return {"messages": [ToolMessage(text, tool_call_id=call["id"], name=call["name"])]}

    graphs = {
        "graph: McpToolNode": graph_with(McpToolNode(servers)),
        "graph: McpToolNode via Send": graph_with(McpToolNode(servers), send=True),
        "graph: McpToolNode, decision checked": graph_with(
            McpToolNode(servers, policy=ApprovalPolicy(tools={"demo_add": "ask"})),
            model=signed_agent(servers),
        ),
        "graph: McpToolNode, unchecked": graph_with(UncheckedNode(servers)),
        "graph: hand-written node": graph_with(hand_written),
        "graph: ToolNode(get_tools())": graph_with(ToolNode(lc_tools)),
    }

    async def raw(n: int) -> None:
        for _ in range(n):
            await client.call_tool("add", {"a": 1, "b": 2})

    async def ours(n: int) -> None:
        for _ in range(n):
            await servers.call_tool("demo_add", {"a": 1, "b": 2})

    async def raw_in_a_task(n: int) -> None:
        # What any call that can stay open after its caller left (a parked legacy call) pays at least with mcp 2.3:
        # the request awaited in a task of its own (fresh context), its result handed back through a future.
        loop = asyncio.get_running_loop()
        for _ in range(n):
            done: asyncio.Future[Any] = loop.create_future()

            async def job(done: asyncio.Future[Any] = done) -> None:
                done.set_result(await client.call_tool("add", {"a": 1, "b": 2}))

            task = loop.create_task(job(), context=contextvars.Context())
            await done  # set in the task's last step: it has ended by now
            assert task.done()

    tracer = ToolRunCollector()

    def run_graph(graph: Any, callbacks: list[Any] | None = None) -> Any:
        async def go(n: int) -> None:
            for _ in range(n):
                out = await graph.ainvoke({"messages": []}, {"callbacks": callbacks})
                assert out["messages"][-1].content in ("3", [{"type": "text", "text": "3"}]), out["messages"][
                    -1
                ]

        return go

    variants: dict[str, Any] = {"raw session": raw, "servers.call_tool": ours}
    if era == "legacy":
        variants["raw session, own task"] = raw_in_a_task
    variants.update({name: run_graph(g) for name, g in graphs.items()})
    variants["graph: McpToolNode + tracer"] = run_graph(graphs["graph: McpToolNode"], [tracer])
    variants["graph: ToolNode(get_tools()) + tracer"] = run_graph(
        graphs["graph: ToolNode(get_tools())"], [tracer]
    )
    return variants


async def measure(quick: bool) -> Section:
    blocks, per_block = (6, 10) if quick else (40, 10)
    section = Section(
        "p1",
        "P1 per call, stdio (fast `add` tool)",
        [
            "era",
            "variant",
            "per call: median [p25–p75]",
            "× raw session",
            "client CPU × raw",
            "× hand-written graph",
            "× unchecked node",
        ],
    )
    for era in ERAS:
        async with AsyncExitStack() as stack:
            variants = await variants_for(stack, era)
            result: Comparison = await interleave(
                variants, blocks=blocks, per_block=per_block, baseline="raw session"
            )
        vs_hand = Comparison("graph: hand-written node", result.times, result.cpu)
        vs_unchecked = Comparison("graph: McpToolNode, unchecked", result.times, result.cpu)
        for name, timing, ratio, cpu in result.rows():
            index = list(result.times).index(name)
            hand = vs_hand.rows()[index][2] if name.startswith("graph") else ""
            unchecked = vs_unchecked.rows()[index][2] if name.startswith("graph: McpToolNode") else ""
            section.rows.append([era, name, timing, ratio, cpu, hand, unchecked])
        section.data[era] = {
            "vs_raw": result.as_dict(),
            "vs_hand_written": vs_hand.as_dict(),
            "vs_unchecked_node": vs_unchecked.as_dict(),
        }
    section.notes.append(
        f"{blocks} interleaved blocks × {per_block} calls per variant; ratios are per block, then median [p25–p75]. "
        "`client CPU` is this process's CPU time per call (the server's is not in it): on a busy machine it "
        "shows the client's own overhead with less noise than wall time. `× unchecked node`: what proving each "
        "call right before tools/call costs (issue 19's target: at most 1.03)."
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
