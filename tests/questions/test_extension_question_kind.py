"""Living documentation: a new question kind (an interrupt a graph node of your own raises), added through the
registry of :mod:`langgraph_mcp.questions.resume` and nothing else, is listed by ``pending_interrupts`` and answered
by ``resume_command`` together with a real approval in one ``Command``; a wrong answer is refused in words and the
same interrupt stays pending.

The example kind is a budget question with two decision types on its card (``raise_limit`` with a number, and
``keep``). Its one pydantic answer model is the node's ``response_schema`` (LangGraph checks a resume with it
before saving it, and shows its JSON Schema), and what ``resume_command`` checks an answer with.

Files a new kind touches: before the registry, ``questions/resume.py`` in four places (``PendingKind``, the
``is_*`` chain in ``pending_interrupts``, ``_ARGUMENT_OF``, the answer dispatch in ``resume_command``) plus a
payload module and a validator; now the kind's own module (payload, answer model, the node that asks) and one
:func:`register_question_kind`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.errors import is_invalid_resume
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt
from pydantic import BaseModel, Field, RootModel, ValidationError

from langgraph_mcp import McpServers, McpToolNode, pending_interrupts, resume_command
from langgraph_mcp.errors import ResumeError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.questions.resume import QuestionKind, register_question_kind, unregister_question_kind
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import OpenServers
from tests.support.node_support import call, in_process, text_of, tool_messages

pytestmark = pytest.mark.anyio

# ------------------------------------------------------------------ the whole extension: payload, answer model, kind

BUDGET = "x_budget"


class RaiseLimit(BaseModel):
    type: Literal["raise_limit"]
    limit: int = Field(ge=1, le=1000, description="The new spending limit, in euros")


class Keep(BaseModel):
    type: Literal["keep"]


class BudgetAnswer(RootModel[Annotated[RaiseLimit | Keep, Field(discriminator="type")]]):
    """The one answer model: validator, ``response_schema`` and JSON Schema."""


def budget_payload(tool_call_id: str) -> dict[str, Any]:
    return {
        "type": BUDGET,
        "tool_call_id": tool_call_id,
        "question": "The run is about to pass its spending limit of 20 euros.",
        "allowed_decisions": ["raise_limit", "keep"],
    }


KIND = QuestionKind("budget", BUDGET, "decisions", lambda payload: BudgetAnswer)


@pytest.fixture(autouse=True)
def budget_kind() -> Iterator[None]:
    register_question_kind(KIND)
    yield
    unregister_question_kind("budget")


# ------------------------------------------------------------------ a graph that asks both questions at once


class State(MessagesState):
    limit: int


def graph_for(servers: McpServers) -> CompiledStateGraph[Any, Any, Any, Any]:
    """agent → [tools (asks about a delete), budget (asks the new kind)] → END, in one step."""

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("", tool_calls=[call("demo_delete_file", "rm", path="todo.txt")])]}

    def budget(state: State) -> dict[str, Any]:
        answer = interrupt(budget_payload("budget-1"), response_schema=BudgetAnswer).root
        return {"limit": answer.limit if isinstance(answer, RaiseLimit) else 20}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", McpToolNode(servers))  # its default policy asks about a destructive tool
    builder.add_node("budget", budget)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("agent", "budget")
    builder.add_edge("tools", END)
    builder.add_edge("budget", END)
    return builder.compile(checkpointer=StrictSaver())


async def test_a_registered_kind_is_listed_typed_and_answered_with_an_approval_in_one_command(
    open_servers: OpenServers,
) -> None:
    srv = build_server()
    graph = graph_for(open_servers({"demo": in_process(srv, "modern")}))
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke({"messages": [HumanMessage("tidy up")]}, cfg)

    pending = {item.kind: item for item in pending_interrupts(out)}
    assert set(pending) == {"approval", "budget"}
    asked = pending["budget"]
    assert asked.tool_call_id == "budget-1" and asked.payload["allowed_decisions"] == ["raise_limit", "keep"]
    [raised] = [i for i in out["__interrupt__"] if i.id == asked.interrupt_id]
    assert raised.response_schema == BudgetAnswer.model_json_schema()  # what clients are shown
    assert not asked.is_card

    # a wrong answer is refused in words, before anything is sent ...
    wrong: list[tuple[object, str]] = [
        ({"type": "raise_limit", "limit": 0}, r"budget-1.*limit: Input should be greater than or equal to 1"),
        ({"type": "approve"}, r"budget-1.*does not match any of the expected tags: 'raise_limit', 'keep'"),
        ({"type": "raise_limit"}, r"raise_limit\.limit: Field required"),
    ]
    for answer, words in wrong:
        with pytest.raises(ResumeError, match=words):
            resume_command(out, decisions={"rm": {"type": "approve"}, "budget-1": answer})
    # ... and one sent anyway (a client that skips resume_command) is refused by the node's response_schema:
    with pytest.raises(ValidationError) as refused:
        await graph.ainvoke(Command(resume={asked.interrupt_id: {"type": "raise_limit", "limit": -5}}), cfg)
    assert is_invalid_resume(refused.value)
    still = await graph.aget_state(cfg, subgraphs=True)
    assert {i.interrupt_id for i in pending_interrupts(still)} == {i.interrupt_id for i in pending.values()}
    assert srv.events.counts["delete_file.enter"] == 0

    # the same interrupts, both answered in ONE Command
    command = resume_command(
        still, decisions={"rm": {"type": "approve"}, "budget-1": {"type": "raise_limit", "limit": 50}}
    )
    assert isinstance(command.resume, dict) and set(command.resume) == {
        i.interrupt_id for i in pending.values()
    }
    assert command.resume[asked.interrupt_id] == {"type": "raise_limit", "limit": 50}
    out = await graph.ainvoke(command, cfg)
    assert "__interrupt__" not in out
    assert out["limit"] == 50
    assert text_of(tool_messages(out)["rm"]) == "Deleted todo.txt"
    assert srv.events.counts["delete_file.commit"] == 1


def test_an_unregistered_kind_is_not_listed_and_a_taken_type_is_refused() -> None:
    payload = budget_payload("budget-1")
    value = [{"id": "f" * 32, "value": payload}]
    assert [i.kind for i in pending_interrupts(value)] == ["budget"]
    with pytest.raises(ResumeError, match=r"question payload type 'mcp_approval' is already registered"):
        register_question_kind(QuestionKind("mine", "mcp_approval", "decisions", lambda p: BudgetAnswer))
    unregister_question_kind("budget")
    assert pending_interrupts(value) == []  # your own interrupts are left out, as before
    with pytest.raises(
        ResumeError, match=r"no pending approval for tool call .budget-1.; nothing is pending"
    ):
        resume_command(value, decisions={"budget-1": {"type": "keep"}})
