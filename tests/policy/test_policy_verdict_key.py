"""The tool node's proof (approval/judge.prove) follows everything the verdict reads: each case proves a call,
changes one thing the verdict depends on, and checks that the proof gives what a fresh evaluation gives (the proof
keeps no memo of its own: issue 35 measured it at about 1.5 % of a call)."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from langchain_core.messages import ToolCall

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.approval.judge import prove
from langgraph_mcp.approval.owners import owner_of, owner_verdict
from langgraph_mcp.catalog import McpTool, ToolResolution
from langgraph_mcp.credentials import RUN_CONFIG
from langgraph_mcp.policy.policy import Verdict
from langgraph_mcp.policy.precedence import ToolOverride
from langgraph_mcp.policy.rules import Rule

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


# ------------------------------------------------------------------ the node's proof (approval/judge.prove)


def resolution(*tools: McpTool, unknown: dict[str, str] | None = None) -> ToolResolution:
    return ToolResolution("fs_op", tools, dict(unknown or {}))


def proved(policy: ApprovalPolicy, c: ToolCall, found: ToolResolution) -> str:
    """``prove`` (remembered), checked against a fresh evaluation of the owner and the policy."""
    got = prove(cast(Any, None), [policy], c, found, None, "t")
    verdict = owner_verdict(policy, c, owner_of(found), principal=policy.principal_for(None))
    assert (got.verdict.kind, got.verdict.reason, got.verdict.allowed_decisions, got.verdict.rule) == (
        verdict.kind,
        verdict.reason,
        verdict.allowed_decisions,
        verdict.rule,
    )
    assert (got.proven, got.denied) == (verdict.allowed, verdict.denied)
    return got.verdict.kind


def other_tool(**changes: Any) -> McpTool:
    return dataclasses.replace(tool(READ_ONLY), **changes)


def test_the_proof_follows_who_publishes_the_name() -> None:
    policy = ApprovalPolicy(tools={"*": "allow"})
    assert proved(policy, call(), resolution(tool(READ_ONLY))) == "allow"
    twice = resolution(tool(READ_ONLY), other_tool(server="other"))
    assert proved(policy, call(), twice) == "deny"  # a collision
    unknown = resolution(tool(READ_ONLY), unknown={"other": "its listing failed"})
    assert proved(policy, call(), unknown) == "ask"  # another server may publish it too
    assert proved(policy, call(), resolution(tool(READ_ONLY))) == "allow"


def test_the_proof_follows_the_tool_as_listed_now() -> None:
    policy = ApprovalPolicy(rules=(Rule(id="fs", server="fs", verdict="allow"),))
    assert proved(policy, call(), resolution(tool(DESTRUCTIVE))) == "allow"
    assert proved(policy, call(), resolution(other_tool(server="other", annotations=DESTRUCTIVE))) == "ask"
    policy = ApprovalPolicy(rules=(Rule(id="op", original_tool="op", verdict="allow"),))
    assert proved(policy, call(), resolution(tool(DESTRUCTIVE))) == "allow"
    assert proved(policy, call(), resolution(other_tool(name="op2", annotations=DESTRUCTIVE))) == "ask"
    policy = ApprovalPolicy()
    assert proved(policy, call(), resolution(tool(READ_ONLY))) == "allow"
    assert proved(policy, call(), resolution(tool(READ_ONLY, trusted=False))) == "ask"
    assert proved(policy, call(), resolution(tool(READ_ONLY, description="now it deletes"))) == "allow"
    policy.tools["fs_op2"] = "deny"  # the call's own name decides, whatever the listing calls the tool
    assert proved(policy, call(), resolution(tool(READ_ONLY))) == "allow"
    assert proved(policy, {**call(), "name": "fs_op2"}, resolution(tool(READ_ONLY))) == "deny"


def test_the_proof_follows_the_principal() -> None:
    who: list[str | None] = ["alice"]
    policy = ApprovalPolicy(
        principal=lambda config: who[0],
        rules=(Rule(id="alice", tool="fs_op", verdict="allow", principal="alice"),),
    )
    assert proved(policy, call(), resolution(tool(DESTRUCTIVE))) == "allow"
    who[0] = "bob"
    assert proved(policy, call(), resolution(tool(DESTRUCTIVE))) == "ask"
    plain = ApprovalPolicy(rules=(Rule(id="alice", tool="fs_op", verdict="allow", principal="alice"),))
    for user, kind in (("alice", "allow"), ("bob", "ask"), ("alice", "allow")):
        token = RUN_CONFIG.set({"configurable": {"user_id": user}})
        try:
            assert proved(plain, call(), resolution(tool(DESTRUCTIVE))) == kind
        finally:
            RUN_CONFIG.reset(token)


def test_the_proof_follows_the_policy_object_and_what_it_holds() -> None:
    allow_all = ApprovalPolicy(tools={"*": "allow"})
    assert proved(allow_all, call(), resolution(tool(DESTRUCTIVE))) == "allow"
    assert proved(ApprovalPolicy(), call(), resolution(tool(DESTRUCTIVE))) == "ask"
    allow_all.tools["fs_op"] = ToolOverride(verdict="ask", allowed_decisions=["approve", "reject"])
    assert proved(allow_all, call(), resolution(tool(DESTRUCTIVE))) == "ask"
    override = allow_all.tools["fs_op"]
    assert isinstance(override, ToolOverride) and override.allowed_decisions is not None
    override.allowed_decisions.remove("reject")  # inside a [tools] entry, in place
    assert proved(allow_all, call(), resolution(tool(DESTRUCTIVE))) == "ask"
    allow_all.when("fs_*", lambda c, t: "deny")  # a predicate added after the proof was remembered
    assert proved(allow_all, call(), resolution(tool(DESTRUCTIVE))) == "deny"

    class Stricter(ApprovalPolicy):
        def verdict(self, call: ToolCall, tool: McpTool | None, *, principal: str | None = None) -> Verdict:
            return (
                Verdict.deny("stricter") if (call.get("args") or {}).get("n") else super().verdict(call, tool)
            )

    stricter = Stricter(tools={"*": "allow"})
    assert proved(stricter, call(), resolution(tool(READ_ONLY))) == "allow"
    assert proved(stricter, call(n=1), resolution(tool(READ_ONLY))) == "deny"


def test_the_proof_follows_arguments_when_a_rule_reads_them() -> None:
    policy = ApprovalPolicy(
        rules=(Rule(id="scratch", tool="fs_op", verdict="allow", args={"/path": "scratch/*"}),)
    )
    assert proved(policy, call(path="scratch/a"), resolution(tool(DESTRUCTIVE))) == "allow"
    assert proved(policy, call(path="etc/passwd"), resolution(tool(DESTRUCTIVE))) == "ask"
    policy.rules = (Rule(id="other", tool="other_*", verdict="allow", args={"/path": "*"}),)
    assert proved(policy, call(path="scratch/a"), resolution(tool(DESTRUCTIVE))) == "ask"
