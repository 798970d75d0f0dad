"""Living documentation: a new decision type on the approval question, added through
:func:`~langgraph_mcp.questions.decisions.register_decision_type` and nothing else, is offered by a policy's verdict,
shown to clients in the interrupt's ``response_schema``, checked (a wrong answer is refused in words and the same
interrupt stays pending), and applied: the call runs with what the type says.

The example type is a sign-off: ``{"type": "sign", "by": "Ada"}`` runs a file write with the signer's name appended
to the content. A decision type is its pydantic model (its fields are the answer's keys; ``type`` its discriminator)
plus what it does, said in :meth:`~langgraph_mcp.questions.decisions.DecisionModel.decision` as one of the four
built-in decisions (here an ``edit``), which is then checked against the call like any other answer: an edit still
keeps the tool and fits its inputSchema.

Files a new decision type touched before the models: ``payloads/base.py`` (``DecisionType``, ``ALL_DECISIONS``),
``payloads/approval.py`` (its TypedDict, the ``Decision`` union), ``questions/decisions.py`` in four places (the key
table, ``validate_decision``, a validator of its own, the hand-written JSON Schema), ``approval/judge.py`` (what it
does), ``graph/gate_apply.py``, ``graph/approval_middleware.py``, ``approval/memory.py``, the Agent Chat UI card
(``questions/approval.py``, ``_card_decision``) and the CLI (``cli/prompts.py``). Now, for a type that stands for a
built-in one: its own module (the model and what it does) and one :func:`register_decision_type`. The Agent Chat UI
card and the CLI prompt do not offer an added type (their words are the built-in ones).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest
from langgraph.types import Command
from pydantic import Field, ValidationError

from langgraph_mcp import McpServers, pending_interrupts, resume_command
from langgraph_mcp.errors import ConfigError, DecisionError, ResumeError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.payloads import ApprovalInterrupt, Decision
from langgraph_mcp.policy.policy import ApprovalPolicy, Verdict
from langgraph_mcp.questions.decisions import (
    DecisionModel,
    register_decision_type,
    unregister_decision_type,
    validate_decision,
)
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import OpenServers
from tests.support.node_support import call, in_process, one_turn_graph, start, text_of, tool_messages

pytestmark = pytest.mark.anyio

# ------------------------------------------------------------------ the whole extension: a model and what it does


class Sign(DecisionModel):
    """Run the write with your name appended to its content."""

    type: Literal["sign"]
    by: str = Field(min_length=1, max_length=40, description="Who signs the change off")

    def decision(self, payload: ApprovalInterrupt) -> Decision:
        args = dict(payload["arguments"])
        args["content"] = f"{args.get('content', '')}\n-- signed off by {self.by}"
        return {"type": "edit", "edited_action": {"name": payload["published_name"], "args": args}}


@pytest.fixture(autouse=True)
def sign_type() -> Iterator[None]:
    register_decision_type(Sign)
    yield
    unregister_decision_type("sign")


def signed_writes() -> ApprovalPolicy:
    """Every write asks, and the human may sign it off or reject it (nothing else)."""
    return ApprovalPolicy().when(
        "demo_write_file", lambda call, tool: Verdict.ask("a write needs a sign-off", ["sign", "reject"])
    )


# ------------------------------------------------------------------ a call through it


async def test_an_added_decision_type_is_offered_shown_checked_and_runs_the_call_as_it_says(
    open_servers: OpenServers,
) -> None:
    srv = build_server()
    servers: McpServers = open_servers({"demo": in_process(srv, "modern")})
    write = call("demo_write_file", "w1", path="notes.txt", content="Ship it")
    graph = one_turn_graph(servers, [write], StrictSaver(), fan_out=False, policy=signed_writes())
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(start(), cfg)

    [pending] = pending_interrupts(out)
    assert pending.kind == "approval" and pending.payload["allowed_decisions"] == ["sign", "reject"]
    [raised] = out["__interrupt__"]
    shown = raised.response_schema  # what clients are shown: the models' own schema
    assert [branch["title"] for branch in shown["oneOf"]] == ["sign", "reject"]
    assert shown["oneOf"][0]["properties"]["by"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 40,
        "description": "Who signs the change off",
    }
    assert shown["oneOf"][0]["required"] == ["type", "by"]

    # wrong answers are refused in words, before anything is sent ...
    wrong: list[tuple[object, str]] = [
        ({"type": "approve"}, r"'w1'.*decision type 'approve' is not allowed; allowed: sign, reject"),
        ({"type": "sign"}, r"'w1'.*a 'sign' decision's 'by': Field required"),
        ({"type": "sign", "by": ""}, r"'by': String should have at least 1 character"),
        (
            {"type": "sign", "by": "Ada", "note": "x"},
            r"a 'sign' decision has no 'note' \(its keys: type, by\)",
        ),
    ]
    for answer, words in wrong:
        with pytest.raises(ResumeError, match=words):
            resume_command(out, decisions={"w1": answer})
    # ... and one sent anyway (a client that skips resume_command) is refused by the interrupt's own model,
    # before it is saved: nothing runs, and the same interrupt stays pending
    with pytest.raises(ValidationError, match=r"'by': String should have at least 1 character"):
        await graph.ainvoke(Command(resume={raised.id: {"type": "sign", "by": ""}}), cfg)
    assert srv.events.counts["write_file.enter"] == 0
    still = await graph.aget_state(cfg)
    assert [i.id for i in still.interrupts] == [raised.id]

    out = await graph.ainvoke(resume_command(still, decisions={"w1": {"type": "sign", "by": "Ada"}}), cfg)
    assert "__interrupt__" not in out
    signed = "Ship it\n-- signed off by Ada"
    assert srv.workspace["notes.txt"] == signed
    assert srv.events.counts["write_file.commit"] == 1
    assert text_of(tool_messages(out)["w1"]) == f"Wrote {len(signed)} characters to notes.txt"


# ------------------------------------------------------------------ what an added type cannot do


def sign_payload(input_schema: dict[str, Any] | None = None) -> ApprovalInterrupt:
    payload: ApprovalInterrupt = {
        "type": "mcp_approval",
        "tool_call_id": "w1",
        "server": "demo",
        "tool": "write_file",
        "published_name": "demo_write_file",
        "arguments": {"path": "notes.txt", "content": "Ship it"},
        "hints": None,
        "reason": "a write needs a sign-off",
        "allowed_decisions": ["sign", "reject"],
        "description": "Create or overwrite a file",
    }
    if input_schema is not None:
        payload["input_schema"] = input_schema
    return payload


class Elsewhere(DecisionModel):
    """A broken extension: it stands for a call of another tool."""

    type: Literal["elsewhere"]

    def decision(self, payload: ApprovalInterrupt) -> Decision:
        return {"type": "edit", "edited_action": {"name": "demo_delete_file", "args": {"path": "notes.txt"}}}


class Nothing(DecisionModel):
    """A broken extension: it stands for no built-in decision."""

    type: Literal["nothing"]

    def decision(self, payload: ApprovalInterrupt) -> Decision:
        return self.model_dump()  # type: ignore[return-value]  # {"type": "nothing"}: what no path applies


def test_what_an_added_type_stands_for_is_checked_like_any_answer() -> None:
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string", "maxLength": 30}},
        "required": ["path", "content"],
    }
    assert validate_decision(sign_payload(schema), {"type": "sign", "by": "Ada"}) == {
        "type": "edit",
        "edited_action": {
            "name": "demo_write_file",
            "args": {"path": "notes.txt", "content": "Ship it\n-- signed off by Ada"},
        },
    }
    with pytest.raises(
        DecisionError, match=r"args\.content: .* is too long.*the edit a 'sign' decision stands for"
    ):
        validate_decision(sign_payload(schema), {"type": "sign", "by": "Ada Lovelace"})
    for broken in (Elsewhere, Nothing):
        register_decision_type(broken)
        try:
            payload = sign_payload()
            payload["allowed_decisions"] = [broken.kind()]
            with pytest.raises(
                DecisionError, match=r"must stay 'demo_write_file'|must stand for one of approve"
            ):
                validate_decision(payload, {"type": broken.kind()})
        finally:
            unregister_decision_type(broken.kind())


def test_a_policy_offers_only_registered_types_and_built_in_names_are_not_taken() -> None:
    unregister_decision_type("sign")
    with pytest.raises(ConfigError, match=r"unknown decision type\(s\) \['sign'\]"):
        Verdict.ask("a write needs a sign-off", ["sign", "reject"])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="'edit' is a built-in decision type"):

        class Edit(DecisionModel):
            type: Literal["edit"]

        register_decision_type(Edit)
    # an answer of an unregistered type is an unknown decision, even where a payload names it
    with pytest.raises(DecisionError, match=r"unknown decision 'sign'; allowed: reject"):
        validate_decision(sign_payload(), {"type": "sign", "by": "Ada"})
