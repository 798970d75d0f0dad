"""Living documentation: a new policy rule condition, added through the extension point
(:mod:`langgraph_mcp.policy.conditions`) and nothing else, decides real calls.

The example condition is ``weekdays``: a time window read from the policy's clock (the test injects a clock it sets
by hand: no sleeps). It takes part in the gate's and the node's judgement over the demo server (what ran is read
from the server's own record), in the rule file's ``[[tests]]`` (``at = ...``) and in ``policy explain --at``; and
a warm call after the clock moved is judged anew (nothing remembers a verdict across calls).

Files a new condition touches: before this extension point, ``policy/rules.py`` (the field, the compiled
slots, ``call_match``), ``policy/precedence.py`` (``decide`` and the hand-kept ``verdict_key``), ``RuleTest``,
``cli/policy.py``; now one class and one :func:`register_condition` (this module).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import tools_condition

from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode, create_approval_gate, resume_command
from langgraph_mcp.cli.app import run as run_cli
from langgraph_mcp.errors import ConfigError, PolicyError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.graph.node import ToolCallRouter
from langgraph_mcp.policy.conditions import (
    CallInputs,
    Input,
    Match,
    Matcher,
    register_condition,
    unregister_condition,
)
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import OpenServers
from tests.support.node_support import call, in_process, text_of, tool_messages

Day = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
DAYS: tuple[Day, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

SATURDAY = 1_764_921_600.0 + 86_400  # 2025-12-06T00:00:00Z (a Saturday)
MONDAY = SATURDAY + 2 * 86_400


# ------------------------------------------------------------------ the whole extension: one class, one registration


class Weekdays:
    """``weekdays = ["sat", "sun"]``: the call is made on one of these days (UTC)."""

    key = "weekdays"
    reads: frozenset[Input] = frozenset({"now"})
    spec = list[Day]

    def compile(self, value: list[Day], verdict: str) -> Matcher:
        days = {DAYS.index(day) for day in value}

        def match(call: CallInputs) -> Match:
            now = call.now
            if now != now:  # NaN: the clock cannot tell, and a policy fails closed on that
                return None
            return time.gmtime(now).tm_wday in days

        return match


@pytest.fixture(autouse=True)
def weekdays() -> Iterator[None]:
    register_condition(Weekdays())
    yield
    unregister_condition("weekdays")


# ------------------------------------------------------------------ a policy that uses it


class Clock:
    """A clock the test sets by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


POLICY: dict[str, Any] = {
    "rules": [
        {"id": "weekend-cleanup", "tool": "demo_delete_file", "weekdays": ["sat", "sun"], "verdict": "allow"},
    ],
    "tests": [
        {
            "call": "demo_delete_file",
            "args": {"path": "todo.txt"},
            "annotations": {"readOnlyHint": False, "destructiveHint": True},
            "at": "2025-12-06T10:00:00Z",
            "expect": "allow",
            "rule": "weekend-cleanup",
        },
        {
            "call": "demo_delete_file",
            "args": {"path": "todo.txt"},
            "annotations": {"readOnlyHint": False, "destructiveHint": True},
            "at": "2025-12-08T10:00:00",
            "expect": "ask",
            "rule": "hints:destructive",
        },
    ],
}


def graph_for(servers: McpServers, policy: ApprovalPolicy) -> CompiledStateGraph[Any, Any, Any, Any]:
    """agent → approval gate → tool node: the gate and the node both judge with ``policy``."""

    def agent(state: MessagesState) -> dict[str, Any]:
        if any(isinstance(m, AIMessage) for m in state["messages"]):
            return {"messages": [AIMessage("done")]}
        path = str(state["messages"][0].content)  # the file the person named
        return {"messages": [AIMessage("", tool_calls=[call("demo_delete_file", "rm", path=path)])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers, policy))
    builder.add_node("tools", McpToolNode(servers, policy=policy))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=StrictSaver())


# ------------------------------------------------------------------ what the condition decides


@pytest.mark.anyio
async def test_a_registered_condition_decides_allow_or_ask_and_a_warm_call_after_the_clock_moves_is_judged_anew(
    open_servers: OpenServers,
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "modern")})
    clock = Clock(SATURDAY + 3600)
    policy = ApprovalPolicy.load(POLICY)  # its [[tests]] pass: the condition reads each test's `at`
    policy.clock = clock
    graph = graph_for(servers, policy)

    out = await graph.ainvoke(
        {"messages": [HumanMessage("todo.txt")]}, {"configurable": {"thread_id": "sat"}}
    )
    assert "__interrupt__" not in out  # Saturday: the rule allows, nobody is asked
    assert text_of(tool_messages(out)["rm"]) == "Deleted todo.txt"
    assert srv.events.counts["delete_file.commit"] == 1

    clock.now = (
        MONDAY + 3600
    )  # same graph, servers, listing and policy object: only the condition's input moved
    cfg: Any = {"configurable": {"thread_id": "mon"}}
    out = await graph.ainvoke({"messages": [HumanMessage("notes.txt")]}, cfg)
    [asked] = out["__interrupt__"]
    assert asked.value["rule"] == "hints:destructive"  # the weekend rule no longer matches: the built-in asks
    assert srv.events.counts["delete_file.commit"] == 1
    out = await graph.ainvoke(resume_command(out["__interrupt__"], decisions={"rm": {"type": "reject"}}), cfg)
    assert "rejected" in text_of(tool_messages(out)["rm"])
    assert srv.events.counts["delete_file.commit"] == 1

    clock.now = SATURDAY + 86_400 + 60  # Sunday: allowed again, on a warm path that just asked
    out = await graph.ainvoke(
        {"messages": [HumanMessage("notes.txt")]}, {"configurable": {"thread_id": "sun"}}
    )
    assert "__interrupt__" not in out
    assert text_of(tool_messages(out)["rm"]) == "Deleted notes.txt"
    assert srv.events.counts["delete_file.commit"] == 2


def test_a_condition_that_cannot_tell_matches_ask_and_deny_rules_but_never_allow() -> None:
    rules = [
        {"id": "weekend-deny", "tool": "fs_*", "weekdays": ["sat"], "verdict": "deny"},
        {"id": "weekday-allow", "weekdays": ["mon"], "verdict": "allow"},
    ]
    policy = ApprovalPolicy.load({"rules": rules, "non_mcp": "ask"})
    policy.clock = Clock(float("nan"))
    c = call("fs_x", "c1")
    assert policy.verdict(c, None).rule == "weekend-deny"  # cannot tell the day: the deny holds
    assert policy.verdict(call("other", "c2"), None).rule == "non-mcp"  # ... and the allow does not
    assert policy.verdict(call("other", "c3"), None, at=MONDAY).rule == "weekday-allow"


def test_self_tests_state_the_clock_and_a_failing_one_names_the_time() -> None:
    failing = {**POLICY, "tests": [{**POLICY["tests"][0], "at": "2025-12-09T10:00:00Z"}]}
    with pytest.raises(
        PolicyError, match=r"at 2025-12-09T10:00:00\+00:00: expected allow by rule 'weekend-cleanup'"
    ):
        ApprovalPolicy.load(failing)


def test_the_condition_is_a_rule_key_checked_and_dumped_like_the_built_in_ones() -> None:
    with pytest.raises(ConfigError, match=r"rules\[0\]\.extra_conditions: .*weekdays: Input should be 'mon'"):
        ApprovalPolicy.load({"rules": [{"id": "r", "weekdays": ["someday"], "verdict": "ask"}]})
    policy = ApprovalPolicy.load(POLICY)
    dumped = json.loads(policy.model_dump_json())
    assert dumped["rules"][0]["weekdays"] == ["sat", "sun"]
    assert ApprovalPolicy.load(dumped).rules == policy.rules
    unregister_condition("weekdays")  # without the registration the key is what it would be for a typo
    with pytest.raises(ConfigError, match=r"rules\[0\]\.weekdays: Extra inputs"):
        ApprovalPolicy.load(POLICY)
    with pytest.raises(ConfigError, match=r"rule key 'verdict' is already taken"):
        register_condition(type("Verdict", (Weekdays,), {"key": "verdict"})())


def test_policy_explain_reads_the_clock_from_at_and_names_the_condition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(json.dumps(POLICY))
    config = tmp_path / "servers.json"
    demo = {"command": sys.executable, "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"]}
    config.write_text(json.dumps({"mcpServers": {"demo": demo}}))
    explain = ["policy", "explain", str(policy_file), "--config", str(config), "demo_delete_file"]

    assert run_cli([*explain, "--args", '{"path": "todo.txt"}', "--at", "2025-12-07T09:00:00Z"]) == 0
    sunday = capsys.readouterr().out
    assert "allow" in sunday and "weekend-cleanup" in sunday
    assert 'weekdays=["sat", "sun"]' in sunday

    assert run_cli([*explain, "--args", '{"path": "todo.txt"}', "--at", "2025-12-08T09:00:00Z"]) == 0
    monday = capsys.readouterr().out
    assert "hints:destructive" in monday and "weekend-cleanup" not in monday
