"""Every MCP call is a tool run in LangChain's callback tree (#28): a callback handler, ``astream_events`` and
``stream_mode="tools"`` see one start and one end per call, for ``McpToolNode`` and ``ToolNode(get_tools())``."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command

from langgraph_mcp import McpApprovalMiddleware, McpServers, resume_command
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from langgraph_mcp.examples.scripted_model import ScriptedChatModel
from tests.graph.test_policy_gate import WIRINGS, setup
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import ERAS, OpenServers, OpenServersSync
from tests.support.node_support import accept_all, call, in_process, one_turn_graph, start, text_of

pytestmark = pytest.mark.anyio


class Recorder(BaseCallbackHandler):
    """Every tool run's start, end and error, and every chain run's name and parent (to read the tree)."""

    def __init__(self) -> None:
        self.starts: list[dict[str, Any]] = []
        self.ends: dict[UUID, Any] = {}
        self.errors: dict[UUID, BaseException] = {}
        self.chains: dict[UUID, tuple[str, UUID | None]] = {}

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.chains[run_id] = (str(kwargs.get("name")), parent_run_id)

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.starts.append(
            {
                "name": serialized["name"],
                "inputs": inputs,
                "run_id": run_id,
                "parent": parent_run_id,
                "metadata": dict(metadata or {}),
                "tool_call_id": kwargs.get("tool_call_id"),
            }
        )

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.ends[run_id] = output

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.errors[run_id] = error

    def parent_name(self, start: dict[str, Any]) -> str:
        return self.chains[start["parent"]][0]


def tool_node_graph(tools: list[Any], calls: list[Any]) -> Any:
    """START → agent (proposes ``calls``) → ToolNode(tools) → END: the same turn through LangChain's own node."""

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("", tool_calls=list(calls), id="ai-1")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=StrictSaver())


async def graph_for(wiring: str, servers: McpServers, calls: list[Any]) -> Any:
    if wiring == "node":
        return one_turn_graph(servers, calls, StrictSaver())
    return tool_node_graph(await servers.get_tools(), calls)


def config(recorder: Recorder | None = None, thread: str = "t1") -> Any:
    out: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if recorder is not None:
        out["callbacks"] = [recorder]
    return out


def demo(open_servers: OpenServers, era: str) -> tuple[McpServers, DemoServer]:
    server = build_server()
    return open_servers({"demo": in_process(server, era)}), server


def assert_mcp_metadata(metadata: dict[str, Any], era: str, tool: str, call_id: str) -> None:
    assert metadata["server"] == "demo"
    assert metadata["mcp_tool"] == tool
    assert metadata["mcp_era"] == era
    assert metadata["mcp_transport"] == "in_process"
    assert metadata["tool_call_id"] == call_id


@pytest.mark.parametrize("wiring", ["node", "tool_node"])
@pytest.mark.parametrize("era", ERAS)
async def test_one_call_is_one_tool_run_under_the_tools_node(
    open_servers: OpenServers, era: str, wiring: str
) -> None:
    servers, server = demo(open_servers, era)
    graph = await graph_for(wiring, servers, [call("demo_add", "c1", a=2, b=3)])
    recorder = Recorder()
    out = await graph.ainvoke(start(), config(recorder))

    assert text_of(out["messages"][-1]) == "5"
    assert server.events.counts["add.enter"] == 1
    (run,) = recorder.starts
    assert run["name"] == "demo_add"
    assert run["inputs"] == {"a": 2, "b": 3}
    assert run["tool_call_id"] == "c1"
    assert_mcp_metadata(run["metadata"], era, "add", "c1")
    assert run["metadata"]["langgraph_node"] == "tools"
    assert recorder.parent_name(run) == "tools"
    assert not recorder.errors
    (output,) = recorder.ends.values()
    assert isinstance(output, ToolMessage) and output.tool_call_id == "c1" and text_of(output) == "5"


@pytest.mark.parametrize("wiring", ["node", "tool_node"])
@pytest.mark.parametrize("era", ERAS)
async def test_astream_events_show_the_call(open_servers: OpenServers, era: str, wiring: str) -> None:
    servers, _ = demo(open_servers, era)
    graph = await graph_for(wiring, servers, [call("demo_add", "c1", a=4, b=5)])
    events = [
        e
        async for e in graph.astream_events(start(), config(), version="v2")
        if e["event"].startswith("on_tool")
    ]
    assert [e["event"] for e in events] == ["on_tool_start", "on_tool_end"]
    begin, end = events
    assert begin["name"] == end["name"] == "demo_add"
    assert begin["run_id"] == end["run_id"]
    assert begin["data"]["input"] == {"a": 4, "b": 5}
    assert_mcp_metadata(begin["metadata"], era, "add", "c1")
    assert text_of(end["data"]["output"]) == "9"


@pytest.mark.parametrize("wiring", ["node", "tool_node"])
@pytest.mark.parametrize("era", ERAS)
async def test_tools_stream_mode_shows_the_call_and_its_progress(
    open_servers: OpenServers, era: str, wiring: str
) -> None:
    servers, _ = demo(open_servers, era)
    graph = await graph_for(wiring, servers, [call("demo_slow", "c1", seconds=0.05, steps=2)])
    chunks = [c async for c in graph.astream(start(), config(), stream_mode="tools")]
    assert [c["event"] for c in chunks] == [
        "tool-started",
        "tool-output-delta",
        "tool-output-delta",
        "tool-finished",
    ]
    assert all(c["tool_call_id"] == "c1" for c in chunks)
    assert chunks[0]["tool_name"] == "demo_slow"
    assert chunks[0]["input"] == {"seconds": 0.05, "steps": 2}
    deltas = [c["delta"] for c in chunks[1:3]]
    assert [(d["type"], d["progress"], d["total"], d["message"]) for d in deltas] == [
        ("mcp_progress", 1, 2, "step 1"),
        ("mcp_progress", 2, 2, "step 2"),
    ]
    assert text_of(chunks[-1]["output"]) == "done"


@pytest.mark.parametrize("era", ERAS)
async def test_an_error_result_ends_the_run_with_the_error_message(
    open_servers: OpenServers, era: str
) -> None:
    """A server's ``isError`` result: as ``ToolNode(get_tools())`` does, the run ends with the error ToolMessage
    (the model reads it); a failure of the call itself ends the run with ``on_tool_error``."""
    servers, _ = demo(open_servers, era)
    for wiring in ("node", "tool_node"):
        graph = await graph_for(wiring, servers, [call("demo_always_fails", "c1", reason="nope")])
        recorder = Recorder()
        out = await graph.ainvoke(start(), config(recorder, thread=wiring))
        message = out["messages"][-1]
        assert message.status == "error" and "nope" in text_of(message)
        (run,) = recorder.starts
        assert not recorder.errors, wiring
        output = recorder.ends[run["run_id"]]
        assert output.status == "error" and "nope" in text_of(output), wiring


@pytest.mark.parametrize("era", ERAS)
async def test_a_failed_call_ends_its_run_with_the_error(
    open_servers: OpenServers, era: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    server = build_server()
    servers = open_servers({"demo": in_process(server, era, tool_timeout=0.2)})
    graph = one_turn_graph(servers, [call("demo_sleep", "c1", seconds=30)], checkpointer)
    recorder = Recorder()
    out = await graph.ainvoke(start(), config(recorder))
    message = out["messages"][-1]
    assert message.status == "error"  # the model still reads the error, as before
    (run,) = recorder.starts
    assert run["run_id"] not in recorder.ends
    error = recorder.errors[run["run_id"]]
    assert str(error) in text_of(message)


@pytest.mark.parametrize("era", ERAS)
async def test_a_paused_call_ends_its_run_and_the_resumed_call_is_a_new_run(
    open_servers: OpenServers, era: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    servers, server = demo(open_servers, era)
    graph = one_turn_graph(servers, [call("demo_book_trip", "trip", destination="Rome")], checkpointer)
    recorder = Recorder()
    out = await graph.ainvoke(start(), config(recorder))
    (pending,) = out["__interrupt__"]
    (paused,) = recorder.starts
    error = recorder.errors[paused["run_id"]]
    assert isinstance(error, GraphInterrupt)
    assert error.args[0][0].value["type"] == "mcp_elicitation"  # why it paused
    assert paused["run_id"] not in recorder.ends

    chunks = [
        c
        async for c in graph.astream(
            Command(resume={pending.id: accept_all(pending)}), config(recorder), stream_mode="tools"
        )
    ]
    assert [c["event"] for c in chunks] == ["tool-started", "tool-finished"]
    assert chunks[0]["tool_call_id"] == "trip"
    paused_run, resumed = recorder.starts
    assert resumed["run_id"] != paused_run["run_id"]
    assert resumed["metadata"]["tool_call_id"] == paused_run["metadata"]["tool_call_id"] == "trip"
    assert text_of(recorder.ends[resumed["run_id"]]).startswith("Booked Rome")
    assert server.events.counts["book_trip.commit"] == 1


@pytest.mark.parametrize("era", ERAS)
async def test_a_paused_call_is_not_a_tool_error_on_the_tools_stream(
    open_servers: OpenServers, era: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    servers, _ = demo(open_servers, era)
    graph = one_turn_graph(servers, [call("demo_book_trip", "trip", destination="Rome")], checkpointer)
    chunks = [c async for c in graph.astream(start(), config(), stream_mode=["tools", "updates"])]
    tools = [payload["event"] for mode, payload in chunks if mode == "tools"]
    assert tools == ["tool-started"]  # paused: it starts again on resume (LangGraph's own rule for a tool)
    assert any(mode == "updates" and "__interrupt__" in payload for mode, payload in chunks)


@pytest.mark.parametrize("fan_out", [False, True])
@pytest.mark.parametrize("era", ERAS)
async def test_parallel_calls_are_sibling_runs(
    open_servers: OpenServers, era: str, fan_out: bool, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    servers, _ = demo(open_servers, era)
    calls = [call("demo_add", "a", a=1, b=2), call("demo_list_files", "b")]
    # (both read-only: a destructive-by-default tool such as demo_echo would be asked about by the tool node)
    graph = one_turn_graph(servers, calls, checkpointer, fan_out=fan_out)
    recorder = Recorder()
    await graph.ainvoke(start(), config(recorder))

    runs = {r["tool_call_id"]: r for r in recorder.starts}
    assert set(runs) == {"a", "b"} and len(recorder.starts) == 2
    assert set(recorder.ends) == {runs["a"]["run_id"], runs["b"]["run_id"]}
    parents = {runs[k]["parent"] for k in runs}
    if (
        fan_out
    ):  # one Send per call: each call is the one tool run of its own "tools" node run, both in one step
        assert len(parents) == 2
        assert {recorder.chains[p][0] for p in parents} == {"tools"}
        assert len({recorder.chains[p][1] for p in parents}) == 1
    else:  # one node run for both calls: both tool runs are its children, neither inside the other
        (parent,) = parents
        assert recorder.chains[parent][0] == "tools"
    assert runs["a"]["parent"] != runs["b"]["run_id"] and runs["b"]["parent"] != runs["a"]["run_id"]


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_a_gated_call_run_carries_the_verdict_and_who_decided(
    open_servers: OpenServers, wiring: str
) -> None:
    """Behind the approval gate each run says what the decision record says: allowed by the policy's rule, or
    asked and approved by a human. The wait for approval is the gate's run (ended by the interrupt): no call was
    sent yet, so there is no tool run until the human approved."""
    calls = [
        call("demo_read_file", "read", path="notes.txt"),
        call("demo_delete_file", "rm", path="todo.txt"),
    ]
    srv, _, graph = setup(open_servers, calls, wiring)
    recorder = Recorder()
    cfg: Any = {"configurable": {"thread_id": "t", "user_id": "ann"}, "callbacks": [recorder]}
    out = await graph.ainvoke(start(), cfg)
    (pending,) = out["__interrupt__"]
    assert "rm" not in {r["tool_call_id"] for r in recorder.starts}  # not sent while it waits for a human
    await graph.ainvoke(resume_command([pending], decisions={"rm": {"type": "approve"}}), cfg)

    runs = {r["tool_call_id"]: r["metadata"] for r in recorder.starts}
    assert set(runs) == {"read", "rm"} and len(recorder.starts) == 2
    assert (runs["read"]["mcp_verdict"], runs["read"]["mcp_decided_by"], runs["read"]["mcp_decision"]) == (
        "allow",
        "policy",
        None,
    )
    assert runs["read"]["mcp_rule"] == "hints:read-only"
    assert (runs["rm"]["mcp_verdict"], runs["rm"]["mcp_decided_by"], runs["rm"]["mcp_decision"]) == (
        "ask",
        "human",
        "approve",
    )
    assert runs["rm"]["mcp_rule"] == "deletes"
    hashes = {runs[k]["mcp_definition_hash"] for k in runs}
    assert len(hashes) == 2 and all(len(h) == 64 for h in hashes)  # the sha256 the decision record names
    assert srv.events.counts["delete_file.commit"] == 1


@pytest.mark.parametrize("era", ERAS)
def test_a_sync_run_has_the_same_runs(
    open_servers_sync: OpenServersSync, era: str, sync_checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """``graph.invoke`` / ``graph.stream`` (calls on the background loop): the same runs and ``tools`` events."""
    servers = open_servers_sync({"demo": in_process(build_server(), era)})
    calls = [call("demo_add", "a", a=1, b=2), call("demo_list_files", "b")]
    graph = one_turn_graph(servers, calls, sync_checkpointer, fan_out=False)
    recorder = Recorder()
    graph.invoke(start(), config(recorder))
    assert sorted(r["tool_call_id"] for r in recorder.starts) == ["a", "b"]
    assert {recorder.parent_name(r) for r in recorder.starts} == {"tools"}
    assert {r["metadata"]["mcp_era"] for r in recorder.starts} == {era}
    assert len(recorder.ends) == 2 and not recorder.errors
    chunks = list(graph.stream(start(), config(thread="t2"), stream_mode="tools"))
    assert sorted((c["event"], c["tool_call_id"]) for c in chunks) == [
        ("tool-finished", "a"),
        ("tool-finished", "b"),
        ("tool-started", "a"),
        ("tool-started", "b"),
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_create_agent_tool_runs_carry_the_middleware_s_verdict(
    open_servers: OpenServers, era: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """``create_agent`` + ``McpApprovalMiddleware`` over ``get_tools()``: each run says how its call was judged."""
    servers, server = demo(open_servers, era)
    model = ScriptedChatModel(tool_calls=[("list_files", {}), ("delete_file", {"path": "todo.txt"})])
    agent = create_agent(
        model,
        tools=await servers.get_tools(),
        middleware=[McpApprovalMiddleware(servers)],
        checkpointer=checkpointer,
    )
    recorder = Recorder()
    cfg = config(recorder)
    out = await agent.ainvoke(start(), cfg)
    (pending,) = out["__interrupt__"]
    await agent.ainvoke(
        resume_command([pending], decisions={pending.value["tool_call_id"]: {"type": "approve"}}), cfg
    )

    runs = {r["name"]: r["metadata"] for r in recorder.starts}
    assert set(runs) == {"demo_list_files", "demo_delete_file"} and len(recorder.starts) == 2
    judged = {name: (m["mcp_verdict"], m["mcp_decided_by"], m["mcp_decision"]) for name, m in runs.items()}
    assert judged == {
        "demo_list_files": ("allow", "policy", None),
        "demo_delete_file": ("ask", "human", "approve"),
    }
    assert runs["demo_delete_file"]["mcp_rule"] == "hints:destructive"
    assert_mcp_metadata(runs["demo_delete_file"], era, "delete_file", pending.value["tool_call_id"])
    assert server.events.counts["delete_file.enter"] == 1
