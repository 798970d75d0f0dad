"""A resume whose answer fits its question builds no answers model: only a pause (which shows the model's JSON
schema) needs one. A wrong answer is still refused before LangGraph saves it, and the same interrupt takes the fix."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.questions import answers as validation
from tests.support.helpers import ERAS, OpenServers
from tests.support.node_support import (
    TOMORROW,
    accept_all,
    call,
    in_process,
    one_turn_graph,
    start,
    text_of,
    tool_messages,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ERAS)
async def test_a_fitting_answer_is_taken_without_building_an_answers_model(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    servers = open_servers({"demo": in_process(build_server(), mode)})
    graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], checkpointer)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(start(), cfg)
    (pending,) = out["__interrupt__"]
    assert pending.response_schema["title"] == "ElicitationAnswers"  # the pause shows the model's schema
    (key,) = pending.value["requests"]
    validation._answers_model.cache_clear()
    with pytest.raises(pydantic.ValidationError):
        await graph.ainvoke(Command(resume={pending.id: {key: {"action": "accept", "content": {}}}}), cfg)
    assert validation._answers_model.cache_info().currsize == 1  # refused through the model, as before
    validation._answers_model.cache_clear()
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), cfg)
    assert text_of(tool_messages(out)["c1"]) == f"Booked Rome on {TOMORROW}"
    assert validation._answers_model.cache_info().currsize == 0
