"""The small things a newcomer meets in the first hour: the version, a missing extra and the demo's help say what
is true (the demo's ``[no/thread/principal]`` prompt: tests/cli/test_cli_terminal.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import langgraph_mcp
from tests.support.helpers import HANG_GUARD


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD, check=False
    )


def test_the_package_says_its_version_as_the_cli_does() -> None:
    from importlib.metadata import version

    assert langgraph_mcp.__version__ == version("langgraph-mcp")
    done = subprocess.run(
        [sys.executable, "-m", "langgraph_mcp", "--version"],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )
    assert done.stdout.split() == ["langgraph-mcp", langgraph_mcp.__version__]


def test_the_create_agent_middleware_without_the_agents_extra_names_the_extra() -> None:
    # langchain missing, as in a venv installed without `.[agents]`
    done = python(
        "import sys\n"
        "sys.modules['langchain'] = None\n"
        "try:\n"
        "    from langgraph_mcp import McpApprovalMiddleware\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(type(exc).__name__, exc.name, '|', exc)\n"
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith("ModuleNotFoundError langchain")  # still one, naming the module
    assert "McpApprovalMiddleware needs 'langchain'" in line and "pip install 'langgraph-mcp[agents]'" in line


def test_demo_help_names_the_database_the_demo_really_uses() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "langgraph_mcp", "demo", "--help"],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    text = " ".join(done.stdout.split())
    assert "(default: a temporary database, deleted at the end unless the thread is left waiting)" in text
    assert "per-user data dir" not in text
