"""The command line's input, checked before LangGraph and the MCP SDK are imported (a typo costs no start-up).

:func:`check_inputs` reads what the arguments name and fails with one clear :class:`~langgraph_mcp.errors.CliError`
(exit 2) for: a server config that is not valid JSON or not a valid config (a misspelt key gets a "did you
mean"), an answers file that is not readable JSON, ``--args`` that is not a JSON object, and a
``--db`` (or ``$LANGGRAPH_MCP_DB``) that does not exist for ``pending`` / ``resume``, which only read threads.
Only the standard library, pydantic and :mod:`langgraph_mcp.config` are imported here.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from langgraph_mcp.cli.store import DB_ENV, default_db_path
from langgraph_mcp.errors import CliError, ConfigError

__all__ = ["check_inputs", "db_path"]


def db_path(args: argparse.Namespace) -> Path:
    """The checkpoint database: ``--db``, else ``$LANGGRAPH_MCP_DB``, else the per-user default."""
    return Path(args.db).expanduser() if getattr(args, "db", None) else default_db_path()


def _answers_file(path: str) -> None:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"answers file {path!r}: cannot read it: {exc.strerror or exc}") from exc
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"answers file {path!r}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc


def _check_db(args: argparse.Namespace) -> None:
    db = db_path(args)
    if db.exists():
        return
    given = "--db" if getattr(args, "db", None) else (DB_ENV if os.environ.get(DB_ENV) else "the default")
    raise CliError(
        f"no checkpoint database at {db} ({given}): the file does not exist, so it holds no threads. Give the "
        "--db the thread was started with (`langgraph-mcp call` and `demo` print it)"
    )


def check_inputs(args: argparse.Namespace) -> None:
    """Raise :class:`CliError` (exit 2) for input that can be told wrong without starting anything."""
    if getattr(args, "config", None):
        path = str(Path(args.config))
        try:  # the JSON first, with the standard library alone (the same words as McpServersConfig.load)
            data = json.loads(Path(path).read_text())
        except OSError as exc:
            raise CliError(f"cannot read server config {path!r}: {exc.strerror}") from exc
        except json.JSONDecodeError as exc:
            raise CliError(f"server config {path!r} is not valid JSON: {exc}") from exc
        from langgraph_mcp.config import McpServersConfig  # pydantic and the config models, no LangGraph

        try:
            McpServersConfig.load(data if isinstance(data, dict) else path)
        except ConfigError as exc:
            raise CliError(str(exc)) from exc
    if getattr(args, "answers", None):
        _answers_file(args.answers)
    if args.command_name == "call":
        try:
            value = json.loads(args.args)
        except json.JSONDecodeError as exc:
            raise CliError(
                f"--args is not valid JSON ({exc.msg} at column {exc.colno}): {args.args}"
            ) from exc
        if not isinstance(value, dict):
            raise CliError(
                f"--args must be a JSON object of arguments, got {type(value).__name__}: {args.args}"
            )
    if args.command_name in ("pending", "resume"):
        _check_db(args)
