"""A policy file: reading it (TOML or JSON), saying which fields are wrong, and running its ``[[tests]]``.

:meth:`~langgraph_mcp.policy.policy.ApprovalPolicy.load` and ``check`` are built from these; what the file may
hold is documented in :mod:`langgraph_mcp.policy.policy` and :mod:`langgraph_mcp.policy.rules`.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolCall
from pydantic import ValidationError

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.errors import ConfigError
from langgraph_mcp.policy.rules import RuleTest
from langgraph_mcp.policy.verdicts import Verdict

__all__ = ["format_errors", "read_source", "self_test_failures"]


def read_source(source: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The policy's data and how to name it in an error (``approval policy <path>``).

    Raises :class:`~langgraph_mcp.errors.ConfigError` for a file that cannot be read or parsed, or that does not
    hold an object.
    """
    where = "approval policy"
    if isinstance(source, Mapping):
        data: object = dict(source)
    else:
        path = Path(source)
        where = f"approval policy {path}"
        data = _read(path, where)
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: must be a JSON object, got {type(data).__name__}")
    return data, where


def _read(path: Path, where: str) -> object:
    """The parsed file: TOML for ``.toml``, JSON otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the file: {exc.strerror or exc}") from exc
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{where}: invalid TOML: {exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc


def format_errors(exc: ValidationError) -> str:
    """``field.path: message`` for every error, joined with ``; `` (union tags dropped from the path)."""
    parts = []
    for error in exc.errors():
        loc = list(error["loc"])
        # the tag of a tagged union sits right after a dict key: tools.<pattern>.<tag>, rules.N.args.<ptr>.<tag>
        for at in (2, 4):
            if len(loc) > at and loc[at] in ("str", "obj"):
                del loc[at]
                break
        field_path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
        parts.append(f"{field_path or '(top level)'}: {error['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def self_test_failures(
    tests: Sequence[RuleTest],
    verdict: Callable[[ToolCall, McpTool | None, str | None, float | None], Verdict],
    tool_for: Callable[[RuleTest], McpTool | None] | None = None,
) -> list[str]:
    """Run ``tests`` through ``verdict(call, tool, principal, at)``; one message per failing test (empty: all pass).

    ``tool_for(test)`` gives the tool a test's call goes to; by default each test's own :meth:`RuleTest.tool`.
    """
    failures = []
    for i, test in enumerate(tests):
        label = f"tests[{i}]" + (f" ({test.name!r})" if test.name else "")
        try:
            tool = tool_for(test) if tool_for is not None else test.tool()
        except LookupError as exc:
            failures.append(f"{label}: {exc}")
            continue
        call: ToolCall = {"name": test.call, "args": test.args, "id": f"test-{i}", "type": "tool_call"}
        got = verdict(call, tool, test.principal, test.now)
        if got.kind == test.expect and (test.rule is None or got.rule == test.rule):
            continue
        who = f" as principal {test.principal!r}" if test.principal is not None else ""
        who += f" at {test.at.isoformat()}" if test.at is not None else ""
        args = json.dumps(test.args, ensure_ascii=False, default=str)
        wanted = test.expect + (f" by rule {test.rule!r}" if test.rule else "")
        failures.append(
            f"{label}: call {test.call!r} with args {args}{who}: expected {wanted}, but the policy decided "
            f"{got.kind} by rule {got.rule!r} ({got.reason})"
        )
    return failures
