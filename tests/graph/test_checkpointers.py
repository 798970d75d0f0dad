"""The checkpointer fixture's kinds, and what this package saves in checkpoints surviving strict msgpack."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import pydantic
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from langgraph_mcp.examples.demo_server import build_server
from tests.support.checkpointers import (
    KINDS,
    BlockedTypes,
    StrictSaver,
    open_checkpointer,
    strict_serde,
)
from tests.support.helpers import ERAS, OpenServers
from tests.support.node_support import accept_all, call, in_process, one_turn_graph, start, tool_messages

pytestmark = pytest.mark.anyio


class Booking(pydantic.BaseModel):
    city: str


class Held(TypedDict):
    item: Any


def holding(value: Any, saver: BaseCheckpointSaver[Any]) -> Any:
    """A one-node graph that saves ``value`` in its state."""
    builder = StateGraph(Held)
    builder.add_node("keep", lambda state: {"item": value})
    builder.add_edge(START, "keep")
    builder.add_edge("keep", END)
    return builder.compile(checkpointer=saver)


def config(thread: str = "t1") -> Any:
    return {"configurable": {"thread_id": thread}}


def test_strict_refuses_what_the_default_serializer_revives() -> None:
    """A pydantic model in state: the default serializer gives the model back, the strict one only its fields."""
    permissive = holding(Booking(city="Rome"), InMemorySaver())
    permissive.invoke({"item": None}, config())
    assert permissive.get_state(config()).values["item"] == Booking(city="Rome")

    strict = holding(Booking(city="Rome"), InMemorySaver(serde=strict_serde()))
    with BlockedTypes() as blocked:
        strict.invoke({"item": None}, config())
        item = strict.get_state(config()).values["item"]
    assert not isinstance(item, Booking)
    assert blocked.seen and set(blocked.seen) == {f"{__name__}.Booking"}


def test_the_strict_saver_fails_where_a_type_is_refused_naming_it_and_keeps_json_shaped_values() -> None:
    graph = holding(Booking(city="Rome"), StrictSaver())
    graph.invoke({"item": None}, config())
    with pytest.raises(AssertionError, match=r"test_checkpointers\.Booking.*JSON-shaped"):
        graph.get_state(config())

    graph = holding({"city": "Rome", "when": ["2026-12-02"]}, StrictSaver())
    graph.invoke({"item": None}, config())
    assert graph.get_state(config()).values["item"] == {"city": "Rome", "when": ["2026-12-02"]}


@pytest.mark.parametrize("checkpointer", KINDS, indirect=True)
async def test_the_fixture_gives_each_kind(checkpointer: BaseCheckpointSaver[Any], request: Any) -> None:
    expected = {"memory": InMemorySaver, "sqlite": AsyncSqliteSaver, "strict": StrictSaver}
    assert type(checkpointer) is expected[request.node.callspec.params["checkpointer"]]


async def test_sqlite_opened_again_on_the_same_file_sees_the_paused_thread(
    open_servers: OpenServers, tmp_path: Path
) -> None:
    servers = open_servers({"demo": in_process(build_server(), "modern")})
    calls = [call("demo_book_trip", "c1", destination="Rome")]
    async with open_checkpointer("sqlite", tmp_path / "c.sqlite") as saver:
        out = await one_turn_graph(servers, calls, saver).ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    async with open_checkpointer("sqlite", tmp_path / "c.sqlite") as saver:
        graph = one_turn_graph(servers, calls, saver)
        [kept] = (await graph.aget_state(config())).interrupts
        assert (kept.id, kept.value) == (pending.id, pending.value)
        out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    assert tool_messages(out)["c1"].status == "success"


@pytest.mark.parametrize("checkpointer", KINDS, indirect=True)
@pytest.mark.parametrize("mode", ERAS)
async def test_every_kind_of_pause_reads_back_from_the_checkpoint_as_it_was_raised(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any], mode: str
) -> None:
    """An approval, a form and a URL request, paused together: read back from the saver, equal to what ``ainvoke``
    returned (the strict kind fails the test if any of it, or any pending write of the node, is refused)."""
    servers = open_servers({"demo": in_process(build_server(), mode)})
    calls = [
        call("demo_delete_file", "approve-me", path="todo.txt"),
        call("demo_book_trip", "form", destination="Rome"),
        call("demo_url_required", "url", amount=7),
    ]
    graph = one_turn_graph(servers, calls, checkpointer)
    out = await graph.ainvoke(start(), config())
    raised = {i.id: i.value for i in out["__interrupt__"]}
    assert {v["tool_call_id"] for v in raised.values()} == {"approve-me", "form", "url"}
    kept = {i.id: i.value for i in (await graph.aget_state(config())).interrupts}
    assert kept == raised
