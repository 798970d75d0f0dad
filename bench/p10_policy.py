"""P10 policy: what a 200-rule policy file adds per call, side by side with the built-in default policy.

Rows (median per call over interleaved blocks; each block times every variant once, in a rotating order):

* ``default policy`` — ``ApprovalPolicy()``: the built-in hint rules only.
* ``200 rules, no rule matches`` — a call whose tool no rule names (the hint rules decide in the end).
* ``200 rules, 6 candidates`` — a call whose tool six rules can match: a locked regex on the path, a principal
  rule, argument globs and a regex (RE2), the winner in the middle of the file.
* ``200 rules, cache miss`` — the same call on a tool object the policy has not seen (every rule's tool-only
  conditions are tried once; a catalog keeps its tool objects, so this is a first call per tool).

Target: each 200-rule row adds at most 50 µs per call to the default row.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import ToolCall

from bench.common import Section, Summary, main
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.policy.policy import ApprovalPolicy

TARGET_US = 50.0
RULES = 200


def tool(name: str, annotations: dict[str, Any] | None) -> McpTool:
    return McpTool(
        server="demo",
        name=name,
        published_name=f"demo_{name}",
        title=None,
        description="",
        input_schema={"type": "object"},
        output_schema=None,
        annotations=annotations,
    )


def big_policy() -> ApprovalPolicy:
    """200 rules over 60 tools: exact names, globs, hints, arguments, principals, a few locked."""
    rules: list[dict[str, Any]] = [
        {
            "id": "no-escape",
            "tool": "demo_*",
            "args": {"/path": {"regex": r"(^/|(^|/)\.\.(/|$))"}},
            "verdict": "deny",
            "locked": True,
        },
        {"id": "payments", "tool": "demo_pay_*", "verdict": "ask", "locked": True},
    ]
    for i in range(RULES - 8):
        kind = i % 4
        name = f"demo_tool_{i % 60}"
        if kind == 0:
            rules.append({"id": f"r{i}", "tool": name, "verdict": "allow"})
        elif kind == 1:
            rules.append({"id": f"r{i}", "tool": f"{name}*", "args": {"/mode": "fast-*"}, "verdict": "ask"})
        elif kind == 2:
            rules.append(
                {"id": f"r{i}", "server": "other*", "hints": {"destructiveHint": True}, "verdict": "deny"}
            )
        else:
            rules.append({"id": f"r{i}", "tool": name, "principal": "admin-*", "verdict": "allow"})
    rules[100:100] = [
        {"id": "deletes-admin", "tool": "demo_delete_file", "principal": "admin-*", "verdict": "allow"},
        {"id": "deletes-tmp", "tool": "demo_delete_*", "args": {"/path": "tmp/*"}, "verdict": "allow"},
        {
            "id": "deletes-csv",
            "tool": "demo_delete_file",
            "args": {"/path": {"regex": r"\.csv$"}},
            "verdict": "ask",
        },
        {
            "id": "deletes-scratch",
            "tool": "demo_delete_file",
            "args": {"/path": "scratch/*"},
            "verdict": "allow",
        },
        {"id": "deletes", "hints": {"destructiveHint": True}, "verdict": "ask", "expires_after": 900},
        {"id": "reads", "hints": {"readOnlyHint": True}, "verdict": "allow"},
    ]
    policy = ApprovalPolicy.load({"rules": rules})
    assert len(policy.rules) == RULES, len(policy.rules)
    return policy


def per_call(fn: Callable[[], Any], calls: int) -> float:
    began = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - began) / calls


async def measure(quick: bool) -> Section:
    blocks, calls = (7, 2_000) if quick else (21, 10_000)
    default = ApprovalPolicy()
    big = big_policy()
    delete = tool("delete_file", {"destructiveHint": True})
    unnamed = tool("echo", {"readOnlyHint": False, "destructiveHint": False})
    delete_call: ToolCall = {"name": delete.published_name, "args": {"path": "scratch/a.txt"}, "id": "c1"}
    echo_call: ToolCall = {"name": unnamed.published_name, "args": {"text": "hi"}, "id": "c2"}
    assert big.verdict(delete_call, delete, principal="ann").rule == "deletes-scratch"
    assert big.verdict(echo_call, unnamed).rule == "hints:write"
    assert default.verdict(delete_call, delete).rule == "hints:destructive"

    def cache_miss() -> Any:
        fresh = dataclasses.replace(delete)  # a new tool object: the per-tool cache has not seen it
        return big.verdict(delete_call, fresh, principal="ann")

    def default_with_copy() -> Any:
        fresh = dataclasses.replace(delete)  # the same copy cost, so the row compares the policies alone
        return default.verdict(delete_call, fresh, principal="ann")

    variants: dict[str, Callable[[], Any]] = {
        "default policy": lambda: default.verdict(delete_call, delete, principal="ann"),
        "200 rules, no rule matches": lambda: big.verdict(echo_call, unnamed, principal="ann"),
        "200 rules, 6 candidates": lambda: big.verdict(delete_call, delete, principal="ann"),
        "default policy, new tool object": default_with_copy,
        "200 rules, cache miss": cache_miss,
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    gc.disable()
    try:
        for block in range(blocks):
            for name in names[block % len(names) :] + names[: block % len(names)]:
                times[name].append(per_call(variants[name], calls))
    finally:
        gc.enable()
    section = Section(
        "p10",
        f"P10 policy: a {RULES}-rule policy file vs the default policy, per call",
        [
            "variant",
            "µs per call, median [p25–p75]",
            "added vs its default row",
            f"target ≤ {TARGET_US:g} µs",
        ],
    )
    baseline = {
        "default policy": "default policy",
        "200 rules, no rule matches": "default policy",
        "200 rules, 6 candidates": "default policy",
        "default policy, new tool object": "default policy, new tool object",
        "200 rules, cache miss": "default policy, new tool object",
    }
    for name in names:
        summary = Summary.of([t * 1e6 for t in times[name]])
        base = baseline[name]
        added = [(a - b) * 1e6 for a, b in zip(times[name], times[base], strict=True)]
        added_summary = Summary.of(added)
        if base == name:
            verdict = "—"
        elif name.endswith("cache miss"):
            verdict = "once per tool object (not a per-call cost)"
        else:
            verdict = "met" if added_summary.median <= TARGET_US else "MISSED"
        section.rows.append(
            [
                name,
                f"{summary.median:.2f} [{summary.p25:.2f}–{summary.p75:.2f}]",
                "—" if base == name else f"{added_summary.median:+.2f} µs",
                verdict,
            ]
        )
        section.data[name] = {"us_per_call": summary.as_dict(), "added_us": added_summary.as_dict()}
    section.notes.append(
        f"{blocks} interleaved blocks of {calls:,} calls each; gc off while timing. Rules are compiled once at "
        "load (globs via fnmatch, regexes via RE2); which rules can match a tool is cached per tool object."
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
