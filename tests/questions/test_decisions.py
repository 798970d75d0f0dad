"""Approval decisions are checked against their interrupt before LangGraph saves them."""

from __future__ import annotations

import json
from typing import Any, TypedDict, get_args, get_type_hints

import pytest
from langgraph.errors import is_invalid_resume
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from pydantic import TypeAdapter, ValidationError

from langgraph_mcp.errors import AnswerRefusedError, DecisionError
from langgraph_mcp.payloads import (
    ALL_DECISIONS,
    ApprovalInterrupt,
    ApproveDecision,
    DecisionType,
    EditDecision,
    EditedAction,
    RejectDecision,
    RespondDecision,
)
from langgraph_mcp.questions.decisions import (
    DECISION_TYPES,
    card_decision_response_schema,
    decision_json_schema,
    decision_response_schema,
    validate_decision,
)
from tests.support.checkpointers import StrictSaver

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "content": {"type": "string"},
        "edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
    "$defs": {
        "Edit": {
            "type": "object",
            "properties": {"line": {"type": "integer", "minimum": 1}, "text": {"type": "string"}},
            "required": ["line"],
        }
    },
}


def payload(
    allowed: list[DecisionType] | None = None, *, input_schema: dict[str, Any] | None = INPUT_SCHEMA
) -> ApprovalInterrupt:
    p: ApprovalInterrupt = {
        "type": "mcp_approval",
        "tool_call_id": "call-42",
        "server": "fs",
        "tool": "write_file",
        "published_name": "fs_write_file",
        "arguments": {"path": "/tmp/a.txt", "content": "hi"},
        "hints": None,
        "reason": "destructiveHint (spec default)",
        "allowed_decisions": allowed if allowed is not None else ["approve", "edit", "reject", "respond"],
        "description": "Write a file",
    }
    if input_schema is not None:
        p["input_schema"] = input_schema
    return p


def edit(args: Any, name: str = "fs_write_file") -> dict[str, Any]:
    return {"type": "edit", "edited_action": {"name": name, "args": args}}


# ------------------------------------------------------------------------------------------ validate_decision


def test_valid_decisions_come_back_clean() -> None:
    p = payload()
    assert validate_decision(p, {"type": "approve"}) == {"type": "approve"}
    # Issue 9 item 4: keys a decision type does not define are refused now (they used to be dropped).
    with pytest.raises(DecisionError, match="'approve' decision has no 'note'"):
        validate_decision(p, {"type": "approve", "note": "extra keys are refused"})
    assert validate_decision(p, {"type": "reject"}) == {"type": "reject"}
    assert validate_decision(p, {"type": "reject", "message": "no"}) == {"type": "reject", "message": "no"}
    assert validate_decision(p, {"type": "respond", "message": "42"}) == {"type": "respond", "message": "42"}
    args = {"path": "/tmp/b.txt", "content": "bye", "edits": [{"line": 1, "text": "x"}]}
    decided = validate_decision(p, edit(args))
    assert decided == edit(args)
    assert decided["edited_action"]["args"] is not args  # type: ignore[typeddict-item]  # a copy


def test_disallowed_type_names_call_and_lists_allowed_types() -> None:
    with pytest.raises(DecisionError) as info:
        validate_decision(payload(["approve", "reject"]), edit({"path": "x", "content": "y"}))
    message = str(info.value)
    assert "'call-42'" in message
    assert "'edit' is not allowed" in message
    assert "allowed: approve, reject" in message


def test_unknown_type_and_non_objects_are_rejected() -> None:
    with pytest.raises(DecisionError, match=r"call-42.*unknown decision 'accept'.*allowed: approve, edit"):
        validate_decision(payload(), {"type": "accept"})
    with pytest.raises(DecisionError, match="must be an object"):
        validate_decision(payload(), "approve")
    with pytest.raises(DecisionError, match="unknown decision None"):
        validate_decision(payload(), {})


def test_edit_may_not_rename_the_tool() -> None:
    with pytest.raises(DecisionError, match=r"call-42.*must stay 'fs_write_file'.*got 'fs_delete_file'"):
        validate_decision(payload(), edit({"path": "x", "content": "y"}, name="fs_delete_file"))
    # the server's own tool name is not the published name either
    with pytest.raises(DecisionError, match="must stay"):
        validate_decision(payload(), edit({"path": "x", "content": "y"}, name="write_file"))


def test_edit_needs_an_action_with_object_args() -> None:
    with pytest.raises(DecisionError, match="needs 'edited_action'"):
        validate_decision(payload(), {"type": "edit"})
    with pytest.raises(DecisionError, match=r"edited_action\.args must be an object, got list"):
        validate_decision(payload(), edit([1, 2]))


def test_edit_args_failing_the_input_schema_name_call_and_arg_path() -> None:
    with pytest.raises(DecisionError) as info:
        validate_decision(payload(), edit({"path": 7, "content": "y", "edits": [{"line": 1}, {"line": 0}]}))
    message = str(info.value)
    assert "'call-42'" in message
    assert "args.path: 7 is not of type 'string'" in message
    assert "args.edits[1].line: 0 is less than the minimum of 1" in message

    with pytest.raises(DecisionError, match="args: 'content' is a required property"):
        validate_decision(payload(), edit({"path": "x"}))
    with pytest.raises(
        DecisionError, match=r"args: Additional properties are not allowed \('mode' was unexpected"
    ):
        validate_decision(payload(), edit({"path": "x", "content": "y", "mode": "w"}))


def test_edit_args_are_not_checked_without_an_input_schema() -> None:
    assert validate_decision(payload(input_schema=None), edit({"anything": 1})) == edit({"anything": 1})


def test_schema_declaring_an_older_draft_is_checked_with_that_draft() -> None:
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"n": {"$ref": "#/definitions/N"}},
        "definitions": {"N": {"type": "integer"}},
    }
    assert validate_decision(payload(input_schema=draft7), edit({"n": 1}))
    with pytest.raises(DecisionError, match=r"args\.n: 'one' is not of type 'integer'"):
        validate_decision(payload(input_schema=draft7), edit({"n": "one"}))


def test_remote_refs_are_never_fetched() -> None:
    remote = {"type": "object", "properties": {"x": {"$ref": "https://example.invalid/schema.json"}}}
    with pytest.raises(DecisionError, match="unresolvable"):
        validate_decision(payload(input_schema=remote), edit({"x": 1}))


def test_invalid_input_schema_makes_edits_impossible_but_says_why() -> None:
    broken = {"type": "object", "properties": {"x": {"type": "no-such-type"}}}
    with pytest.raises(DecisionError, match=r"inputSchema is invalid.*approve or reject"):
        validate_decision(payload(input_schema=broken), edit({"x": 1}))


def test_respond_needs_a_non_empty_message_and_reject_message_must_be_text() -> None:
    for bad in ({"type": "respond"}, {"type": "respond", "message": "  "}, {"type": "respond", "message": 3}):
        with pytest.raises(DecisionError, match=r"call-42.*non-empty 'message'"):
            validate_decision(payload(), bad)
    with pytest.raises(DecisionError, match="reject 'message' must be a string"):
        validate_decision(payload(), {"type": "reject", "message": ["no"]})


# ------------------------------------------------------------------------------------------ response schema


def test_response_model_validates_and_exposes_the_decision() -> None:
    model = decision_response_schema(payload(["approve", "reject"]))
    assert model.model_validate({"type": "reject", "message": "no"}).decision() == {
        "type": "reject",
        "message": "no",
    }
    with pytest.raises(ValidationError, match=r"call-42.*'respond' is not allowed"):
        model.model_validate({"type": "respond", "message": "x"})


def test_response_json_schema_is_a_union_of_the_allowed_decisions() -> None:
    schema = TypeAdapter(decision_response_schema(payload(["approve", "edit", "reject"]))).json_schema()
    assert schema == {
        **decision_json_schema(payload(["approve", "edit", "reject"])),
        "title": "ApprovalDecision",
    }
    assert [branch["title"] for branch in schema["oneOf"]] == ["approve", "edit", "reject"]
    edit_branch = schema["oneOf"][1]["properties"]["edited_action"]["properties"]
    assert edit_branch["name"] == {"const": "fs_write_file", "type": "string"}
    # the tool's $defs are inlined, so the args schema stands on its own
    assert edit_branch["args"]["properties"]["edits"]["items"]["properties"]["line"] == {
        "type": "integer",
        "minimum": 1,
    }
    assert "$ref" not in json.dumps(schema)


def test_single_allowed_decision_gets_its_plain_schema() -> None:
    schema = decision_json_schema(payload(["respond"]))
    assert "oneOf" not in schema
    assert schema["required"] == ["type", "message"]


def test_recursive_and_remote_refs_do_not_break_the_json_schema() -> None:
    tree = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}, "other": {"$ref": "https://example.invalid/x"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
    }
    schema = TypeAdapter(decision_response_schema(payload(input_schema=tree))).json_schema()
    args = schema["oneOf"][1]["properties"]["edited_action"]["properties"]["args"]
    assert args["properties"]["root"]["properties"]["kids"]["items"] == {}  # recursion cut where it recurs
    assert args["properties"]["other"] == {}


def test_compat_mode_takes_one_hitl_response_decision() -> None:
    model = card_decision_response_schema(payload())
    assert model.model_validate({"decisions": [{"type": "approve"}]}).decision() == {"type": "approve"}
    bad: dict[str, Any]
    for bad in ({"decisions": []}, {"decisions": [{"type": "approve"}, {"type": "reject"}]}):
        with pytest.raises(AnswerRefusedError, match="exactly one decision"):  # a card's shape: in words
            model.model_validate(bad)
    with pytest.raises(ValidationError, match="exactly one decision"):  # no card sends this: the plain error
        model.model_validate({"type": "approve"})
    with pytest.raises(AnswerRefusedError, match="must stay 'fs_write_file'"):
        model.model_validate({"decisions": [edit({"path": "x", "content": "y"}, name="other")]})
    schema = TypeAdapter(model).json_schema()
    assert schema["required"] == ["decisions"]
    assert schema["properties"]["decisions"]["minItems"] == schema["properties"]["decisions"]["maxItems"] == 1


def test_response_model_ignores_later_changes_to_the_payload() -> None:
    p = payload(["approve"])
    model = decision_response_schema(p)
    p["allowed_decisions"].append("reject")
    with pytest.raises(ValidationError, match="not allowed"):
        model.model_validate({"type": "reject"})


# ------------------------------------------------------------------------------------------ in a real graph


class State(TypedDict, total=False):
    decision: dict[str, Any]


def review_graph(p: ApprovalInterrupt, *, card: bool = False) -> Any:
    runs: list[int] = []

    def review(state: State) -> State:
        runs.append(1)
        answer = interrupt(
            p, response_schema=(card_decision_response_schema if card else decision_response_schema)(p)
        )
        return {"decision": dict(answer.decision())}

    builder = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=StrictSaver())


def pending_ids(graph: Any, config: Any) -> list[str]:
    return [i.id for i in graph.get_state(config).interrupts]


def test_bad_decision_is_refused_before_saving_and_the_same_interrupt_accepts_a_good_one() -> None:
    graph = review_graph(payload(["approve", "edit", "reject"]))
    config = {"configurable": {"thread_id": "t1"}}
    first = graph.invoke({}, config)
    (pending,) = first["__interrupt__"]
    assert pending.value["tool_call_id"] == "call-42"
    assert [b["title"] for b in pending.response_schema["oneOf"]] == ["approve", "edit", "reject"]

    # a disallowed decision type
    with pytest.raises(ValidationError, match="'respond' is not allowed") as info:
        graph.invoke(Command(resume={pending.id: {"type": "respond", "message": "hi"}}), config)
    assert is_invalid_resume(info.value)
    assert pending_ids(graph, config) == [pending.id]

    # an edit whose args fail the tool's inputSchema
    with pytest.raises(ValidationError, match=r"args\.edits\[0\]\.line: 'one' is not of type 'integer'"):
        graph.invoke(
            Command(resume={pending.id: edit({"path": "x", "content": "y", "edits": [{"line": "one"}]})}),
            config,
        )
    assert pending_ids(graph, config) == [pending.id]

    # the same interrupt id now takes a good answer: nothing bad was saved and replayed
    good = edit({"path": "/tmp/c.txt", "content": "ok"})
    result = graph.invoke(Command(resume={pending.id: good}), config)
    assert result["decision"] == good
    assert "__interrupt__" not in result
    assert pending_ids(graph, config) == []


def test_compat_mode_in_a_graph_takes_an_unkeyed_hitl_response() -> None:
    graph = review_graph(payload(["approve", "reject"]), card=True)
    config = {"configurable": {"thread_id": "t2"}}
    (pending,) = graph.invoke({}, config)["__interrupt__"]
    with pytest.raises(AnswerRefusedError, match="exactly one decision") as info:
        graph.invoke(Command(resume={"decisions": [{"type": "approve"}, {"type": "approve"}]}), config)
    assert is_invalid_resume(info.value)
    assert pending_ids(graph, config) == [pending.id]
    result = graph.invoke(Command(resume={"decisions": [{"type": "reject", "message": "not now"}]}), config)
    assert result["decision"] == {"type": "reject", "message": "not now"}


# ------------------------------------------------------------------------------------------ one shape


def test_each_built_in_type_has_one_model_whose_keys_are_its_typeddicts() -> None:
    shapes = {
        "approve": ApproveDecision,
        "edit": EditDecision,
        "reject": RejectDecision,
        "respond": RespondDecision,
    }
    assert ALL_DECISIONS == get_args(DecisionType) == tuple(shapes)
    for kind, shape in shapes.items():
        model = DECISION_TYPES[kind]
        assert model.kind() == kind
        assert list(model.model_fields) == list(get_type_hints(shape)), kind
    assert list(DECISION_TYPES["edit"].model_fields["edited_action"].annotation.model_fields) == list(  # type: ignore[union-attr]
        get_type_hints(EditedAction)
    )


def test_a_clean_decision_checks_again_as_itself() -> None:
    """A resume value is checked wherever it is read (the node re-reads stored answers): clean stays clean."""
    p = payload()
    p["remember"] = ["thread", "principal"]
    answers: list[dict[str, Any]] = [
        {"type": "approve", "remember": "principal"},
        {"type": "reject", "message": "not now", "remember": "thread"},
        {"type": "respond", "message": "42"},
        edit({"path": "/tmp/b.txt", "content": "bye", "edits": [{"line": 2}]}),
    ]
    for answer in answers:
        clean = validate_decision(p, answer)
        assert clean == answer
        assert validate_decision(p, clean) == clean
    schema = decision_json_schema(p)
    for branch in ("approve", "reject"):
        shown = next(b for b in schema["oneOf"] if b["title"] == branch)
        assert shown["properties"]["remember"] == {"enum": ["thread", "principal"], "type": "string"}
        assert shown["additionalProperties"] is False


def test_refusals_of_several_problems_name_the_first_in_the_old_order() -> None:
    p = payload()
    with pytest.raises(DecisionError, match=r"edited_action has no 'mode' \(its keys: name, args\)"):
        validate_decision(p, {"type": "edit", "edited_action": {"name": "other", "args": [], "mode": "w"}})
    with pytest.raises(
        DecisionError, match=r"'reject' decision has no 'mesage', 'why' \(its keys: type, message, remember\)"
    ):
        validate_decision(p, {"type": "reject", "mesage": "typo", "why": 1})
    with pytest.raises(DecisionError, match=r"must stay 'fs_write_file'.*got None"):
        validate_decision(p, {"type": "edit", "edited_action": {"args": {}}})
    with pytest.raises(DecisionError, match=r"edited_action\.args must be an object, got NoneType"):
        validate_decision(p, {"type": "edit", "edited_action": {"name": "fs_write_file"}})
