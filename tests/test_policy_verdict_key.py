"""The tool node's remembered verdicts (graph/proof.policy_verdict) follow everything the verdict reads (#19 cost).

Each case evaluates a call once (so the verdict is remembered), changes one thing the verdict depends on, and checks
that the remembered path gives what a fresh evaluation gives: a cache must never turn an ``ask`` into an ``allow``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import ToolCall

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.graph.proof import policy_verdict
from langgraph_mcp.humans import policy as policy_module
from langgraph_mcp.humans.policy_rules import Rule

READ_ONLY = {"readOnlyHint": True}
WRITE = {"readOnlyHint": False, "destructiveHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}


def tool(annotations: dict[str, Any] | None, *, trusted: bool = True, description: str = "d") -> McpTool:
    return McpTool(
        server="fs",
        name="op",
        published_name="fs_op",
        title=None,
        description=description,
        input_schema={"type": "object"},
        output_schema=None,
        annotations=annotations,
        trusted=trusted,
    )


def call(**args: Any) -> ToolCall:
    return {"name": "fs_op", "args": args, "id": "c1", "type": "tool_call"}


def same(policy: ApprovalPolicy, c: ToolCall, t: McpTool | None, principal: str | None = None) -> str:
    """The remembered path's verdict, checked against a fresh evaluation (kind, reason, decisions, rule)."""
    got = policy_verdict(policy, c, t, principal)
    fresh = policy.verdict(c, t, principal=principal)
    assert (got.kind, got.reason, got.allowed_decisions, got.rule) == (
        fresh.kind,
        fresh.reason,
        fresh.allowed_decisions,
        fresh.rule,
    )
    return got.kind


def test_a_changed_definition_is_judged_anew() -> None:
    policy = ApprovalPolicy()
    assert same(policy, call(), tool(READ_ONLY)) == "allow"
    assert same(policy, call(), tool(DESTRUCTIVE)) == "ask"  # same name, the server now says destructive
    assert same(policy, call(), tool(READ_ONLY, trusted=False)) == "ask"
    assert same(policy, call(), None) == "allow"  # non_mcp
    policy.non_mcp = "ask"
    assert same(policy, call(), None) == "ask"


def test_policy_settings_changed_in_place_are_followed() -> None:
    policy = ApprovalPolicy()
    assert same(policy, call(), tool(WRITE)) == "allow"
    policy.ask_writes = True
    assert same(policy, call(), tool(WRITE)) == "ask"
    policy.ask_writes = False
    policy.ask_open_world = True
    assert same(policy, call(), tool(WRITE)) == "ask"
    policy.ask_open_world = False
    assert same(policy, call(), tool(WRITE)) == "allow"
    policy.tools["fs_*"] = "ask"  # the dict itself, mutated in place
    assert same(policy, call(), tool(WRITE)) == "ask"
    policy.tools["fs_op"] = "deny"
    assert same(policy, call(), tool(READ_ONLY)) == "deny"
    del policy.tools["fs_op"]
    policy.default_decisions.remove("edit")  # in place too: the ask offers what the policy says now
    assert same(policy, call(), tool(READ_ONLY)) == "ask"


def test_rules_on_arguments_and_principal_are_judged_per_call() -> None:
    policy = ApprovalPolicy(
        rules=(
            Rule(id="scratch", tool="fs_op", verdict="allow", args={"/path": "scratch/*"}),
            Rule(id="alice", tool="fs_op", verdict="allow", principal="alice"),
        )
    )
    assert same(policy, call(path="scratch/a"), tool(DESTRUCTIVE)) == "allow"
    assert same(policy, call(path="etc/passwd"), tool(DESTRUCTIVE)) == "ask"
    assert same(policy, call(path="etc/passwd"), tool(DESTRUCTIVE), "alice") == "allow"
    assert same(policy, call(path="etc/passwd"), tool(DESTRUCTIVE), "bob") == "ask"
    policy.rules = (Rule(id="never", tool="fs_*", verdict="deny", locked=True),)
    assert same(policy, call(path="scratch/a"), tool(DESTRUCTIVE), "alice") == "deny"


def test_a_predicate_decides_every_call_itself() -> None:
    policy = ApprovalPolicy()
    assert same(policy, call(), tool(READ_ONLY)) == "allow"
    seen: list[Any] = []

    def paranoid(c: ToolCall, t: McpTool | None) -> str:
        seen.append(c["args"])
        return "ask" if len(seen) > 1 else "allow"

    policy.when("fs_*", paranoid)
    assert policy_verdict(policy, call(n=1), tool(READ_ONLY), None).kind == "allow"
    assert policy_verdict(policy, call(n=1), tool(READ_ONLY), None).kind == "ask"
    assert seen == [{"n": 1}, {"n": 1}]


def test_an_equal_call_is_evaluated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    evaluated: list[str] = []
    original: Callable[..., Any] = policy_module.decide

    def counted(*args: Any) -> Any:
        evaluated.append(args[3]["name"])
        return original(*args)

    monkeypatch.setattr(policy_module, "decide", counted)
    policy = ApprovalPolicy(tools={"*": "allow"})
    for i in range(5):
        assert policy_verdict(policy, {**call(a=i), "id": f"c{i}"}, tool(READ_ONLY), None).allowed
    assert evaluated == ["fs_op"]  # no rule reads the arguments: one evaluation for all five
    policy_verdict(policy, call(), tool(DESTRUCTIVE), None)
    assert evaluated == ["fs_op", "fs_op"]
