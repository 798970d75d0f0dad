"""Interactive ``langgraph-mcp`` sessions in a pseudo-terminal (pexpect): approvals, forms, Ctrl-C and resume.

The child runs with ``TERM=dumb`` (rich then prints plain text at 80 columns, no colour or cursor movement) in a
fixed-size terminal, with no ``$EDITOR`` (edits are typed inline as JSON).
"""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pexpect  # type: ignore[import-untyped,unused-ignore]
import pytest

from tests.support.helpers import HANG_GUARD

TIMEOUT = HANG_GUARD


def _default_sigint() -> None:
    # A job started in the background by a non-interactive shell (``cmd &``, e.g. CI wrappers) inherits SIGINT
    # ignored, and Python keeps an inherited "ignore": Ctrl-C would never reach the CLI under test.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(db: Path, *args: str) -> Any:
    env = {**os.environ, "TERM": "dumb", "LANGGRAPH_MCP_DB": str(db), "NO_COLOR": "1"}
    env.pop("EDITOR", None)
    env.pop("VISUAL", None)
    env.pop("COLUMNS", None)
    return pexpect.spawn(
        sys.executable,
        ["-m", "langgraph_mcp", *args],
        env=env,
        dimensions=(50, 120),
        encoding="utf-8",
        timeout=TIMEOUT,
        preexec_fn=_default_sigint,
    )


def finish(child: Any) -> tuple[str, int]:
    """Read to the end; return the rest of the output (line breaks from wrapping removed) and the exit code."""
    child.expect(pexpect.EOF)
    child.close()
    return child.before.replace("\r\n", "\n"), child.exitstatus


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "threads.sqlite"


def test_approving_a_destructive_call_runs_it(db: Path) -> None:
    child = spawn(db, "call", "demo_delete_file", "--args", '{"path": "todo.txt"}')
    child.expect(r"paused approval for demo_delete_file")
    child.expect(r"reason: destructiveHint \(declared\)")
    child.expect(r"Decision for demo_delete_file \[approve/edit/reject/respond\]: ")
    child.sendline("approve")
    child.expect(
        r"Remember this approval\? \[no/thread/principal\] \(no\): "
    )  # tests/cli/test_cli_remember.py
    child.sendline("")
    child.expect(r"answered approve\s+\(you\)")

    rest, code = finish(child)

    assert code == 0
    assert "ok > Deleted todo.txt" in rest


def test_editing_the_arguments_inline_runs_the_edited_call(db: Path) -> None:
    child = spawn(db, "call", "demo_delete_file", "--args", '{"path": "todo.txt"}')
    child.expect(r"Decision for demo_delete_file .*: ")
    child.sendline("e")
    child.expect(r"New arguments \(JSON object\).*: ")
    child.sendline('{"path": 3}')  # does not fit the inputSchema: asked again
    child.expect(r"args\.path: 3 is not of type 'string'")
    child.expect(r'Refused, not sent: \{"path": 3\}')
    child.expect(r"New arguments \(JSON object\): ")  # no default: Enter does not resend the refused edit
    child.sendline("")
    child.expect(r"Not valid JSON")
    child.expect(r"New arguments \(JSON object\): ")
    child.sendline('{"path": "notes.txt"}')
    child.expect(r'answered edit args=\{"path": "notes.txt"\}')

    rest, code = finish(child)

    assert code == 0
    assert "ok > Deleted notes.txt" in rest


def test_a_form_reasks_an_invalid_value_and_sends_the_typed_answer(db: Path) -> None:
    child = spawn(db, "call", "demo_register")
    child.expect(r"paused input requested by demo_register")
    child.expect(r"Fill in the form\? \[accept/decline/cancel\] \(accept\): ")
    child.sendline("")
    child.expect(r"Name - Your full name: ")
    child.sendline("Ada Lovelace")
    child.expect(r"Age - Age in years: ")
    child.sendline("5")
    child.expect(r"invalid: field 'age': 5 is less than the minimum 18")
    child.expect(r"Age - Age in years: ")
    child.sendline("30")
    child.expect(r"Email - E-mail address: ")
    child.sendline("ada@example.com")
    child.expect(r"Plan - Subscription plan \[free/pro\]: ")
    child.sendline("gold")  # not a choice: rich asks again
    child.expect(r"Plan - Subscription plan \[free/pro\]: ")
    child.sendline("pro")
    child.expect(r"Newsletter - Subscribe to the newsletter\? \(optional\) \[y/n\] \(n\): ")
    child.sendline("y")
    child.expect(r"Start - Start date \(YYYY-MM-DD\): ")
    child.sendline("2030-01-01")
    child.expect(r"answered \[")

    rest, code = finish(child)

    assert code == 0
    assert '"age": 30' in rest and '"plan": "pro"' in rest and '"newsletter": true' in rest


def test_a_sensitive_field_is_not_echoed(db: Path) -> None:
    secret = "hunter2-s3cret"
    child = spawn(db, "call", "demo_login", "--args", '{"service": "mail"}')
    child.expect(r"password: string \(required\) \(hidden\)")
    child.expect(r"Fill in the form\? .*: ")
    child.sendline("")
    child.expect(r"Username - User name: ")
    child.sendline("ada")
    child.expect(r"Password - Password \(sensitive\): ")
    child.sendline(secret)
    child.expect(r'answered .*"password": "\*\*\*\*\*\*"')
    seen = child.before + child.after

    rest, code = finish(child)

    assert code == 0
    assert "Logged in to mail as ada" in rest
    assert secret not in seen + rest


def test_ctrl_c_at_a_prompt_leaves_the_thread_pending_and_resume_completes_it(db: Path) -> None:
    child = spawn(db, "call", "demo_delete_file", "--args", '{"path": "todo.txt"}')
    child.expect(r"Decision for demo_delete_file .*: ")
    child.sendintr()
    child.expect(r"Thread (call-[0-9a-f]+) is waiting: approval for call_[0-9a-f]+\.")
    thread = child.match.group(1)
    child.expect(rf"resume --thread {thread}")
    _, code = finish(child)
    assert code == 3

    resumed = spawn(db, "resume", "--thread", thread)  # a new process
    resumed.expect(r"paused approval for demo_delete_file")
    resumed.expect(r"Decision for demo_delete_file .*: ")
    resumed.sendline("a")
    resumed.expect(r"Remember this approval\? .*: ")
    resumed.sendline("")
    rest, code = finish(resumed)

    assert code == 0
    assert "ok > Deleted todo.txt" in rest


def test_interactive_demo_asks_for_the_approval_and_the_date(db: Path) -> None:
    child = spawn(db, "demo")
    # Both pause in the same step: the allowed booking call asks for a date while the delete awaits approval.
    child.expect(r"paused input requested by demo_book_trip")
    child.expect(r"Fill in the form\? .*: ")
    child.sendline("accept")
    child.expect(r"Date - Departure date \(YYYY-MM-DD\): ")
    child.sendline("2031-02-03")
    child.expect(r"paused approval for demo_delete_file \(call_delete_file_1\)")
    child.expect(r"Decision for demo_delete_file .*: ")
    child.sendline("reject")
    child.expect(r"Reason \(optional\): ")
    child.sendline("not today")
    child.expect(r"Remember this rejection\? \[no/thread/principal\] \(no\): ")  # the demo keeps a store
    child.sendline("")

    rest, code = finish(child)

    assert code == 0
    flat = re.sub(r"\s+", " ", rest)
    assert "Booked Rome on 2031-02-03" in flat
    assert "demo_delete_file (error): A human reviewer rejected this call" in flat
    assert "Reason: not today" in flat


def test_answers_given_before_ctrl_c_are_kept(db: Path) -> None:
    child = spawn(db, "demo", "--db", str(db))
    # The date question comes first; answer it, then stop at the approval prompt.
    child.expect(r"Fill in the form\? .*: ")
    child.sendline("accept")
    child.expect(r"Date - Departure date \(YYYY-MM-DD\): ")
    child.sendline("2031-02-03")
    child.expect(r"Decision for demo_delete_file .*: ")
    child.sendintr()
    child.expect(r"Thread (demo-[0-9a-f]+) is waiting: approval for call_delete_file_1\.")
    thread = child.match.group(1)
    _, code = finish(child)
    assert code == 3

    resumed = spawn(
        db, "resume", "--thread", thread, "--db", str(db)
    )  # a new process: only the approval is left
    resumed.expect(r"Decision for demo_delete_file .*: ")
    resumed.sendline("a")
    resumed.expect(r"Remember this approval\? .*: ")
    resumed.sendline("")
    rest, code = finish(resumed)

    assert code == 0
    flat = re.sub(r"\s+", " ", rest)
    assert "Fill in the form" not in flat  # the date was not asked again
    assert "Deleted todo.txt" in flat
    assert "demo_book_trip: Booked Rome on 2031-02-03" in flat
