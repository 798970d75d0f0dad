"""Every LangGraph internal in ``langgraph_mcp._compat`` still is what the installed langgraph provides."""

from __future__ import annotations

import inspect
from typing import Any, TypedDict

import pytest
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.config import get_config, get_stream_writer
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from langgraph_mcp import _compat
from langgraph_mcp.errors import IncompatibleDependencyError

UPGRADE = f"langgraph {_compat.LANGGRAPH_VERSION} changed an internal langgraph-mcp uses: update langgraph_mcp/_compat.py"


class _State(TypedDict, total=False):
    seen: list[Any]


def _graph(node: Any, checkpointer: InMemorySaver | None) -> Any:
    builder = StateGraph(_State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    return builder.compile(checkpointer=checkpointer)


def test_runnable_callable_is_still_the_base_of_tool_node() -> None:
    assert issubclass(ToolNode, _compat.RunnableCallable), (
        f"{UPGRADE} (ToolNode no longer a RunnableCallable)"
    )
    params = inspect.signature(_compat.RunnableCallable.__init__).parameters
    missing = {"func", "afunc", "name", "tags", "trace"} - set(params)
    assert not missing, f"{UPGRADE} (RunnableCallable.__init__ lost {sorted(missing)})"


@pytest.mark.parametrize("with_checkpointer", [True, False])
def test_the_config_keys_are_the_ones_langgraph_sets_in_a_task(
    with_checkpointer: bool, sync_checkpointer: BaseCheckpointSaver[Any]
) -> None:
    found: dict[str, Any] = {}

    def node(state: _State) -> _State:
        configurable = get_config()["configurable"]
        found["in_task"] = _compat.in_graph_task(configurable)
        found["checkpointer"] = _compat.has_checkpointer(configurable)
        found["scratchpad"] = _compat.task_scratchpad(configurable)
        return {}

    _graph(node, sync_checkpointer if with_checkpointer else None).invoke(
        {}, {"configurable": {"thread_id": "t"}}
    )
    assert found["in_task"], f"{UPGRADE} (no {_compat.CONFIG_KEY_SCRATCHPAD!r} in a task's config)"
    assert found["scratchpad"] is not None, f"{UPGRADE} (no task scratchpad)"
    assert found["checkpointer"] is with_checkpointer, f"{UPGRADE} ({_compat.CONFIG_KEY_CHECKPOINTER!r})"


def test_outside_a_graph_task_nothing_is_found() -> None:
    def plain(_: Any) -> tuple[bool, bool, Any]:
        configurable = get_config().get("configurable", {})
        return (
            _compat.in_graph_task(configurable),
            _compat.has_checkpointer(configurable),
            _compat.task_scratchpad(configurable),
        )

    assert RunnableLambda(plain).invoke(None) == (False, False, None)


def test_stored_resume_values_lists_every_answer_in_order_without_consuming_them(
    sync_checkpointer: BaseCheckpointSaver[Any],
) -> None:
    runs: list[list[Any]] = []

    def node(state: _State) -> _State:
        scratchpad = _compat.task_scratchpad(get_config()["configurable"])
        assert scratchpad is not None
        runs.append(_compat.stored_resume_values(scratchpad))
        first = interrupt("first?")
        second = interrupt("second?")
        return {"seen": [first, second]}

    graph = _graph(node, sync_checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({}, cfg)
    graph.invoke(Command(resume="A"), cfg)
    out = graph.invoke(Command(resume="B"), cfg)
    assert runs == [[], ["A"], ["A", "B"]], f"{UPGRADE} (the scratchpad's resume values: {runs})"
    assert out["seen"] == ["A", "B"], f"{UPGRADE} (reading the resume values consumed them: {out})"


def test_a_changed_scratchpad_shape_is_a_clear_error_naming_the_version() -> None:
    with pytest.raises(IncompatibleDependencyError) as caught:
        _compat.task_scratchpad({_compat.CONFIG_KEY_SCRATCHPAD: object()})
    assert caught.value.dependency == "langgraph"
    assert str(caught.value).startswith(
        f"langgraph {_compat.LANGGRAPH_VERSION} changed the pregel task scratchpad"
    )
    assert "1.2" in str(caught.value)


@pytest.mark.parametrize("by_id", [False, True])
def test_fresh_resume_index_points_at_the_answer_this_invocation_gave(
    by_id: bool, sync_checkpointer: BaseCheckpointSaver[Any]
) -> None:
    seen: list[tuple[int | None, list[Any]]] = []

    def node(state: _State) -> _State:
        configurable = get_config()["configurable"]
        scratchpad = _compat.task_scratchpad(configurable)
        assert scratchpad is not None
        seen.append(
            (_compat.fresh_resume_index(scratchpad, configurable), _compat.stored_resume_values(scratchpad))
        )
        return {"seen": [interrupt("first?"), interrupt("second?")]}

    graph = _graph(node, sync_checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({}, cfg)
    for answer in ("A", "B"):
        (pending,) = out["__interrupt__"]
        out = graph.invoke(Command(resume={pending.id: answer} if by_id else answer), cfg)
    assert out["seen"] == ["A", "B"]
    # No answer on the first run; then the new answer is the last value, at index 0, then 1.
    assert seen == [(None, []), (0, ["A"]), (1, ["A", "B"])], (
        f"{UPGRADE} (how a resume {'by interrupt id' if by_id else 'value'} reaches the task: {seen})"
    )


@pytest.mark.parametrize("where", ["node", "subgraph node"])
@pytest.mark.anyio
async def test_shown_interrupt_value_reads_the_pending_interrupt_from_the_checkpoint(
    where: str, tmp_path: Any
) -> None:
    read: list[Any] = []

    async def node(state: _State) -> _State:
        configurable = get_config()["configurable"]
        read.append(await _compat.shown_interrupt_value(configurable, 0))
        return {"seen": [interrupt({"q": "first?", "requests": {"k": {"mode": "form"}}})]}

    inner = StateGraph(_State)
    inner.add_node("node", node)
    inner.add_edge(START, "node")
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.sqlite")) as saver:
        if where == "node":
            builder = StateGraph(_State)
            builder.add_node("node", node)
            builder.add_edge(START, "node")
        else:
            builder = StateGraph(_State)
            builder.add_node("outer", inner.compile())
            builder.add_edge(START, "outer")
        graph = builder.compile(checkpointer=saver)
        cfg: Any = {"configurable": {"thread_id": "t"}}
        out = await graph.ainvoke({}, cfg)
        (pending,) = out["__interrupt__"]
        await graph.ainvoke(Command(resume={pending.id: "A"}), cfg)
    assert read == [None, {"q": "first?", "requests": {"k": {"mode": "form"}}}], (
        f"{UPGRADE} (the pending interrupt is no longer found in the checkpoint's pending writes: {read})"
    )


def test_tool_output_writer_is_what_tool_runtime_emits_through() -> None:
    """``stream_mode="tools"`` deltas: ``_compat.tool_output_writer`` reads the writer ``ToolRuntime`` writes to."""
    from langgraph.prebuilt.tool_node import ToolRuntime

    var = _compat._ToolCallWriterVar
    assert var is not None, f"{UPGRADE} (no langgraph.pregel._tools._tool_call_writer)"
    seen: list[Any] = []
    token = var.set(seen.append)
    try:
        writer = _compat.tool_output_writer()
        runtime = ToolRuntime(
            state=None, context=None, config={}, stream_writer=lambda _: None, tool_call_id="x", store=None
        )
        runtime.emit_output_delta("from the runtime")
    finally:
        var.reset(token)
    assert writer is not None
    writer("from us")
    assert seen == ["from the runtime", "from us"], UPGRADE
    assert _compat.tool_output_writer() is None


@pytest.mark.anyio
async def test_writes_nowhere_tells_a_run_that_streams_no_custom_events() -> None:
    seen: list[bool] = []

    class S(TypedDict):
        x: int

    async def node(state: S) -> S:
        seen.append(_compat.writes_nowhere(get_stream_writer()))
        return state

    builder = StateGraph(S)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    graph = builder.compile()
    await graph.ainvoke({"x": 1})
    _ = [c async for c in graph.astream({"x": 1}, stream_mode="updates")]
    _ = [c async for c in graph.astream({"x": 1}, stream_mode=["custom", "updates"])]
    assert seen == [True, True, False]
