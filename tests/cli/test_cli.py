"""The ``langgraph-mcp`` command, run as a subprocess (``python -m langgraph_mcp``) against the bundled server.

Every test uses its own SQLite database (``LANGGRAPH_MCP_DB`` / ``--db`` in ``tmp_path``); output is read with
rich's non-terminal rendering (no colour, 200 columns).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from langgraph_mcp.cli.responders import auto_answer, sample_value
from langgraph_mcp.examples.demo_server import Registration
from langgraph_mcp.examples.scripted_model import ScriptedChatModel
from langgraph_mcp.payloads import FormRequest
from langgraph_mcp.questions.answers import validate_answers
from langgraph_mcp.questions.inspection import sensitive_fields
from tests.support.helpers import HANG_GUARD

TIMEOUT = HANG_GUARD
DATE_RE = r"\d{4}-\d{2}-\d{2}"
ASK_DATE = "langgraph_mcp.examples.demo_server:ask_date"


def run_cli(
    *args: str, db: Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {
        **os.environ,
        "LANGGRAPH_MCP_DB": str(db),
        "COLUMNS": "200",
        "NO_COLOR": "1",
        **(env or {}),
    }
    full_env.pop("EDITOR", None)
    full_env.pop("VISUAL", None)
    return subprocess.run(
        [sys.executable, "-m", "langgraph_mcp", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=full_env,
        check=False,
    )


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "threads.sqlite"


def bad_server_config(tmp_path: Path) -> Path:
    return write_json(
        tmp_path / "servers.json",
        {
            "mcpServers": {
                "demo": {
                    "command": sys.executable,
                    "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
                },
                "broken": {"command": str(tmp_path / "no-such-server")},
            }
        },
    )


# ------------------------------------------------------------------------------------------------ demo


def test_demo_yes_answers_the_approval_and_the_form_and_prints_the_transcript(db: Path) -> None:
    result = run_cli("demo", "--yes", db=db)

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "user > Show me my files, delete todo.txt, and book me a trip to Rome." in out
    assert "call demo_delete_file" in out and "ask destructiveHint (declared)" in out
    assert "paused approval for demo_delete_file (call_delete_file_1)" in out
    assert "answered approve  (--yes)" in out
    assert "paused input requested by demo_book_trip (call_book_trip_1, round 1)" in out
    assert re.search(rf'answered \[{re.escape(ASK_DATE)}\] accept {{"date": "{DATE_RE}"}}  \(--yes\)', out)
    assert "tool demo_delete_file (call_delete_file_1) ok > Deleted todo.txt" in out
    assert re.search(rf"tool demo_book_trip \(call_book_trip_1\) ok > Booked Rome on {DATE_RE}", out)
    assert "assistant > Here is what happened:" in out
    # the transcript is in order: proposal, approval, results, final answer
    assert out.index("paused approval") < out.index("Deleted todo.txt") < out.index("Here is what happened")
    assert result.stderr == ""


def test_demo_answers_file_keyed_by_published_name_rejects_and_declines(db: Path, tmp_path: Path) -> None:
    answers = write_json(
        tmp_path / "answers.json",
        {
            "demo_delete_file": {"type": "reject", "message": "keep it"},
            "demo_book_trip": {"action": "decline"},
        },
    )

    result = run_cli("demo", "--answers", str(answers), "--no-input", db=db)

    assert result.returncode == 0, result.stderr
    assert 'answered reject message="keep it"  (answers file)' in result.stdout
    assert "ERROR > A human reviewer rejected this call to 'demo_delete_file'" in result.stdout
    assert f"answered [{ASK_DATE}] decline  (answers file)" in result.stdout


def test_demo_no_input_leaves_the_thread_pending_and_resume_finishes_it_in_a_new_process(
    db: Path, tmp_path: Path
) -> None:
    first = run_cli("demo", "--no-input", "--db", str(db), db=db)

    assert first.returncode == 3, first.stderr
    match = re.search(
        r"Thread (demo-[0-9a-f]+) is waiting: elicitation for call_book_trip_1, approval for call_delete_file_1",
        first.stdout,
    )
    assert match, first.stdout
    thread = match.group(1)
    assert f"langgraph_mcp resume --thread {thread}" in first.stdout  # run as `python -m langgraph_mcp`

    answers = write_json(
        tmp_path / "answers.json",
        {
            "call_delete_file_1": {"type": "approve"},
            "call_book_trip_1": {ASK_DATE: {"action": "accept", "content": {"date": "2030-05-01"}}},
        },
    )
    second = run_cli(
        "resume", "--thread", thread, "--db", str(db), "--answers", str(answers), "--no-input", db=db
    )

    assert second.returncode == 0, second.stderr
    assert "Deleted todo.txt" in second.stdout
    assert "Booked Rome on 2030-05-01" in second.stdout
    assert "assistant > Here is what happened:" in second.stdout
    assert "Show me my files" not in second.stdout  # history is not printed again


# ------------------------------------------------------------------------------------------------ tools


@pytest.mark.parametrize(("strict", "code"), [(False, 1), (True, 2)])
def test_tools_prints_the_table_and_the_failed_servers_error(
    db: Path, tmp_path: Path, strict: bool, code: int
) -> None:
    config = bad_server_config(tmp_path)

    result = run_cli("tools", "--config", str(config), *(["--strict"] if strict else []), db=db)

    assert result.returncode == code
    out = result.stdout
    assert re.search(r"demo\s+era: (modern|legacy) \(\S+\)\s+server: demo\s+ok\s+\d+ tools", out)
    row = next(line for line in out.splitlines() if "demo_delete_file" in line)
    # the verdict column: "ask", the deciding rule's id in brackets (if any), the reason
    assert "destructive=true" in row and re.search(r"ask (\[[^]]+\] )?destructiveHint \(declared\)", row)
    row = next(line for line in out.splitlines() if "demo_move_file" in line)
    assert "(none)" in row and "destructive*" in row
    assert re.search(r"ask (\[[^]]+\] )?destructiveHint \(spec default\)", row)
    assert re.search(r"broken\s+FAILED\s+MCP server 'broken': could not connect", out)
    assert "1 server(s) failed: broken" in result.stderr


def test_tools_verdicts_follow_the_policy_file(db: Path, tmp_path: Path) -> None:
    policy = write_json(tmp_path / "policy.json", {"tools": {"demo_list_files": "deny"}, "ask_writes": True})

    result = run_cli("tools", "--policy", str(policy), db=db)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "deny policy override 'demo_list_files': deny" in next(
        ln for ln in lines if "demo_list_files" in ln
    )
    assert "ask writes (ask_writes)" in next(ln for ln in lines if "demo_write_file" in ln)


# ------------------------------------------------------------------------------------------------ call


def test_call_prints_content_and_structured_content_quietly(db: Path) -> None:
    result = run_cli("call", "demo_add", "--args", '{"a": 2, "b": 3}', db=db)

    assert result.returncode == 0, result.stderr
    assert re.search(r"tool demo_add \(call_[0-9a-f]+\) ok > 5", result.stdout)
    assert '"result": 5' in result.stdout
    assert result.stderr == ""  # the stdio server's stderr and library logs stay off the terminal


def test_call_error_result_exits_1(db: Path) -> None:
    result = run_cli("call", "demo_always_fails", "--args", '{"reason": "boom"}', db=db)

    assert result.returncode == 1
    assert re.search(r"tool demo_always_fails \(call_[0-9a-f]+\) ERROR > .*always_fails: boom", result.stdout)


def test_call_shows_progress_from_the_server(db: Path) -> None:
    result = run_cli("call", "demo_slow", "--args", '{"seconds": 0.4, "steps": 4}', db=db)

    assert result.returncode == 0, result.stderr
    assert re.search(r"demo/slow .* 4/4 step 4", result.stdout)


def test_call_no_input_then_pending_then_resume_with_answers_by_tool_call_id(
    db: Path, tmp_path: Path
) -> None:
    first = run_cli("call", "demo_book_trip", "--args", '{"destination": "Rome"}', "--no-input", db=db)

    assert first.returncode == 3, first.stderr
    thread = re.search(r"Thread (call-[0-9a-f]+) is waiting: elicitation for (call_[0-9a-f]+)", first.stdout)
    assert thread, first.stdout

    pending = run_cli("pending", "--thread", thread.group(1), "--json", db=db)
    assert pending.returncode == 3, pending.stderr  # the thread waits (as the help says)
    [item] = json.loads(pending.stdout)
    assert item["kind"] == "elicitation" and item["tool_call_id"] == thread.group(2)
    assert list(item["payload"]["requests"]) == [ASK_DATE]

    typed = run_cli("pending", "--thread", thread.group(1), db=db)
    assert typed.returncode == 3, typed.stderr
    assert (
        "paused input requested by demo_book_trip" in typed.stdout and "date: date (required)" in typed.stdout
    )

    answers = write_json(
        tmp_path / "answers.json",
        {thread.group(2): {ASK_DATE: {"action": "accept", "content": {"date": "2030-05-01"}}}},
    )
    second = run_cli("resume", "--thread", thread.group(1), "--answers", str(answers), db=db)

    assert second.returncode == 0, second.stderr
    assert "Booked Rome on 2030-05-01" in second.stdout
    done = run_cli("pending", "--thread", thread.group(1), db=db)
    assert done.returncode == 0, done.stderr
    assert "has nothing pending (finished)" in done.stdout


def test_an_approval_given_in_one_process_holds_for_the_tool_node_in_the_next(
    db: Path, tmp_path: Path
) -> None:
    """Each CLI command is its own process: the gate's signed decision (resume 1) must prove itself to the tool
    node that runs the call after the elicitation is answered (resume 2). The key lives in the thread database."""
    policy = write_json(tmp_path / "policy.json", {"tools": {"demo_book_trip": "ask"}})
    env = {"LANGGRAPH_MCP_APPROVAL_KEY": ""}  # no shared key in the environment: the database's key is used
    first = run_cli(
        "call", "demo_book_trip", "--args", '{"destination": "Rome"}', "--policy", str(policy), "--no-input",
        db=db, env=env,
    )  # fmt: skip
    assert first.returncode == 3, first.stderr
    found = re.search(r"Thread (call-[0-9a-f]+) is waiting: approval for (call_[0-9a-f]+)", first.stdout)
    assert found, first.stdout
    thread, call_id = found.groups()

    approve = write_json(tmp_path / "approve.json", {call_id: {"type": "approve"}})
    second = run_cli("resume", "--thread", thread, "--answers", str(approve), "--no-input", db=db, env=env)
    assert second.returncode == 3, second.stderr
    assert f"is waiting: elicitation for {call_id}" in second.stdout, second.stdout

    date = write_json(
        tmp_path / "date.json", {call_id: {ASK_DATE: {"action": "accept", "content": {"date": "2030-05-01"}}}}
    )
    third = run_cli("resume", "--thread", thread, "--answers", str(date), "--no-input", db=db, env=env)
    assert third.returncode == 0, third.stdout + third.stderr
    assert "Booked Rome on 2030-05-01" in third.stdout


# ------------------------------------------------------------------------------------------------ errors


def test_bad_config_file_exits_2_with_the_config_error(db: Path, tmp_path: Path) -> None:
    not_json = tmp_path / "broken.json"
    not_json.write_text("{nope")
    bad_entry = write_json(tmp_path / "entry.json", {"mcpServers": {"x": {"comand": "foo"}}})

    for config, expected in [
        (not_json, "is not valid JSON"),
        (bad_entry, "server 'x': cannot tell the transport"),
        (tmp_path / "missing.json", "cannot read server config"),
    ]:
        result = run_cli("tools", "--config", str(config), db=db)
        assert result.returncode == 2, result.stdout
        assert expected in result.stderr


def test_bad_policy_file_exits_2_naming_the_field(db: Path, tmp_path: Path) -> None:
    policy = write_json(tmp_path / "policy.json", {"tools": {"demo_*": "maybe"}})

    result = run_cli("call", "demo_add", "--args", '{"a": 1, "b": 1}', "--policy", str(policy), db=db)

    assert result.returncode == 2
    assert "tools.demo_*: Input should be 'allow', 'ask' or 'deny'" in result.stderr


def test_unknown_tool_exits_2_with_close_matches(db: Path) -> None:
    result = run_cli("call", "demo_delet_file", "--args", '{"path": "todo.txt"}', db=db)

    assert result.returncode == 2
    assert "No MCP tool is published as 'demo_delet_file'. Did you mean: demo_delete_file" in result.stderr


def test_unreachable_server_exits_1(db: Path, tmp_path: Path) -> None:
    config = write_json(
        tmp_path / "servers.json", {"mcpServers": {"broken": {"command": str(tmp_path / "nope")}}}
    )

    result = run_cli("call", "broken_anything", "--config", str(config), db=db)

    assert result.returncode == 1
    assert f"MCP server 'broken' ({tmp_path / 'nope'}) could not be reached" in result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("[1, 2]", "--args must be a JSON object"),
        ("{oops", "--args is not valid JSON"),
        (
            '{"pat": "todo.txt"}',
            "do not match the inputSchema of demo_delete_file: (arguments): 'path' is a required",
        ),
    ],
)
def test_bad_arguments_exit_2(db: Path, args: str, expected: str) -> None:
    result = run_cli("call", "demo_delete_file", "--args", args, db=db)

    assert result.returncode == 2
    assert expected in result.stderr


def test_bad_answers_file_exits_2_naming_the_key_and_leaves_the_thread_pending(
    db: Path, tmp_path: Path
) -> None:
    first = run_cli("call", "demo_book_trip", "--args", '{"destination": "Rome"}', "--no-input", db=db)
    found = re.search(r"Thread (call-[0-9a-f]+) is waiting: elicitation for (call_[0-9a-f]+)", first.stdout)
    assert found, first.stdout
    thread, call_id = found.groups()
    not_json = tmp_path / "not.json"
    not_json.write_text("[1,")
    cases = [
        ({"call_nope": {"type": "approve"}}, "key 'call_nope': names no tool call of this run"),
        (
            {call_id: {ASK_DATE: {"action": "accept", "content": {"date": "tomorrow"}}}},
            f"key '{call_id}': answer for '{ASK_DATE}': field 'date'",
        ),
        ({call_id: {"type": "approve"}}, f"key '{call_id}'"),
    ]
    for data, expected in cases:
        answers = write_json(tmp_path / "answers.json", data)
        result = run_cli("resume", "--thread", thread, "--answers", str(answers), "--no-input", db=db)
        assert result.returncode == 2, result.stdout
        assert expected in result.stderr

    result = run_cli("resume", "--thread", thread, "--answers", str(not_json), db=db)
    assert result.returncode == 2
    assert "invalid JSON at line 1" in result.stderr

    still = run_cli("pending", "--thread", thread, "--json", db=db)
    assert [i["tool_call_id"] for i in json.loads(still.stdout)] == [call_id]


def test_resume_of_an_unknown_thread_exits_2(db: Path) -> None:
    sqlite3.connect(db).close()  # the database exists; the thread does not
    result = run_cli("resume", "--thread", "nope", db=db)

    assert result.returncode == 2
    assert "no thread 'nope'" in result.stderr


# ------------------------------------------------------------------------------------------------ in process


def test_sample_values_fill_the_registration_form() -> None:
    schema = Registration.model_json_schema()
    request: FormRequest = {
        "mode": "form",
        "message": "",
        "requested_schema": schema,
        "sensitive": sensitive_fields(schema),
    }

    answer = auto_answer("k", request)

    assert answer["action"] == "accept"
    validate_answers({"k": request}, {"k": answer})
    content = cast(dict[str, Any], answer.get("content"))
    assert content["age"] == 18 and content["plan"] == "free" and content["newsletter"] is False
    assert re.fullmatch(DATE_RE, content["start"])
    assert sample_value("n", {"type": "string", "format": "email"}) == "user@example.com"


def test_scripted_model_proposes_parallel_calls_then_summarizes() -> None:
    from langchain_core.messages import HumanMessage, ToolMessage

    model = ScriptedChatModel()
    proposal = model.invoke([HumanMessage("go")])
    assert [(c["name"], c["id"]) for c in proposal.tool_calls] == [
        ("demo_list_files", "call_list_files_1"),
        ("demo_delete_file", "call_delete_file_1"),
        ("demo_book_trip", "call_book_trip_1"),
    ]
    results = [
        ToolMessage("a.txt", tool_call_id="call_list_files_1"),
        ToolMessage("rejected", tool_call_id="call_delete_file_1", status="error"),
        ToolMessage("Booked Rome", tool_call_id="call_book_trip_1"),
    ]
    summary = model.invoke([HumanMessage("go"), proposal, *results])
    assert not summary.tool_calls
    assert summary.content == (
        "Here is what happened:\n- demo_list_files: a.txt\n- demo_delete_file (error): rejected\n"
        "- demo_book_trip: Booked Rome"
    )


@pytest.mark.parametrize("command", ["pending", "resume"])
@pytest.mark.parametrize("how", ["--db", "env"])
def test_a_missing_database_file_is_said_as_such_and_not_created(
    tmp_path: Path, command: str, how: str
) -> None:
    missing = tmp_path / "nowhere" / "threads.sqlite"
    args = ["--db", str(missing)] if how == "--db" else []

    result = run_cli(command, "--thread", "call-1234", *args, db=missing)

    assert result.returncode == 2, result.stdout
    assert f"no checkpoint database at {missing}" in result.stderr
    assert "the file does not exist" in result.stderr
    assert not missing.exists() and not missing.parent.exists()


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"comand": "python"}, "cannot tell the transport: give 'command' (stdio)"),
        ({"command": "python", "arg": ["-V"]}, "field 'arg': Extra inputs are not permitted"),
        ({"url": "http://127.0.0.1:1/mcp", "header": {}}, "field 'header': Extra inputs are not permitted"),
    ],
)
def test_a_misspelt_config_key_gets_a_did_you_mean(
    db: Path, tmp_path: Path, entry: dict[str, Any], expected: str
) -> None:
    config = write_json(tmp_path / "servers.json", {"mcpServers": {"x": entry}})
    (typo,) = [key for key in entry if key not in ("command", "url")]
    meant = {"comand": "command", "arg": "args", "header": "headers"}[typo]

    result = run_cli("tools", "--config", str(config), db=db)

    assert result.returncode == 2, result.stdout
    assert expected in result.stderr
    assert f"did you mean {meant!r}?" in result.stderr


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    result = subprocess.run(
        [sys.executable, "-m", "langgraph_mcp", "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=HANG_GUARD,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"langgraph-mcp {version('langgraph-mcp')}"


HEAVY = ("langgraph", "langchain_core", "mcp", "uvicorn")
"""Packages a typo must not wait for (bench/cli_startup.py has the timings)."""


@pytest.mark.parametrize(
    "case", ["help", "json-typo", "key-typo", "missing-db", "args-typo"], ids=lambda c: c
)
def test_input_is_checked_before_the_heavy_stack_is_imported(tmp_path: Path, case: str) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {"demo": {"command": "x"}')
    typo = write_json(tmp_path / "typo.json", {"mcpServers": {"demo": {"comand": "x"}}})
    argv, code = {
        "help": (["--help"], 0),
        "json-typo": (["tools", "--config", str(broken)], 2),
        "key-typo": (["tools", "--config", str(typo)], 2),
        "missing-db": (["pending", "--thread", "x", "--db", str(tmp_path / "none.sqlite")], 2),
        "args-typo": (["call", "demo_add", "--args", "{oops", "--db", str(tmp_path / "t.sqlite")], 2),
    }[case]

    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "langgraph_mcp", *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=TIMEOUT,
    )

    assert result.returncode == code, result.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY)
    assert not heavy, f"{case}: imported {heavy[:10]} before saying what was wrong"


def test_the_clis_own_threads_appear_in_audit(db: Path) -> None:
    """Issue 35 item 9: a thread the CLI ran has its decision records in the CLI's database (``audit --thread``)."""
    result = run_cli("call", "demo_add", "--args", '{"a": 2, "b": 3}', "--thread", "sums", db=db)
    assert result.returncode == 0, result.stdout + result.stderr
    audited = run_cli("audit", "--thread", "sums", "--json", db=db)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    [record] = json.loads(audited.stdout)
    assert (record["tool"], record["decided_by"], record["outcome"]) == ("add", "policy", "ran")
