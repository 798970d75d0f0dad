"""The commands the CLI prints for the user to paste: how to continue a paused thread, on one line.

A hint is printed without wrapping (``soft_wrap``), so a long ``--db PATH`` is never broken across lines by a
narrow terminal, and every argument is shell-quoted: pasted as printed, the command runs. ``--db`` is part of
the hint whenever the thread is not in the default database. The program is named the way it was started:
``langgraph-mcp`` when that is what ``PATH`` finds, else the path it was run by (``.venv/bin/langgraph-mcp``
with the venv not activated), or ``<python> -m langgraph_mcp``.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.text import Text

from langgraph_mcp.cli.runner import EXIT_PENDING
from langgraph_mcp.cli.store import default_db_path
from langgraph_mcp.questions.resume import PendingMcpInterrupt

__all__ = ["pending_hint", "print_hint", "program", "report_pending", "resume_hint"]


def program() -> list[str]:
    """How to run this CLI again from the same shell: the words before the subcommand."""
    started = sys.argv[0] if sys.argv else ""
    if not started or Path(started).name in ("__main__.py", "-c"):
        return [sys.executable, "-m", "langgraph_mcp"]
    found = shutil.which("langgraph-mcp")
    if found is not None and Path(found).resolve() == Path(started).resolve():
        return ["langgraph-mcp"]
    return [started]


def _command(subcommand: str, thread_id: str, db: Path) -> str:
    words = [*program(), subcommand, "--thread", thread_id]
    if db.expanduser().resolve() != default_db_path().expanduser().resolve():
        words += ["--db", str(db.expanduser().resolve())]
    return shlex.join(words)


def resume_hint(thread_id: str, db: Path) -> str:
    """``langgraph-mcp resume --thread ID [--db PATH]`` (see :func:`program`), quoted for a POSIX shell."""
    return _command("resume", thread_id, db)


def pending_hint(thread_id: str, db: Path) -> str:
    """``langgraph-mcp pending --thread ID [--db PATH]``, quoted for a POSIX shell."""
    return _command("pending", thread_id, db)


def print_hint(console: Console, label: str, command: str) -> None:
    """``label command`` on one line, never wrapped."""
    console.print(Text.assemble(label, " ", command), soft_wrap=True)


def report_pending(console: Console, thread_id: str, db: Path, pending: Sequence[PendingMcpInterrupt]) -> int:
    """Print that the thread waits (and the command that continues it); return :data:`~langgraph_mcp.cli.runner.EXIT_PENDING`."""
    waiting = ", ".join(f"{i.kind} for {i.tool_call_id}" for i in pending)
    console.print(
        Text.assemble(("Thread ", "bold"), (thread_id, "bold yellow"), f" is waiting: {waiting}."),
        soft_wrap=True,
    )
    print_hint(console, "Continue it with:", resume_hint(thread_id, db))
    return EXIT_PENDING
