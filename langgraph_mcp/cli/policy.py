"""The ``policy check`` and ``policy explain`` commands: a policy file tried before it goes live.

``policy check POLICY [--config FILE]`` loads the file and runs its ``[[tests]]`` (with ``--config``, against the
servers' real listings instead of the tools the tests describe), and warns about annotation sets that look wrong
(they would make the built-in hint rules misjudge); exit 0 when every test passes, 2 naming each failure.
``policy explain POLICY --config FILE PUBLISHED_NAME`` prints the verdict for one call, the rule that decided it
and its reason, and the rules that matched but lost, in precedence order.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter
from rich.console import Console
from rich.text import Text

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.cli.exits import EXIT_OK, EXIT_USAGE
from langgraph_mcp.errors import CliError
from langgraph_mcp.policy.policy import ApprovalPolicy, Explanation, Verdict
from langgraph_mcp.policy.rules import RuleTest

if TYPE_CHECKING:
    from langchain_core.messages import ToolCall

    from langgraph_mcp.cli.runner import Session

__all__ = ["annotation_warnings", "cmd_policy_check", "cmd_policy_explain"]

_DESTRUCTIVE_WORDS = re.compile(
    r"(?:^|[_\-.])(delete|remove|rm|drop|destroy|purge|erase|wipe|kill|truncate|overwrite)(?:$|[_\-.])",
    re.IGNORECASE,
)
_STYLE = {"allow": "green", "ask": "yellow", "deny": "red"}


def annotation_warnings(tools: Sequence[McpTool]) -> list[str]:
    """Annotation sets that are probably wrong: contradictions, read-only tools named like deletes, and servers
    whose every tool is destructive (usually: a server that declares no annotations at all)."""
    warnings = []
    for tool in tools:
        declared = tool.declared_hints
        where = f"{tool.published_name} (server {tool.server!r}, tool {tool.name!r})"
        if declared.get("readOnlyHint") and declared.get("destructiveHint"):
            warnings.append(
                f"{where} declares both readOnlyHint and destructiveHint: it is treated as read-only"
            )
        word = _DESTRUCTIVE_WORDS.search(tool.name)
        if tool.read_only and word:
            warnings.append(f"{where} is read-only, but its name says {word.group(1)!r}")
    servers: dict[str, list[McpTool]] = {}
    for tool in tools:
        servers.setdefault(tool.server, []).append(tool)
    for server, mine in servers.items():
        if len(mine) > 1 and all(t.destructive for t in mine):
            none = sum(1 for t in mine if not t.declared_hints)
            why = f" ({none} declare no annotations: the spec default is destructive)" if none else ""
            warnings.append(f"every tool of server {server!r} is destructive ({len(mine)} tools){why}")
    return warnings


def _load(path: str) -> ApprovalPolicy:
    return ApprovalPolicy.load(path, run_tests=False)


def _listed(session: Session, config: str) -> tuple[list[McpTool], dict[str, str]]:
    """Every listed tool, and the servers that failed to list (name → error)."""
    servers = session.open_servers(config, on_connection_error="ignore")

    async def discover() -> list[McpTool]:
        return await servers.list_tools()

    tools = session.loop.run(discover())
    return tools, {name: str(exc) for name, exc in servers.report.failed_servers.items()}


def cmd_policy_check(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Run the policy's self-tests (against real listings with ``--config``) and warn about odd annotations."""
    policy = _load(args.policy)
    if args.config:
        from langgraph_mcp.cli.runner import Session  # only with --config: LangGraph is not needed otherwise

        with Session() as session:
            tools, failed = _listed(session, args.config)
        for server, error in failed.items():
            err.print(Text(f"warning: server {server!r} could not be listed: {error}", style="yellow"))
        by_name = {t.published_name: t for t in tools}

        def tool_for(test: RuleTest) -> McpTool | None:
            if not test.mcp:
                return None
            if test.call not in by_name:
                raise LookupError(f"no server in {args.config} publishes {test.call!r}")
            return by_name[test.call]

        for warning in annotation_warnings(tools):
            err.print(Text(f"warning: {warning}", style="yellow"))
        failures = policy.test_failures(tool_for)
    else:
        failures = policy.test_failures()
    if failures:
        for failure in failures:
            err.print(Text(f"FAILED {failure}", style="red"))
        err.print(Text(f"{len(failures)} of {len(policy.tests)} self-tests failed", style="bold red"))
        return EXIT_USAGE
    against = f" against {args.config}" if args.config else ""
    console.print(
        Text.assemble(
            ("ok ", "bold green"),
            f"{args.policy}: {len(policy.rules)} rules, {len(policy.tests)} self-tests passed{against}",
        )
    )
    return EXIT_OK


def _parse_args_json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"--args is not valid JSON ({exc.msg} at column {exc.colno}): {text}") from exc
    if not isinstance(value, dict):
        raise CliError(f"--args must be a JSON object of arguments, got {type(value).__name__}: {text}")
    return value


def _parse_at(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        at = datetime.fromisoformat(text)
    except ValueError as exc:
        raise CliError(f"--at is not an ISO 8601 time ({exc}), e.g. 2026-12-05T10:00:00Z: {text}") from exc
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).timestamp()


def _conditions_line(policy: ApprovalPolicy, verdict: Verdict) -> str | None:
    """``matched on: tool=..., weekdays=...``: the conditions of the ``[[rules]]`` entry that decided."""
    rule = next((r for r in policy.rules if r.id == verdict.rule), None)
    if rule is None:
        return None
    values = rule.condition_values()
    if not values:
        return "matched on: no conditions (matches every call)"
    shown = ", ".join(f"{key}={json.dumps(value, default=str)}" for key, value in _plain(values).items())
    return f"matched on: {shown}"


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    dumped: dict[str, Any] = TypeAdapter(dict[str, Any]).dump_python(values, mode="json")
    return dumped


def _verdict_line(verdict: Verdict) -> Text:
    return Text.assemble(
        (f"{verdict.kind:<5}", f"bold {_STYLE[verdict.kind]}"),
        "  ",
        (verdict.rule or "?", "bold"),
        f"  {verdict.reason}",
    )


def _print_explanation(console: Console, explanation: Explanation, policy: ApprovalPolicy) -> None:
    verdict = explanation.verdict
    console.print(Text.assemble(("verdict ", "dim"), _verdict_line(verdict)))
    console.print(Text.assemble(("rule    ", "dim"), (verdict.rule, "bold")))
    console.print(Text.assemble(("reason  ", "dim"), verdict.reason))
    extras = []
    matched_on = _conditions_line(policy, verdict)
    if matched_on is not None:
        extras.append(matched_on)
    if verdict.locked:
        extras.append("locked: no remembered decision answers it")
    if verdict.needs_approval:
        extras.append(f"decisions: {', '.join(verdict.allowed_decisions)}")
        if verdict.expires_after is not None:
            extras.append(f"expires after {verdict.expires_after:g} s")
        extras.append(f"remember: {verdict.remember}")
    for extra in extras:
        console.print(Text(f"        {extra}", style="dim"))
    lost = explanation.lost
    if lost:
        console.print(Text("matched but lost (precedence order):", style="bold"))
        for match in lost:
            console.print(Text.assemble(f"  {match.tier:<9} ", _verdict_line(match.verdict)))
    else:
        console.print(Text("no other rule matched", style="dim"))


def cmd_policy_explain(args: argparse.Namespace, console: Console, err: Console) -> int:
    """The verdict for one call, the rule that decided it, and the rules that matched but lost."""
    policy = _load(args.policy)
    call_args = _parse_args_json(args.args)
    at = _parse_at(getattr(args, "at", None))
    from langgraph_mcp.cli.runner import Session

    call: ToolCall = {"name": args.tool, "args": call_args, "id": "explain", "type": "tool_call"}
    principal = policy.principal_for(None)  # the CLI's --configurable values are the run config here
    with Session() as session:
        tools, failed = _listed(session, args.config)
    owners = [t for t in tools if t.published_name == args.tool]
    who = f"principal {principal!r}" if principal is not None else "no principal"
    if len(owners) > 1:
        where = ", ".join(f"server {t.server!r}" for t in owners)
        console.print(_verdict_line(Verdict.deny(f"{args.tool!r} is published by {where}", rule="collision")))
        return EXIT_OK
    tool = owners[0] if owners else None
    if tool is None and failed:
        problem = "; ".join(f"server {s!r} could not be listed ({e})" for s, e in failed.items())
        verdict = policy.unresolved_verdict(call, problem, principal=principal)
        console.print(Text.assemble((args.tool, "bold"), f"  (server unknown, {who})"))
        _print_explanation(console, Explanation(verdict, ()), policy)
        return EXIT_OK
    if tool is None:  # a misspelt name would read as a non-MCP tool's "allow": say so instead
        close = difflib.get_close_matches(args.tool, [t.published_name for t in tools], n=3, cutoff=0.4)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise CliError(
            f"No server in {args.config} publishes a tool named {args.tool!r}, so there is no MCP call to "
            f"explain (a tool no MCP server publishes is not judged by the policy).{hint}"
        )
    console.print(
        Text.assemble((args.tool, "bold"), f"  (server {tool.server!r}, tool {tool.name!r}, {who})")
    )
    _print_explanation(console, policy.explain(call, tool, principal=principal, at=at), policy)
    return EXIT_OK
