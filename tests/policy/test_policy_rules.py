"""Policy files: TOML and JSON, ``[[rules]]`` of every match kind, the locked tier, ``[[tests]]`` at load, explain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolCall

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.errors import ConfigError, PolicyError
from langgraph_mcp.policy.policy import ApprovalPolicy, Verdict
from langgraph_mcp.policy.rules import MAX_MATCHED_CHARS

READ_ONLY = {"readOnlyHint": True}
SAFE_WRITE = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
DESTRUCTIVE = {"destructiveHint": True}


def make_tool(
    name: str = "delete_file",
    *,
    server: str = "demo",
    annotations: dict[str, Any] | None = None,
    trusted: bool = True,
    published: str | None = None,
) -> McpTool:
    return McpTool(
        server=server,
        name=name,
        published_name=published or f"{server}_{name}",
        title=None,
        description="",
        input_schema={"type": "object"},
        output_schema=None,
        annotations=annotations,
        trusted=trusted,
    )


def call_for(tool: McpTool | str, **args: Any) -> ToolCall:
    name = tool if isinstance(tool, str) else tool.published_name
    return {"name": name, "args": args, "id": "call-1", "type": "tool_call"}


def rules(*entries: dict[str, Any], **top: Any) -> ApprovalPolicy:
    return ApprovalPolicy.load({"rules": list(entries), **top})


POLICY_TOML = """\
ask_writes = true
non_mcp = "ask"
default_decisions = ["approve", "reject"]

[tools]
"demo_*" = "ask"
demo_move_file = "deny"

[[rules]]
id = "scratch-deletes"
tool = "demo_delete_file"
server = "demo"
hints = { destructiveHint = true }
args = { "/path" = "scratch/*" }
principal = "admin-*"
verdict = "allow"
reason = "scratch files are disposable"

[[rules]]
id = "no-etc"
tool = "demo_*"
args = { "/path" = { regex = '^/etc(/|$)' } }
verdict = "deny"
locked = true
reason = "system files are off limits"

[[rules]]
id = "big-deletes"
tool = "demo_delete_file"
verdict = "ask"
allowed_decisions = ["approve", "reject"]
expires_after = 900
remember = "same_args"

[[tests]]
call = "demo_delete_file"
args = { path = "scratch/a.txt" }
principal = "admin-ann"
server = "demo"
annotations = { destructiveHint = true }
expect = "allow"
rule = "scratch-deletes"

[[tests]]
name = "etc is locked"
call = "demo_read_file"
args = { path = "/etc/passwd" }
annotations = { readOnlyHint = true }
expect = "deny"
rule = "no-etc"
"""


# ------------------------------------------------------------------------------------------ the file


def test_toml_and_json_files_load_the_same_policy(tmp_path: Path) -> None:
    toml_path = tmp_path / "policy.toml"
    toml_path.write_text(POLICY_TOML)
    from_toml = ApprovalPolicy.load(toml_path)
    json_path = tmp_path / "policy.json"
    json_path.write_text(from_toml.model_dump_json())
    from_json = ApprovalPolicy.load(json_path)
    assert from_json == from_toml
    assert [r.id for r in from_toml.rules] == ["scratch-deletes", "no-etc", "big-deletes"]
    assert from_toml.ask_writes and from_toml.non_mcp == "ask"
    assert from_toml.default_decisions == ["approve", "reject"]
    assert len(from_toml.tests) == 2
    # every existing key keeps its meaning next to the rules
    assert from_toml.verdict(call_for("demo_move_file"), make_tool("move_file")).denied
    assert from_toml.verdict(call_for("calc"), None).needs_approval


def test_any_extension_but_toml_is_read_as_json(tmp_path: Path) -> None:
    path = tmp_path / "policy.conf"
    path.write_text('{"tools": {"demo_*": "deny"}}')
    assert ApprovalPolicy.load(path).verdict(call_for("demo_x"), None).denied
    not_json = tmp_path / "policy.cfg"
    not_json.write_text(POLICY_TOML)
    with pytest.raises(ConfigError, match=r"policy\.cfg: invalid JSON"):
        ApprovalPolicy.load(not_json)


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text("[[rules]]\nid = \n")
    with pytest.raises(ConfigError, match=r"policy\.toml: invalid TOML"):
        ApprovalPolicy.load(path)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"verdict": "allow"}, r"rules\[0\]\.id: Field required"),
        ({"id": "r", "verdict": "maybe"}, r"rules\[0\]\.verdict: Input should be 'allow', 'ask' or 'deny'"),
        ({"id": "r", "verdict": "allow", "tool_name": "x"}, r"rules\[0\]\.tool_name: Extra inputs"),
        ({"id": "r", "verdict": "allow", "locked": True}, r"rules\[0\]: .*allow is no floor"),
        ({"id": "r", "verdict": "deny", "expires_after": 5}, r"expires_after only applies to verdict 'ask'"),
        ({"id": "r", "verdict": "ask", "expires_after": 0}, r"expires_after must be a positive number"),
        ({"id": "r", "verdict": "allow", "args": {"path": "x"}}, r"must be a JSON pointer"),
        ({"id": "r", "verdict": "allow", "args": {"/p": {"regex": "(?=x)"}}}, r"not valid RE2 syntax"),
        ({"id": "r", "verdict": "allow", "args": {"/p": {"glob": "a", "regex": "b"}}}, r"exactly one of"),
        ({"id": "r", "verdict": "allow", "args": {"/p": {"regex": "a" * 1001}}}, r"at most 1000"),
        ({"id": "r", "verdict": "allow", "hints": {"readOnly": True}}, r"rules\[0\]\.hints\.readOnly"),
        ({"id": "r", "verdict": "ask", "allowed_decisions": []}, r"must not be empty"),
    ],
)
def test_a_bad_rule_is_a_config_error_naming_it(rule: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        rules(rule)


def test_rule_ids_are_unique() -> None:
    with pytest.raises(ConfigError, match=r"id 'a' is already used by rules\[0\]"):
        rules({"id": "a", "verdict": "allow"}, {"id": "a", "verdict": "deny"})


# ------------------------------------------------------------------------------------------ match kinds


def test_tool_glob_matches_the_published_name() -> None:
    policy = rules({"id": "r", "tool": "demo_del*", "verdict": "deny"})
    assert policy.verdict(call_for(make_tool()), make_tool()).rule == "r"
    other = make_tool("read_file", annotations=READ_ONLY)
    assert policy.verdict(call_for(other), other).rule == "hints:read-only"
    # globs are case-sensitive
    assert rules({"id": "r", "tool": "DEMO_*", "verdict": "deny"}).verdict(call_for(other), other).allowed


def test_original_tool_matches_the_servers_own_name() -> None:
    policy = rules({"id": "r", "original_tool": "delete_*", "verdict": "deny"})
    renamed = make_tool("delete_file", published="files_rm")
    assert policy.verdict(call_for(renamed), renamed).rule == "r"
    assert policy.verdict(call_for("delete_file"), None).rule == "non-mcp"


def test_server_glob_and_no_mcp_server() -> None:
    policy = rules({"id": "r", "server": "de*", "verdict": "deny"})
    assert policy.verdict(call_for(make_tool()), make_tool()).denied
    elsewhere = make_tool(server="fs")
    assert policy.verdict(call_for(elsewhere), elsewhere).rule == "hints:destructive"
    assert policy.verdict(call_for("demo_delete_file"), None).allowed  # not an MCP tool: no server to match


@pytest.mark.parametrize(
    ("hints", "annotations", "matches"),
    [
        ({"destructiveHint": True}, None, True),  # the spec default counts: effective hints
        ({"destructiveHint": True}, READ_ONLY, False),  # read-only implies not destructive
        ({"readOnlyHint": True}, READ_ONLY, True),
        ({"readOnlyHint": False, "destructiveHint": False}, SAFE_WRITE, True),
        ({"idempotentHint": True}, {"idempotentHint": True}, True),
        ({"idempotentHint": True}, None, False),
        ({"openWorldHint": False}, {"openWorldHint": False}, True),
        ({"openWorldHint": False}, None, False),
    ],
)
def test_hints_match_the_effective_annotations(
    hints: dict[str, bool], annotations: dict[str, Any] | None, matches: bool
) -> None:
    policy = rules({"id": "r", "hints": hints, "verdict": "deny"})
    tool = make_tool(annotations=annotations)
    assert (policy.verdict(call_for(tool), tool).rule == "r") is matches


def test_an_untrusted_servers_hints_never_allow_but_still_tighten() -> None:
    policy = rules(
        {"id": "reads", "hints": {"readOnlyHint": True}, "verdict": "allow"},
        {"id": "kills", "hints": {"destructiveHint": True}, "verdict": "deny"},
    )
    liar = make_tool("read", server="sketchy", annotations=READ_ONLY, trusted=False)
    assert policy.verdict(call_for(liar), liar).rule == "untrusted-server"
    honest = make_tool("rm", server="sketchy", annotations=DESTRUCTIVE, trusted=False)
    assert policy.verdict(call_for(honest), honest).rule == "kills"


def test_args_glob_regex_and_equals() -> None:
    policy = rules(
        {"id": "glob", "args": {"/path": "scratch/*"}, "verdict": "allow"},
        {"id": "regex", "args": {"/path": {"regex": r"^tmp/[^/]+$"}}, "verdict": "allow"},
        {"id": "equals", "args": {"/force": {"equals": True}}, "verdict": "deny"},
        {"id": "nested", "args": {"/files/1/name": {"glob": "*.key"}}, "verdict": "deny"},
        {"id": "number", "args": {"/count": "1?"}, "verdict": "ask"},
    )
    tool = make_tool()

    def rule(**args: Any) -> str:
        return policy.verdict(call_for(tool, **args), tool).rule

    assert rule(path="scratch/a/b.txt") == "glob"  # * matches / too
    assert rule(path="tmp/a.txt") == "regex"
    assert rule(path="tmp/a/b.txt") == "hints:destructive"  # [^/]+ does not
    assert rule(path="x", force=True) == "equals"
    assert rule(path="x", force=1) == "hints:destructive"  # 1 is not true
    assert rule(files=[{"name": "a"}, {"name": "id.key"}]) == "nested"
    assert rule(files=[{"name": "a"}]) == "hints:destructive"  # no /files/1: not matched
    assert rule(count=12) == "number"  # a number's JSON text
    assert rule() == "hints:destructive"


def test_an_argument_the_rule_cannot_read_matches_ask_and_deny_never_allow() -> None:
    policy = rules(
        {"id": "scratch", "args": {"/path": "scratch/*"}, "verdict": "allow"},
        {"id": "etc", "args": {"/path": "/etc/*"}, "verdict": "deny"},
    )
    tool = make_tool()
    long_path = "scratch/" + "a" * MAX_MATCHED_CHARS
    assert policy.verdict(call_for(tool, path=long_path), tool).rule == "etc"
    assert policy.verdict(call_for(tool, path=["scratch/a"]), tool).rule == "etc"
    allow_only = rules({"id": "scratch", "args": {"/path": "scratch/*"}, "verdict": "allow"})
    assert allow_only.verdict(call_for(tool, path=long_path), tool).needs_approval
    assert allow_only.verdict(call_for(tool, path={"p": "scratch/a"}), tool).needs_approval


def test_a_catastrophic_regex_runs_in_linear_time() -> None:
    # (a+)+$ backtracks exponentially in Python's re: this call would not return. RE2 does not backtrack.
    policy = rules({"id": "r", "args": {"/s": {"regex": "^(a+)+$"}}, "verdict": "deny"})
    tool = make_tool(annotations=READ_ONLY)
    assert policy.verdict(call_for(tool, s="a" * 5_000 + "b"), tool).allowed
    assert policy.verdict(call_for(tool, s="a" * 5_000), tool).denied


def test_principal_glob_and_no_principal() -> None:
    policy = rules({"id": "admins", "principal": "admin-*", "verdict": "allow"})
    tool = make_tool()
    assert policy.verdict(call_for(tool), tool, principal="admin-ann").rule == "admins"
    assert policy.verdict(call_for(tool), tool, principal="bob").rule == "hints:destructive"
    assert policy.verdict(call_for(tool), tool).rule == "hints:destructive"


def test_principal_comes_from_the_run_config_or_the_policys_callable() -> None:
    policy = ApprovalPolicy()
    both = {"configurable": {"langgraph_auth_user_id": "auth-ann", "user_id": "ann"}}
    assert policy.principal_for(both) == "auth-ann"
    assert policy.principal_for({"configurable": {"user_id": "ann"}}) == "ann"
    assert policy.principal_for({"configurable": {"user_id": ""}}) is None
    assert policy.principal_for({}) is None
    custom = ApprovalPolicy(principal=lambda config: "team-" + str((config or {}).get("tags", ["?"])[0]))
    assert custom.principal_for({"tags": ["red"], "configurable": {"user_id": "ann"}}) == "team-red"
    assert "principal" not in json.loads(custom.model_dump_json())


def test_a_rule_that_names_nothing_matches_every_call() -> None:
    policy = rules({"id": "all", "verdict": "ask", "reason": "everything is reviewed"})
    assert policy.verdict(call_for("calc"), None) == Verdict.ask("everything is reviewed")
    read = make_tool(annotations=READ_ONLY)
    assert policy.verdict(call_for(read), read).rule == "all"


def test_ask_rules_carry_decisions_expiry_and_memory_scope() -> None:
    policy = rules(
        {
            "id": "r",
            "verdict": "ask",
            "allowed_decisions": ["approve", "reject", "approve"],
            "expires_after": 900,
            "remember": "same_args",
        }
    )
    v = policy.verdict(call_for(make_tool()), make_tool())
    assert (v.kind, v.rule, v.reason) == ("ask", "r", "policy rule 'r': ask")
    assert v.allowed_decisions == ("approve", "reject")
    assert v.expires_after == 900 and v.remember == "same_args" and not v.locked


def test_unlocked_rules_are_tried_in_file_order() -> None:
    policy = rules(
        {"id": "first", "tool": "demo_*", "verdict": "ask"},
        {"id": "second", "tool": "demo_delete_file", "verdict": "allow"},
    )
    assert policy.verdict(call_for(make_tool()), make_tool()).rule == "first"


# ------------------------------------------------------------------------------------------ precedence


def test_code_beats_unlocked_rules_which_beat_tools_which_beat_hints() -> None:
    tool = make_tool(annotations=READ_ONLY)
    policy = rules({"id": "rule", "tool": "demo_*", "verdict": "ask"}, tools={"demo_delete_file": "deny"})
    assert policy.verdict(call_for(tool), tool).rule == "tools:demo_delete_file"  # a tools deny is locked
    policy = rules({"id": "rule", "tool": "demo_*", "verdict": "ask"}, tools={"demo_delete_file": "allow"})
    assert policy.verdict(call_for(tool), tool).rule == "rule"
    policy.when("demo_*", lambda call, tool: "allow")
    assert policy.verdict(call_for(tool), tool).rule == "when:demo_*:<lambda>"
    assert rules(tools={"demo_*": "ask"}).verdict(call_for(tool), tool).rule == "tools:demo_*"


def test_a_locked_rule_is_never_loosened_by_code_overrides_or_later_rules() -> None:
    tool = make_tool(annotations=READ_ONLY)
    policy = rules(
        {"id": "open", "tool": "demo_*", "verdict": "allow"},
        {"id": "review", "tool": "demo_delete_file", "verdict": "ask", "locked": True},
        tools={"demo_delete_file": "allow"},
    )
    policy.when("demo_delete_file", lambda call, tool: "allow")
    v = policy.verdict(call_for(tool), tool)
    assert (v.kind, v.rule, v.locked) == ("ask", "review", True)
    denied = rules({"id": "never", "tool": "demo_*", "verdict": "deny", "locked": True})
    denied.when("*", lambda call, tool: "allow")
    assert denied.verdict(call_for(tool), tool).rule == "never"


def test_a_locked_ask_can_still_be_tightened_to_deny() -> None:
    policy = rules({"id": "review", "verdict": "ask", "locked": True})
    policy.when("*", lambda call, tool: "deny")
    assert policy.verdict(call_for(make_tool()), make_tool()).denied
    tighter = rules(
        {"id": "review", "verdict": "ask", "locked": True}, {"id": "no", "tool": "demo_*", "verdict": "deny"}
    )
    assert tighter.verdict(call_for(make_tool()), make_tool()).rule == "no"


def test_the_strictest_locked_rule_sets_the_floor() -> None:
    policy = rules(
        {"id": "review", "verdict": "ask", "locked": True},
        {"id": "never", "args": {"/path": "/etc/*"}, "verdict": "deny", "locked": True},
    )
    tool = make_tool(annotations=READ_ONLY)
    assert policy.verdict(call_for(tool, path="/etc/x"), tool).rule == "never"
    assert policy.verdict(call_for(tool, path="/home/x"), tool).rule == "review"


def test_locked_rules_apply_to_calls_whose_server_is_unknown() -> None:
    policy = rules(
        {"id": "never", "server": "prod", "verdict": "deny", "locked": True},
        {"id": "open", "verdict": "allow"},
    )
    v = policy.unresolved_verdict(call_for("prod_drop"), "server 'prod' failed to list")
    assert (v.kind, v.rule) == ("deny", "never")  # it might be prod's: fail closed
    asked = rules({"id": "open", "verdict": "allow"}).unresolved_verdict(call_for("x"), "boom")
    assert (asked.kind, asked.rule) == ("ask", "unresolved")


# ------------------------------------------------------------------------------------------ self-tests


def test_self_tests_pass_at_load(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(POLICY_TOML)
    assert ApprovalPolicy.load(path).test_failures() == []


def test_a_failing_self_test_names_the_test_what_it_expected_and_what_was_decided(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(
        POLICY_TOML
        + """
[[tests]]
name = "guests may not delete scratch"
call = "demo_delete_file"
args = { path = "scratch/a.txt" }
principal = "guest"
expect = "allow"
"""
    )
    with pytest.raises(PolicyError) as info:
        ApprovalPolicy.load(path)
    message = str(info.value)
    assert "policy.toml: 1 of 3 self-tests failed" in message
    assert "tests[2] ('guests may not delete scratch')" in message
    assert "call 'demo_delete_file' with args {\"path\": \"scratch/a.txt\"} as principal 'guest'" in message
    assert "expected allow, but the policy decided ask by rule 'big-deletes'" in message
    # not run when asked not to; run on demand
    policy = ApprovalPolicy.load(path, run_tests=False)
    assert len(policy.test_failures()) == 1


def test_a_self_test_can_require_the_deciding_rule() -> None:
    with pytest.raises(PolicyError, match=r"expected ask by rule 'nope', but the policy decided ask by rule"):
        ApprovalPolicy.load({"tests": [{"call": "demo_x", "expect": "ask", "rule": "nope"}]})


def test_self_test_tools_come_from_the_test() -> None:
    policy = ApprovalPolicy.load(
        {
            "rules": [{"id": "fs", "server": "fs", "original_tool": "rm", "verdict": "deny"}],
            "tests": [
                {"call": "fs_rm", "server": "fs", "original_tool": "rm", "expect": "deny", "rule": "fs"},
                {"call": "calc", "mcp": False, "expect": "allow", "rule": "non-mcp"},
                {"call": "x_read", "annotations": READ_ONLY, "expect": "allow", "rule": "hints:read-only"},
                {"call": "x_read", "annotations": READ_ONLY, "trusted": False, "expect": "ask"},
                {"call": "x_write", "expect": "ask", "rule": "hints:destructive"},
            ],
        }
    )
    assert len(policy.tests) == 5


def test_self_tests_see_the_predicates_registered_in_code() -> None:
    policy = ApprovalPolicy.load({"tests": [{"call": "x_read", "annotations": READ_ONLY, "expect": "allow"}]})
    policy.when("x_*", lambda call, tool: "deny")
    assert (
        "expected allow, but the policy decided deny by rule 'when:x_*:<lambda>'" in policy.test_failures()[0]
    )
    with pytest.raises(PolicyError):
        policy.check()


# ------------------------------------------------------------------------------------------ explain


def test_explain_lists_every_matching_rule_in_precedence_order() -> None:
    policy = rules(
        {"id": "open", "tool": "demo_*", "verdict": "allow"},
        {"id": "review", "tool": "demo_delete_file", "verdict": "ask", "locked": True, "reason": "ops"},
        {"id": "also-open", "verdict": "allow"},
        tools={"demo_*": "allow"},
    )
    policy.when("demo_*", lambda call, tool: None)  # no opinion: not listed
    tool = make_tool()
    explained = policy.explain(call_for(tool), tool)
    assert explained.verdict == policy.verdict(call_for(tool), tool)
    assert [(m.tier, m.verdict.rule, m.decided) for m in explained.matches] == [
        ("locked", "review", True),
        ("rules", "open", False),
        ("rules", "also-open", False),
        ("tools", "tools:demo_*", False),
        ("built-in", "hints:destructive", False),
    ]
    assert [m.verdict.rule for m in explained.lost] == [
        "open",
        "also-open",
        "tools:demo_*",
        "hints:destructive",
    ]


def test_explain_agrees_with_verdict_on_every_example() -> None:
    policy = ApprovalPolicy.load(
        {
            "rules": [
                {"id": "etc", "args": {"/path": "/etc/*"}, "verdict": "deny", "locked": True},
                {"id": "scratch", "args": {"/path": "scratch/*"}, "verdict": "allow"},
            ],
            "tools": {"demo_move_file": "deny", "demo_*": "ask"},
            "ask_writes": True,
        }
    )
    for name, declared in [("delete_file", None), ("move_file", SAFE_WRITE), ("read", READ_ONLY)]:
        tool = make_tool(name, annotations=declared)
        for path in ("/etc/x", "scratch/x", "home/x"):
            call = call_for(tool, path=path)
            explained = policy.explain(call, tool)
            assert explained.verdict == policy.verdict(call, tool)
            assert explained.verdict.rule == policy.verdict(call, tool).rule
            assert sum(m.decided for m in explained.matches) == 1
