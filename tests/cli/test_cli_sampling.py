"""The CLI answers a server's sampling request, run as a subprocess (``python -m langgraph_mcp``) against the
sampling test server over stdio, in both eras: it shows the request (server, messages, system prompt, token
figures), takes approve / edit / reject from the terminal or an answers file, and a wrong answer leaves the thread
waiting under the same interrupt."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import run_cli, write_json
from tests.support.helpers import ERAS

SERVER = str(Path(__file__).parents[1] / "support" / "servers" / "sampling_server.py")
ARGS = json.dumps({"text": "a long story"})


def sampler_config(tmp_path: Path, mode: str, **options: object) -> Path:
    entry = {
        "command": sys.executable,
        "args": [SERVER],
        "mode": mode,
        "sampling_model": "scripted",
        **options,
    }
    return write_json(tmp_path / "servers.json", {"mcpServers": {"sampler": entry}})


def allow_policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text('[tools]\nsampler_summarize = "allow"\n')  # the test is about sampling, not approvals
    return path


@pytest.mark.parametrize("mode", ERAS)
def test_the_cli_shows_a_sampling_request_and_takes_an_edit_from_an_answers_file(
    tmp_path: Path, mode: str
) -> None:
    db = tmp_path / "threads.sqlite"
    config = sampler_config(tmp_path, mode, sampling_max_tokens=64)
    common = ["--config", str(config), "--policy", str(allow_policy(tmp_path))]
    paused = run_cli(
        "call", "sampler_summarize", *common, "--args", ARGS, "--thread", "t1", "--no-input", db=db
    )
    assert paused.returncode == 3, paused.stderr
    out = paused.stdout
    assert "paused sampling request by sampler_summarize" in out
    assert "server 'sampler' asks your model for a completion" in out
    assert "system prompt: You write one-line summaries." in out
    assert "[user] Summarize: a long story" in out
    assert "tokens: up to 64 (the server asked for 5000)" in out
    assert "summary:" not in out  # nothing ran before the human said so

    wrong = write_json(tmp_path / "wrong.json", {"sampler_summarize": {"type": "edit"}})
    refused = run_cli("resume", "--thread", "t1", "--answers", str(wrong), "--no-input", db=db)
    assert refused.returncode == 2
    assert "answers file" in refused.stderr and "'sampler_summarize'" in refused.stderr
    assert "messages" in refused.stderr  # says what an edit needs
    still = run_cli("pending", "--thread", "t1", db=db)
    assert still.returncode == 3 and "paused sampling request by sampler_summarize" in still.stdout

    edit = {
        "type": "edit",
        "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize briefly"}}],
    }
    answers = write_json(tmp_path / "answers.json", {"sampler_summarize": edit})
    done = run_cli("resume", "--thread", "t1", "--answers", str(answers), "--no-input", db=db)
    assert done.returncode == 0, done.stderr
    assert 'answered edit prompt="Summarize briefly"' in done.stdout
    assert "summary: Scripted reply to: Summarize briefly" in done.stdout


@pytest.mark.parametrize("mode", ERAS)
def test_the_cli_asks_in_the_terminal_approve_and_reject(tmp_path: Path, mode: str) -> None:
    db = tmp_path / "threads.sqlite"
    common = ["--config", str(sampler_config(tmp_path, mode)), "--policy", str(allow_policy(tmp_path))]
    approved = run_cli("call", "sampler_summarize", *common, "--args", ARGS, stdin="approve\n", db=db)
    assert approved.returncode == 0, approved.stderr
    assert "answered approve  (you)" in approved.stdout
    assert "summary: Scripted reply to: Summarize: a long story" in approved.stdout
    rejected = run_cli(
        "call", "sampler_summarize", *common, "--args", ARGS, stdin="reject\nnot today\n", db=db
    )
    assert rejected.returncode == 1  # the call ended with an error result
    assert 'answered reject message="not today"  (you)' in rejected.stdout
    assert "Scripted reply" not in rejected.stdout


@pytest.mark.parametrize("mode", ERAS)
def test_the_cli_shows_the_completion_for_review_and_sends_the_edited_text(tmp_path: Path, mode: str) -> None:
    db = tmp_path / "threads.sqlite"
    config = sampler_config(tmp_path, mode, review_completion=True)
    common = ["--config", str(config), "--policy", str(allow_policy(tmp_path))]
    paused = run_cli(
        "call", "sampler_summarize", *common, "--args", ARGS, "--thread", "t2", stdin="approve\n", db=db
    )
    assert paused.returncode == 3, paused.stderr  # the request approved; the completion waits (end of input)
    out = paused.stdout
    assert "paused completion review for sampler_summarize" in out
    assert "your model (ScriptedSamplingModel) answered server 'sampler'" in out
    assert "completion: Scripted reply to: Summarize: a long story" in out
    answers = write_json(tmp_path / "answers.json", {"sampler_summarize": {"type": "edit", "text": "Short."}})
    done = run_cli("resume", "--thread", "t2", "--answers", str(answers), "--no-input", db=db)
    assert done.returncode == 0, done.stderr
    assert 'answered edit text="Short."  (answers file)' in done.stdout
    assert "summary: Short." in done.stdout


def test_yes_approves_sampling_requests_and_completions() -> None:
    from langgraph_mcp.cli.responders import AutoResponder
    from langgraph_mcp.questions.resume import PendingMcpInterrupt

    request = {"type": "mcp_sampling", "tool_call_id": "c1", "server": "sampler", "published_name": "s_x"}
    review = {**request, "type": "mcp_sampling_review", "completion": "text"}
    for kind, payload in (("sampling", request), ("sampling_review", review)):
        item = PendingMcpInterrupt("a" * 32, kind, "c1", payload)  # type: ignore[arg-type]
        reply = AutoResponder().reply(item)
        assert reply is not None and reply.value == {"type": "approve"} and reply.how == "--yes"
