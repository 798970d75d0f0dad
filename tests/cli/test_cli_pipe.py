"""``langgraph-mcp ... | head``: a closed standard output ends the command quietly - nothing on stderr, no
traceback - with the status a shell reports for a command killed by SIGPIPE (141), as ``yes | head -1`` does."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from langgraph_mcp.cli.runner import EXIT_BROKEN_PIPE
from tests.support.helpers import HANG_GUARD


def run_with_closed_stdout(*args: str, db: Path) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI with a stdout whose reading end is already closed: its first write fails (EPIPE)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "langgraph_mcp", *args],
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=HANG_GUARD,
            env={**os.environ, "LANGGRAPH_MCP_DB": str(db), "NO_COLOR": "1"},
            check=False,
        )
    finally:
        os.close(write_end)


def test_exit_status_is_the_shells_sigpipe_status() -> None:
    # What `yes | head -1` reports in a shell: killed by SIGPIPE, 128 + 13.
    shell = subprocess.run(
        ["bash", "-c", "set -o pipefail; yes | head -1 >/dev/null"],
        capture_output=True,
        check=False,
        timeout=HANG_GUARD,
    )
    assert shell.returncode == EXIT_BROKEN_PIPE == 141


@pytest.mark.parametrize("args", [["tools"], ["--help"], ["tools", "--help"]], ids=" ".join)
def test_a_closed_stdout_ends_quietly_with_the_broken_pipe_status(args: list[str], tmp_path: Path) -> None:
    result = run_with_closed_stdout(*args, db=tmp_path / "threads.sqlite")
    assert result.stderr == b""
    assert result.returncode == EXIT_BROKEN_PIPE


def test_tools_piped_into_head_in_a_shell(tmp_path: Path) -> None:
    # The user's own command line. Whether the pipe closes before the CLI has written everything depends on
    # timing (the table may fit in the pipe's buffer): either way, nothing on stderr and no failure status.
    command = f"{shlex.quote(sys.executable)} -m langgraph_mcp tools | head -1"
    result = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        capture_output=True,
        timeout=HANG_GUARD,
        env={**os.environ, "LANGGRAPH_MCP_DB": str(tmp_path / "t.sqlite"), "NO_COLOR": "1"},
        check=False,
    )
    assert result.stderr == b""
    assert result.returncode in (0, EXIT_BROKEN_PIPE)
    assert b"demo" in result.stdout
