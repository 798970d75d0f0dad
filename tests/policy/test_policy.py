"""``ApprovalPolicy``: which tool calls run, which ask a human, which are refused, and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolCall

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.errors import ConfigError, PolicyError
from langgraph_mcp.payloads import ALL_DECISIONS
from langgraph_mcp.policy.policy import ApprovalPolicy, PredicateResult, Verdict


def make_tool(
    name: str = "write_file",
    *,
    server: str = "fs",
    annotations: dict[str, Any] | None = None,
    trusted: bool = True,
) -> McpTool:
    return McpTool(
        server=server,
        name=name,
        published_name=f"{server}_{name}",
        title=None,
        description="",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        output_schema=None,
        annotations=annotations,
        trusted=trusted,
    )


def call_for(tool: McpTool | str, **args: Any) -> ToolCall:
    name = tool if isinstance(tool, str) else tool.published_name
    return {"name": name, "args": args, "id": "call-1", "type": "tool_call"}


def verdict(policy: ApprovalPolicy, tool: McpTool) -> Verdict:
    return policy.verdict(call_for(tool), tool)


READ_ONLY = {"readOnlyHint": True}
SAFE_WRITE = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}


# ------------------------------------------------------------------------------------------ hint rules


def test_read_only_tool_is_allowed_citing_the_declared_hint() -> None:
    v = verdict(ApprovalPolicy(), make_tool("read_file", annotations=READ_ONLY))
    assert v == Verdict("allow", "readOnlyHint (declared)")
    assert v.allowed and not v.needs_approval and not v.denied


def test_declared_destructive_tool_asks() -> None:
    v = verdict(ApprovalPolicy(), make_tool(annotations={"destructiveHint": True}))
    assert v.kind == "ask"
    assert v.reason == "destructiveHint (declared)"
    assert v.allowed_decisions == ALL_DECISIONS


def test_tool_without_annotations_is_destructive_by_spec_default_and_asks() -> None:
    v = verdict(ApprovalPolicy(), make_tool(annotations=None))
    assert v.needs_approval
    assert v.reason == "destructiveHint (spec default)"


def test_declared_non_destructive_write_is_allowed() -> None:
    v = verdict(ApprovalPolicy(), make_tool(annotations=SAFE_WRITE))
    assert v.kind == "allow"
    assert "destructiveHint (declared)" in v.reason


def test_ask_writes_asks_about_non_destructive_writes() -> None:
    v = verdict(ApprovalPolicy(ask_writes=True), make_tool(annotations=SAFE_WRITE))
    assert v.kind == "ask"
    assert "ask_writes" in v.reason
    # read-only tools are still allowed
    assert verdict(ApprovalPolicy(ask_writes=True), make_tool(annotations=READ_ONLY)).allowed


def test_open_world_rule_is_off_by_default() -> None:
    open_reader = make_tool("fetch", annotations={"readOnlyHint": True})  # openWorldHint: spec default True
    assert verdict(ApprovalPolicy(), open_reader).allowed


def test_ask_open_world_asks_about_open_world_tools_naming_the_hint_source() -> None:
    policy = ApprovalPolicy(ask_open_world=True)
    by_default = verdict(policy, make_tool("fetch", annotations={"readOnlyHint": True}))
    assert by_default.kind == "ask"
    assert by_default.reason == "openWorldHint (spec default)"

    declared = verdict(
        policy, make_tool("post", annotations={"destructiveHint": False, "openWorldHint": True})
    )
    assert declared.kind == "ask"
    assert declared.reason == "openWorldHint (declared)"

    closed = verdict(policy, make_tool("read", annotations={"readOnlyHint": True, "openWorldHint": False}))
    assert closed.allowed


def test_destructive_reason_wins_over_open_world_reason() -> None:
    v = verdict(ApprovalPolicy(ask_open_world=True), make_tool(annotations=None))
    assert v.reason == "destructiveHint (spec default)"


def test_untrusted_server_asks_even_when_it_declares_read_only() -> None:
    tool = make_tool("read_file", server="sketchy", annotations=READ_ONLY, trusted=False)
    v = verdict(ApprovalPolicy(), tool)
    assert v.kind == "ask"
    assert v.reason == "server 'sketchy' is not trusted: its annotations are ignored"


def test_ask_verdicts_offer_default_decisions() -> None:
    policy = ApprovalPolicy(default_decisions=["approve", "reject"])
    assert verdict(policy, make_tool()).allowed_decisions == ("approve", "reject")


# ------------------------------------------------------------------------------------------ overrides

OVERRIDES = {"fs_*": "ask", "git_status": "allow", "fs_move_file": "deny"}


def test_exact_override_beats_glob() -> None:
    policy = ApprovalPolicy.load({"tools": OVERRIDES})
    move = verdict(policy, make_tool("move_file", annotations=SAFE_WRITE))
    assert move.kind == "deny"
    assert "fs_move_file" in move.reason


def test_glob_override_applies_to_matching_tools_whatever_their_hints() -> None:
    policy = ApprovalPolicy.load({"tools": OVERRIDES})
    v = verdict(policy, make_tool("read_file", annotations=READ_ONLY))
    assert v.kind == "ask"
    assert "fs_*" in v.reason
    # no override matches: hint rules decide
    assert verdict(policy, make_tool("log", server="git", annotations=READ_ONLY)).allowed


def test_exact_allow_override_beats_destructive_hint() -> None:
    policy = ApprovalPolicy.load({"tools": OVERRIDES})
    assert verdict(policy, make_tool("status", server="git", annotations=None)).allowed


def test_longest_glob_wins_and_ties_go_to_the_first_listed() -> None:
    policy = ApprovalPolicy.load({"tools": {"fs_*": "ask", "fs_read_*": "allow", "*_file": "deny"}})
    assert verdict(policy, make_tool("read_file")).kind == "allow"  # fs_read_* (9) > *_file (6) > fs_* (4)
    assert verdict(policy, make_tool("write_file")).kind == "deny"  # *_file (6) > fs_* (4)
    assert verdict(policy, make_tool("stat")).kind == "ask"  # only fs_*

    tie = ApprovalPolicy.load({"tools": {"fs_w*": "allow", "*file": "deny"}})
    assert verdict(tie, make_tool("write_file")).kind == "allow"


def test_glob_matching_is_case_sensitive() -> None:
    policy = ApprovalPolicy.load({"tools": {"FS_*": "deny"}})
    assert verdict(policy, make_tool("read_file", annotations=READ_ONLY)).allowed


def test_deny_override_beats_an_allowing_predicate() -> None:
    policy = ApprovalPolicy.load({"tools": {"fs_move_file": "deny"}})
    policy.when("fs_*", lambda call, tool: "allow")
    assert verdict(policy, make_tool("move_file")).kind == "deny"


def test_explicit_allow_override_trusts_a_tool_of_an_untrusted_server() -> None:
    policy = ApprovalPolicy.load({"tools": {"sketchy_read_file": "allow"}})
    tool = make_tool("read_file", server="sketchy", annotations=READ_ONLY, trusted=False)
    assert verdict(policy, tool).allowed
    # the server's other tools still ask
    other = make_tool("list_dir", server="sketchy", annotations=READ_ONLY, trusted=False)
    assert verdict(policy, other).needs_approval


def test_override_object_form_sets_allowed_decisions_and_reason() -> None:
    policy = ApprovalPolicy.load(
        {
            "tools": {
                "fs_write_file": {
                    "verdict": "ask",
                    "allowed_decisions": ["approve", "reject"],
                    "reason": "writes to the shared disk",
                }
            }
        }
    )
    v = verdict(policy, make_tool("write_file", annotations=SAFE_WRITE))
    assert v == Verdict("ask", "writes to the shared disk", ("approve", "reject"))


def test_override_object_without_reason_names_the_override() -> None:
    policy = ApprovalPolicy.load({"tools": {"fs_*": {"verdict": "ask", "allowed_decisions": ["reject"]}}})
    v = verdict(policy, make_tool())
    assert v.reason == "policy override 'fs_*': ask"
    assert v.allowed_decisions == ("reject",)


# ------------------------------------------------------------------------------------------ predicates

SCRATCH = "/tmp/scratch/"


def outside_scratch(call: ToolCall, tool: McpTool | None) -> bool:
    """Ask before deleting anything outside the scratch directory."""
    return not str(call["args"].get("path", "")).startswith(SCRATCH)


def delete_tool() -> McpTool:
    # declared non-destructive (wrongly): without the predicate, deletes would run unasked
    return make_tool("delete_file", annotations=SAFE_WRITE)


def test_predicate_asks_for_delete_outside_scratch_dir() -> None:
    policy = ApprovalPolicy().when("fs_delete_file", outside_scratch)
    tool = delete_tool()
    v = policy.verdict(call_for(tool, path="/home/me/thesis.tex"), tool)
    assert v.kind == "ask"
    assert "outside_scratch" in v.reason
    assert "fs_delete_file" in v.reason


def test_predicate_without_opinion_falls_through_to_the_other_rules() -> None:
    policy = ApprovalPolicy().when("fs_delete_file", outside_scratch)
    tool = delete_tool()
    assert policy.verdict(call_for(tool, path=SCRATCH + "tmp.txt"), tool).allowed  # hint rule: safe write
    # with an ask override, falling through means the override asks
    asking = ApprovalPolicy.load({"tools": {"fs_*": "ask"}}).when("fs_delete_file", outside_scratch)
    assert asking.verdict(call_for(tool, path=SCRATCH + "tmp.txt"), tool).needs_approval


def test_predicate_can_allow_inside_scratch_over_an_ask_override() -> None:
    policy = ApprovalPolicy.load({"tools": {"fs_*": "ask"}})

    @policy.when("fs_delete_file")
    def scratch_is_free(call: ToolCall, tool: McpTool | None) -> PredicateResult:
        return "allow" if str(call["args"]["path"]).startswith(SCRATCH) else None

    tool = delete_tool()
    assert policy.verdict(call_for(tool, path=SCRATCH + "x"), tool).allowed
    assert policy.verdict(call_for(tool, path="/etc/passwd"), tool).needs_approval


def test_predicate_may_return_a_full_verdict() -> None:
    policy = ApprovalPolicy().when(
        "fs_*", lambda call, tool: Verdict.ask("big write", ["approve"]) if call["args"].get("big") else None
    )
    tool = make_tool(annotations=SAFE_WRITE)
    assert policy.verdict(call_for(tool, big=True), tool) == Verdict("ask", "big write", ("approve",))
    assert policy.verdict(call_for(tool, big=False), tool).allowed


def test_predicate_ask_uses_the_override_decisions() -> None:
    policy = ApprovalPolicy.load({"tools": {"fs_*": {"verdict": "allow", "allowed_decisions": ["reject"]}}})
    policy.when("fs_*", lambda call, tool: True)
    assert verdict(policy, make_tool()).allowed_decisions == ("reject",)


def test_more_specific_predicate_is_consulted_first() -> None:
    seen: list[str] = []

    def general(call: ToolCall, tool: McpTool | None) -> PredicateResult:
        seen.append("general")
        return "deny"

    def specific(call: ToolCall, tool: McpTool | None) -> PredicateResult:
        seen.append("specific")
        return "allow"

    policy = ApprovalPolicy().when("*", general).when("fs_write_file", specific)
    assert verdict(policy, make_tool()).allowed
    assert seen == ["specific"]


def test_predicate_returning_nonsense_is_an_error() -> None:
    policy = ApprovalPolicy().when("*", lambda call, tool: "maybe")  # type: ignore[arg-type,return-value]
    with pytest.raises(PolicyError, match="maybe") as caught:
        verdict(policy, make_tool())
    assert isinstance(caught.value, TypeError)  # what it raised before it had a name


def test_predicates_are_not_serialized_and_copies_do_not_share_them() -> None:
    policy = ApprovalPolicy.load({"tools": {"fs_*": "ask"}})
    copy = policy.model_copy()
    policy.when("*", lambda call, tool: "deny")
    assert json.loads(policy.model_dump_json())["tools"] == {"fs_*": "ask"}
    assert verdict(copy, make_tool()).kind == "ask"
    assert verdict(policy, make_tool()).kind == "deny"


# ------------------------------------------------------------------------------------------ non-MCP tools


def test_non_mcp_tools_are_allowed_by_default() -> None:
    v = ApprovalPolicy().verdict(call_for("calculator", x=1), None)
    assert v.allowed
    assert "not an MCP tool" in v.reason


def test_non_mcp_default_is_configurable_and_overrides_still_apply() -> None:
    policy = ApprovalPolicy.load({"non_mcp": "ask", "tools": {"calculator": "allow", "shell*": "deny"}})
    assert policy.verdict(call_for("search"), None).needs_approval
    assert policy.verdict(call_for("calculator"), None).allowed
    assert policy.verdict(call_for("shell_exec"), None).denied
    assert ApprovalPolicy(non_mcp="deny").verdict(call_for("search"), None).denied


# ------------------------------------------------------------------------------------------ JSON


def test_load_from_dict_and_file_round_trips(tmp_path: Path) -> None:
    data = {
        "ask_writes": True,
        "ask_open_world": False,
        "non_mcp": "ask",
        "unresolved": "deny",
        "tools": {
            "fs_*": "ask",
            "fs_move_file": {"verdict": "ask", "allowed_decisions": ["approve", "reject"], "reason": "moves"},
        },
        "default_decisions": ["approve", "edit", "reject"],
    }
    from_dict = ApprovalPolicy.load(data)
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(data))
    from_file = ApprovalPolicy.load(path)
    assert from_file == from_dict
    assert ApprovalPolicy.load(str(path)) == from_dict
    assert json.loads(from_file.model_dump_json()) == data
    assert from_file.ask_writes and from_file.non_mcp == "ask"
    assert verdict(from_file, make_tool()).allowed_decisions == ("approve", "edit", "reject")


def test_defaults_when_loading_an_empty_object() -> None:
    policy = ApprovalPolicy.load({})
    assert policy == ApprovalPolicy()
    assert policy.default_decisions == list(ALL_DECISIONS)
    assert policy.non_mcp == "allow" and not policy.ask_writes and not policy.ask_open_world


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"ask_writes": "sometimes"}, "ask_writes"),
        ({"non_mcp": "maybe"}, "non_mcp"),
        ({"askWrites": True}, "askWrites"),
        ({"tools": {"fs_*": "maybe"}}, "tools.fs_*"),
        ({"tools": {"fs_*": {"verdict": "perhaps"}}}, "tools.fs_*.verdict"),
        ({"tools": {"fs_*": {"verdict": "ask", "decisions": ["approve"]}}}, "tools.fs_*.decisions"),
        (
            {"tools": {"fs_*": {"verdict": "ask", "allowed_decisions": ["sure"]}}},
            "tools.fs_*.allowed_decisions[0]",
        ),
        ({"tools": {"fs_*": {"verdict": "ask", "allowed_decisions": []}}}, "tools.fs_*.allowed_decisions"),
        ({"tools": {"": "ask"}}, "tools"),
        ({"default_decisions": ["approve", "ignore"]}, "default_decisions[1]"),
        ({"default_decisions": []}, "default_decisions"),
    ],
)
def test_bad_config_raises_config_error_naming_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        ApprovalPolicy.load(data)
    assert f"{field}:" in str(info.value)


def test_bad_json_file_raises_config_error_naming_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text('{"tools": {"fs_*": "sometimes"}}')
    with pytest.raises(
        ConfigError, match=r"policy\.json: tools\.fs_\*: Input should be 'allow', 'ask' or 'deny'"
    ):
        ApprovalPolicy.load(path)


def test_unparseable_or_missing_file_raises_config_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"tools": ')
    with pytest.raises(ConfigError, match=r"broken\.json: invalid JSON at line 1"):
        ApprovalPolicy.load(broken)
    with pytest.raises(ConfigError, match="cannot read"):
        ApprovalPolicy.load(tmp_path / "missing.json")
    not_object = tmp_path / "list.json"
    not_object.write_text("[]")
    with pytest.raises(ConfigError, match="must be a JSON object"):
        ApprovalPolicy.load(not_object)


def test_verdict_checks_its_decisions() -> None:
    assert Verdict("ask", "r", ["approve", "approve", "reject"]).allowed_decisions == ("approve", "reject")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must not be empty"):
        Verdict.ask("r", [])
    with pytest.raises(ValueError, match="unknown decision"):
        Verdict.ask("r", ["yes"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="kind"):
        Verdict("maybe", "r")  # type: ignore[arg-type]
