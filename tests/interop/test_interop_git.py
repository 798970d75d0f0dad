"""PyPI ``mcp-server-git``, unmodified: 2026.10.19 (mcp 2.3, both eras), 2026.8.18 (mcp 1.30, legacy only).

Pinned from what both builds declare (the same 12 tools, all four hints on each, text results, no
outputSchema): read-only ``git_status``, ``git_diff_unstaged``, ``git_diff_staged``, ``git_diff``,
``git_log``, ``git_show``, ``git_branch``; non-destructive writes ``git_commit``, ``git_add`` (idempotent),
``git_create_branch``, ``git_checkout`` (the server does *not* call checkout destructive, so the default
policy lets it run); and ``git_reset``, the only destructive tool, so the only one the default gate asks
about.

Each test gets a throwaway repository (``--repository``); a ``repo_path`` outside it, or an argument
starting with ``-``, is an ``isError`` result. A tool the server does not have: -32602 from 2026.10.19, an
``isError`` result from 2026.8.18 (which, given no ``repo_path``, fails on the missing argument before it even
looks at the name: ``"'repo_path'"``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from interop_graph import (
    approvals,
    build_graph,
    resume_with,
    run_tool_node,
    start,
    text,
    thread,
    tool_call,
    tool_messages,
)
from langgraph.checkpoint.memory import InMemorySaver
from mcp import MCPError

from langgraph_mcp import McpServers
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.servers.mcp_servers import server_access

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def _hints(read_only: bool, destructive: bool, idempotent: bool) -> dict[str, bool]:
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


READ = _hints(True, False, True)
DECLARED = {
    "git_status": READ,
    "git_diff_unstaged": READ,
    "git_diff_staged": READ,
    "git_diff": READ,
    "git_log": READ,
    "git_show": READ,
    "git_branch": READ,
    "git_commit": _hints(False, False, False),
    "git_add": _hints(False, False, True),
    "git_create_branch": _hints(False, False, False),
    "git_checkout": _hints(False, False, False),
    "git_reset": _hints(False, True, True),
}
Git = Callable[..., str]


@pytest.mark.parametrize("build", ["latest", "old"])
async def test_catalog_hints_and_default_verdicts(git_spec: Any, build: str) -> None:
    servers = McpServers({"git": git_spec(build)})
    try:
        tools = {t.name: t for t in await servers.list_tools()}
    finally:
        await servers.aclose()
    assert sorted(tools) == sorted(DECLARED)
    policy = ApprovalPolicy()
    for name, tool in tools.items():
        assert tool.published_name == f"git_{name}"
        assert tool.output_schema is None, name
        assert tool.annotations == DECLARED[name] and tool.effective_hints == DECLARED[name], name
        verdict = policy.verdict(tool_call(tool.published_name, {}, "x"), tool)
        if name == "git_reset":
            assert (verdict.kind, verdict.reason) == ("ask", "destructiveHint (declared)")
        elif DECLARED[name]["readOnlyHint"]:
            assert (verdict.kind, verdict.reason) == ("allow", "readOnlyHint (declared)"), name
        else:
            assert verdict.kind == "allow" and verdict.reason.startswith("non-destructive write"), name


def _stage_change(repo: Path, git: Git, content: str = "changed\n") -> None:
    (repo / "README.md").write_text(content)
    git(repo, "add", "README.md")
    assert git(repo, "diff", "--cached", "--name-only").split() == ["README.md"]


@pytest.mark.parametrize(("build", "mode"), [("latest", "auto"), ("latest", "legacy"), ("old", "auto")])
@pytest.mark.parametrize("decision", ["approve", "reject"])
async def test_agent_turn_git_reset_decision(
    git_spec: Any, git_repo: Path, git: Git, build: str, mode: str, decision: str
) -> None:
    _stage_change(git_repo, git)
    calls = [
        tool_call("git_git_reset", {"repo_path": str(git_repo)}, "reset"),
        tool_call("git_git_diff_staged", {"repo_path": str(git_repo)}, "diff"),
    ]
    servers = McpServers({"git": git_spec(build, mode=mode)})
    try:
        graph = build_graph(servers, calls, checkpointer=InMemorySaver())
        config = thread("git")
        pending = approvals(await graph.ainvoke(start(), config))
        assert set(pending) == {"reset"}
        assert pending["reset"].value["server"] == "git" and pending["reset"].value["tool"] == "git_reset"
        answer = (
            {"type": "approve"} if decision == "approve" else {"type": "reject", "message": "keep the index"}
        )
        final = await graph.ainvoke(resume_with(pending, {"reset": answer}), config)
        protocol = server_access(servers).connections.connection("git").owner.protocol_version
    finally:
        await servers.aclose()
    assert protocol == (MODERN if (build, mode) == ("latest", "auto") else LEGACY)
    messages = tool_messages(final)
    staged = git(git_repo, "diff", "--cached", "--name-only").split()
    if decision == "approve":
        assert messages["reset"].status == "success" and "reset" in text(messages["reset"])
        assert staged == []
        assert (git_repo / "README.md").read_text() == "changed\n"  # a mixed reset keeps the working tree
    else:
        assert messages["reset"].status == "error" and "keep the index" in text(messages["reset"])
        assert staged == ["README.md"]
    assert messages["diff"].status == "success"


@pytest.mark.parametrize("build", ["latest", "old"])
async def test_non_destructive_writes_pass_the_gate(
    git_spec: Any, git_repo: Path, git: Git, build: str
) -> None:
    _stage_change(git_repo, git, "committed by the agent\n")
    calls = [
        tool_call("git_git_commit", {"repo_path": str(git_repo), "message": "agent commit"}, "commit"),
        tool_call("git_git_create_branch", {"repo_path": str(git_repo), "branch_name": "feature"}, "branch"),
    ]
    servers = McpServers({"git": git_spec(build)})
    try:
        graph = build_graph(servers, calls, checkpointer=InMemorySaver())
        final = await graph.ainvoke(start(), thread("git"))
    finally:
        await servers.aclose()
    assert not final.get("__interrupt__")
    messages = tool_messages(final)
    assert messages["commit"].status == "success" and messages["branch"].status == "success"
    assert git(git_repo, "log", "-1", "--format=%s").strip() == "agent commit"
    assert "feature" in git(git_repo, "branch", "--format=%(refname:short)").split()


@pytest.mark.parametrize("build", ["latest", "old"])
async def test_is_error_results_become_error_tool_messages(
    git_spec: Any, git_repo: Path, tmp_path: Path, build: str
) -> None:
    servers = McpServers({"git": git_spec(build)})
    try:
        outside = await run_tool_node(servers, "git_git_status", {"repo_path": str(tmp_path)}, "outside")
        dash = await run_tool_node(
            servers,
            "git_git_show",
            {"repo_path": str(git_repo), "revision": f"--output={tmp_path / 'pwn'}"},
            "dash",
        )
    finally:
        await servers.aclose()
    assert outside.status == "error" and "is outside the allowed repository" in text(outside)
    assert dash.status == "error" and "cannot start with '-'" in text(dash)
    assert not (tmp_path / "pwn").exists()


@pytest.mark.parametrize(("build", "mode"), [("latest", "auto"), ("latest", "legacy"), ("old", "auto")])
async def test_unknown_tool_straight_to_the_server(
    git_spec: Any, git_repo: Path, build: str, mode: str
) -> None:
    servers = McpServers({"git": git_spec(build, mode=mode)})
    try:
        conn = server_access(servers).connections.connection("git")
        await conn.owner.client()
        assert conn.owner.protocol_version == (MODERN if (build, mode) == ("latest", "auto") else LEGACY)
        if build == "latest":
            with pytest.raises(MCPError) as caught:
                await conn.request(lambda c: c.session.call_tool("nope", {}), timeout=10)
            assert (caught.value.code, caught.value.message) == (-32602, "Unknown tool: nope")
        else:
            bare = await conn.request(lambda c: c.session.call_tool("nope", {}), timeout=10)
            assert bare.is_error and bare.content[0].text == "'repo_path'"  # type: ignore[union-attr]
            named = await conn.request(
                lambda c: c.session.call_tool("nope", {"repo_path": str(git_repo)}), timeout=10
            )
            assert named.is_error and named.content[0].text == "Unknown tool: nope"  # type: ignore[union-attr]
        message = await run_tool_node(servers, "git_status", {"repo_path": str(git_repo)})
    finally:
        await servers.aclose()
    # Published names are prefixed: the model must call git_git_status, and is told so.
    assert message.status == "error" and "Did you mean: git_git_status" in text(message)


async def test_stderr_noise_goes_to_the_server_logger(
    git_spec: Any, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="langgraph_mcp.server.git")
    servers = McpServers({"git": git_spec("old")})
    try:
        await servers.list_tools()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not _dump_logged(caplog):
            await anyio.sleep(0.05)
    finally:
        await servers.aclose()
    assert _dump_logged(caplog)
    assert capfd.readouterr().err == ""


def _dump_logged(caplog: pytest.LogCaptureFixture) -> bool:
    return any(
        r.name == "langgraph_mcp.server.git" and "Failed to validate request" in r.getMessage()
        for r in caplog.records
    )
