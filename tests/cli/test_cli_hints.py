"""The commands the CLI prints for the user work when pasted: they are taken from the output and run.

The database lives under a long directory name and the terminal is 60 columns wide, so a hint that wraps
would be cut in two; ``LANGGRAPH_MCP_DB`` is *not* set, so a hint that forgets ``--db`` would look in the
default database and fail; the venv is not on ``PATH`` (the README runs ``.venv/bin/langgraph-mcp``), so a hint
that says plain ``langgraph-mcp`` would not be found. The pasted line is split as a POSIX shell would
(``shlex``) and run as it is.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import HANG_GUARD

TIMEOUT = HANG_GUARD
LANGGRAPH_MCP = Path(sys.executable).with_name("langgraph-mcp")


def run(argv: list[str], *, home: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LANGGRAPH_MCP_DB", "EDITOR", "VISUAL")}
    # the default database would be under $HOME: keep it in the test's directory, away from the user's
    env.update({"COLUMNS": "60", "NO_COLOR": "1", "HOME": str(home), "XDG_DATA_HOME": str(home / "data")})
    # a shell where the venv is not activated: `langgraph-mcp` is not on PATH
    venv_bin = str(LANGGRAPH_MCP.parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin)
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, timeout=TIMEOUT, env=env, check=False
    )


def cli(*args: str, home: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run([str(LANGGRAPH_MCP), *args], home=home, stdin=stdin)


def pasted(line: str, home: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run a printed command line as a shell would (same ``PATH``, same directory)."""
    return run(shlex.split(line), home=home, stdin=stdin)


def hint(output: str, label: str) -> str:
    """The command after ``label`` — which must be all on that one line."""
    match = re.search(rf"^{re.escape(label)} (\S.*?langgraph[-_]mcp .+)$", output, re.M)
    assert match, f"no {label!r} line in:\n{output}"
    return match.group(1)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    deep = tmp_path / ("a-directory-with-a-long-name-" * 3) / "with spaces"
    deep.mkdir(parents=True)
    return deep / "threads.sqlite"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_continue_hint_is_one_line_with_the_db_and_runs_as_pasted(db: Path, home: Path) -> None:
    first = cli(
        "call", "demo_delete_file", "--args", '{"path": "todo.txt"}', "--db", str(db), "--no-input", home=home
    )
    assert first.returncode == 3, first.stderr

    line = hint(first.stdout, "Continue it with:")
    assert "--db" in line
    second = pasted(line, home, stdin="approve\n")

    assert second.returncode == 0, second.stdout + second.stderr
    assert "Deleted todo.txt" in second.stdout


def test_pending_suggests_a_resume_command_that_works_as_printed(db: Path, home: Path) -> None:
    first = cli(
        "call", "demo_delete_file", "--args", '{"path": "todo.txt"}', "--db", str(db), "--no-input", home=home
    )
    thread = re.search(r"Thread (call-[0-9a-f]+) is waiting", first.stdout)
    assert thread, first.stdout

    listed = cli("pending", "--thread", thread.group(1), "--db", str(db), home=home)
    assert listed.returncode == 3, listed.stderr  # it waits
    line = hint(listed.stdout, "Answer with:")
    resumed = pasted(line, home, stdin="approve\n")

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Deleted todo.txt" in resumed.stdout


def test_resume_of_a_finished_thread_says_it_is_finished_and_runs_nothing(db: Path, home: Path) -> None:
    first = cli(
        "call", "demo_delete_file", "--args", '{"path": "todo.txt"}', "--db", str(db), "--no-input", home=home
    )
    line = hint(first.stdout, "Continue it with:")
    done = pasted(line, home, stdin="approve\n")
    assert done.returncode == 0 and "Deleted todo.txt" in done.stdout

    again = pasted(line, home)

    assert again.returncode == 0, again.stderr
    assert re.search(r"Thread call-[0-9a-f]+ is finished: nothing to resume", again.stdout)
    assert "Deleted todo.txt" not in again.stdout  # the old result is not shown as if it ran again
    assert "pending --thread" in hint(again.stdout, "See its state with:")


def test_hints_name_the_program_the_way_it_was_started(db: Path, home: Path) -> None:
    first = run(
        [
            sys.executable,
            "-m",
            "langgraph_mcp",
            "call",
            "demo_delete_file",
            "--args",
            '{"path": "todo.txt"}',
            "--db",
            str(db),
            "--no-input",
        ],
        home=home,
    )
    line = hint(first.stdout, "Continue it with:")
    assert shlex.split(line)[:3] == [sys.executable, "-m", "langgraph_mcp"]

    second = cli(
        "call", "demo_delete_file", "--args", '{"path": "todo.txt"}', "--db", str(db), "--no-input", home=home
    )
    assert shlex.split(hint(second.stdout, "Continue it with:"))[0] == str(LANGGRAPH_MCP)


def test_demo_continue_hint_names_its_temporary_database(home: Path) -> None:
    first = cli("demo", "--no-input", home=home)
    assert first.returncode == 3, first.stderr

    line = hint(first.stdout, "Continue it with:")
    answers = home / "answers.json"
    answers.write_text(
        json.dumps({"call_delete_file_1": {"type": "approve"}, "call_book_trip_1": {"action": "decline"}})
    )
    second = pasted(f"{line} --answers {shlex.quote(str(answers))}", home)

    assert second.returncode == 0, second.stdout + second.stderr
    assert "Deleted todo.txt" in second.stdout
    assert "assistant > Here is what happened:" in second.stdout


@pytest.mark.parametrize(
    ("server", "named"),
    [
        ({"url": "http://127.0.0.1:9/mcp"}, "http://127.0.0.1:9/mcp"),
        (
            {"command": sys.executable, "args": ["-m", "no_such_module_here"]},
            f"{sys.executable} -m no_such_module_here",
        ),
    ],
    ids=["http", "stdio"],
)
def test_connection_errors_name_the_url_or_the_command(
    tmp_path: Path, home: Path, server: dict[str, object], named: str
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"web": server}}))

    listed = cli("tools", "--config", str(config), home=home)
    called = cli(
        "call", "web_anything", "--config", str(config), "--db", str(tmp_path / "t.sqlite"), home=home
    )

    flat = re.sub(r"\s*\n\s*", " ", listed.stdout)
    assert named in flat and flat.count(named) == 1  # named once, whoever names it
    assert called.returncode == 1
    assert f"MCP server 'web' ({named}) could not be reached" in called.stderr
    if "command" in server:  # died at start: the last line of its stderr is shown
        assert "No module named no_such_module_here" in called.stderr and "No module named" in flat
