"""The LangChain tools from ``servers.get_tools()`` pause and resume inside ``create_agent`` graphs, both eras."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import ERAS, OpenServers
from tests.support.node_support import TOMORROW, accept_all, in_process, text_of, tool_messages

pytestmark = pytest.mark.anyio


class ScriptedModel(GenericFakeChatModel):
    """Replays fixed AI messages; tool binding is a no-op."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self


@pytest.mark.parametrize("mode", ERAS)
async def test_create_agent_with_mcp_tools_pauses_on_elicitation_and_resumes(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    tools = await servers.get_tools()
    turns: list[BaseMessage] = [
        AIMessage(
            "",
            tool_calls=[
                {"name": "demo_book_trip", "args": {"destination": "Rome"}, "id": "trip"},
                {"name": "demo_add", "args": {"a": 1, "b": 2}, "id": "sum"},
            ],
        ),
        AIMessage("All done."),
    ]
    agent = create_agent(ScriptedModel(messages=iter(turns)), tools, checkpointer=checkpointer)
    cfg: Any = {"configurable": {"thread_id": "agent"}}
    out = await agent.ainvoke({"messages": [{"role": "user", "content": "book it"}]}, cfg)
    (pending,) = out["__interrupt__"]
    assert pending.value["type"] == "mcp_elicitation"
    assert pending.value["tool_call_id"] == "trip"
    out = await agent.ainvoke(Command(resume={pending.id: accept_all(pending)}), cfg)
    messages = tool_messages(out)
    assert text_of(messages["trip"]) == f"Booked Rome on {TOMORROW}"
    assert text_of(messages["sum"]) == "3"
    assert out["messages"][-1].content == "All done."
    assert srv.events.counts["book_trip.commit"] == 1
    assert srv.events.counts["add.enter"] == 1
