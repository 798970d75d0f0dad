"""The "Remember this approval?" question of the CLI's approval prompt, in a pseudo-terminal (pexpect), each command
its own process over one thread database (the CLI's store): a remembered approval is not asked again in the next
run, a remembered rejection too, the default (Enter) remembers nothing. What ran is read from the demo server's own
record (``DEMO_EVENTS_FILE``, one JSON line per event, written by each server process)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli_terminal import finish, spawn

DELETE = ["call", "demo_delete_file", "--args", '{"path": "todo.txt"}']


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "threads.sqlite"


@pytest.fixture
def events(tmp_path: Path) -> Path:
    return tmp_path / "events.jsonl"


@pytest.fixture
def config(tmp_path: Path, events: Path) -> Path:
    """The demo server over stdio, writing what it runs to ``events``."""
    demo = {
        "command": sys.executable,
        "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
        "env": {"DEMO_EVENTS_FILE": str(events)},
    }
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"demo": demo}}))
    return path


def commits(events: Path) -> int:
    lines = events.read_text().splitlines() if events.exists() else []
    return sum(1 for e in map(json.loads, lines) if (e["tool"], e["event"]) == ("delete_file", "commit"))


def delete_as(db: Path, config: Path, user: str) -> Any:
    return spawn(db, *DELETE, "--config", str(config), "--configurable", f"user_id={user}")


def test_a_remembered_approval_is_not_asked_again_and_enter_remembers_nothing(
    db: Path, config: Path, events: Path
) -> None:
    child = delete_as(db, config, "ann")
    child.expect(r"can be remembered for: thread, principal")
    child.expect(r"Decision for demo_delete_file \[approve/edit/reject/respond\]: ")
    child.sendline("approve")
    child.expect(r"principal: don't ask again about this tool for this user, on any thread")
    child.expect(r"Remember this approval\? \[no/thread/principal\] \(no\): ")
    child.sendline("p")  # a unique prefix is enough
    child.expect(r"answered approve remember=principal")
    rest, code = finish(child)
    assert code == 0 and "ok > Deleted todo.txt" in rest
    assert commits(events) == 1

    again = delete_as(db, config, "ann")  # a new process, a new thread, the same user: not asked
    rest, code = finish(again)
    assert code == 0, rest
    assert "Decision for" not in rest and "paused approval" not in rest
    line = " ".join(rest.split())  # the terminal may wrap it
    assert "ok (remembered approval, principal ann) > Deleted todo.txt" in line  # the line says so
    assert commits(events) == 2  # the server ran it

    other = delete_as(db, config, "bob")  # another user: asked; Enter at "Remember?" keeps nothing
    other.expect(r"Decision for demo_delete_file .*: ")
    other.sendline("approve")
    other.expect(r"Remember this approval\? \[no/thread/principal\] \(no\): ")
    other.sendline("")
    other.expect(r"answered approve\s+\(you\)")
    rest, code = finish(other)
    assert code == 0 and "ok > Deleted todo.txt" in rest and commits(events) == 3

    asked = delete_as(db, config, "bob")  # nothing was remembered for bob: asked again
    asked.expect(r"Decision for demo_delete_file .*: ")
    asked.sendintr()
    asked.expect(r"Thread (call-[0-9a-f]+) is waiting")
    _, code = finish(asked)
    assert code == 3 and commits(events) == 3


def test_a_remembered_rejection_answers_the_next_run_with_the_reason(
    db: Path, config: Path, events: Path
) -> None:
    child = delete_as(db, config, "ann")
    child.expect(r"Decision for demo_delete_file .*: ")
    child.sendline("reject")
    child.expect(r"Reason \(optional\): ")
    child.sendline("todo.txt stays")
    child.expect(r"Remember this rejection\? \[no/thread/principal\] \(no\): ")
    child.sendline("principal")
    child.expect(r'answered reject message="todo.txt stays" remember=principal')
    rest, code = finish(child)
    assert code == 1 and "rejected" in rest

    again = delete_as(db, config, "ann")
    rest, code = finish(again)
    assert "Decision for" not in rest
    assert code == 1 and "todo.txt stays" in re.sub(r"\s+", " ", rest), rest
    assert commits(events) == 0  # never run
