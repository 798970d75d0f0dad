"""``langgraph-mcp policy check`` and ``policy explain``, run as subprocesses: exit codes and what they print."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from langgraph_mcp.policy.policy import ApprovalPolicy
from tests.support.helpers import HANG_GUARD

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "langgraph_mcp" / "examples" / "policy.toml"
ODD_SERVER = Path(__file__).resolve().parents[1] / "support" / "servers" / "odd_annotations_server.py"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "langgraph_mcp", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        env=env,
        check=False,
    )


@pytest.fixture
def demo_config(tmp_path: Path) -> Path:
    path = tmp_path / "servers.json"
    demo = {"command": sys.executable, "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"]}
    path.write_text(json.dumps({"mcpServers": {"demo": demo}}))
    return path


def test_the_shipped_example_policy_loads_and_passes_its_tests() -> None:
    policy = ApprovalPolicy.load(EXAMPLE)
    assert len(policy.tests) >= 5 and policy.test_failures() == []


def test_check_passes_the_example_policy() -> None:
    done = run_cli("policy", "check", str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    policy = ApprovalPolicy.load(EXAMPLE)
    assert f"{len(policy.rules)} rules, {len(policy.tests)} self-tests passed" in done.stdout


def test_check_runs_the_tests_against_the_real_listing(demo_config: Path) -> None:
    done = run_cli("policy", "check", str(EXAMPLE), "--config", str(demo_config))
    assert done.returncode == 0, done.stderr
    assert f"against {demo_config}" in done.stdout


def test_check_exits_2_naming_the_failing_test(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(
        EXAMPLE.read_text()
        + '\n[[tests]]\nname = "deletes run"\ncall = "demo_delete_file"\nargs = { path = "a.txt" }\n'
        'expect = "allow"\n'
    )
    done = run_cli("policy", "check", str(path))
    assert done.returncode == 2
    assert "FAILED tests[" in done.stderr and "('deletes run')" in done.stderr
    assert "expected allow, but the policy decided ask by rule 'destructive'" in done.stderr


def test_check_with_a_config_fails_a_test_whose_tool_no_server_publishes(
    tmp_path: Path, demo_config: Path
) -> None:
    path = tmp_path / "policy.toml"
    path.write_text('[[tests]]\ncall = "demo_nothing"\nexpect = "ask"\n')
    assert run_cli("policy", "check", str(path)).returncode == 0  # at load: a tool made from the test
    done = run_cli("policy", "check", str(path), "--config", str(demo_config))
    assert done.returncode == 2
    assert "publishes 'demo_nothing'" in done.stderr


def test_check_warns_about_implausible_annotations(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "odd": {"command": sys.executable, "args": [str(ODD_SERVER), "odd"]},
                    "bare": {"command": sys.executable, "args": [str(ODD_SERVER), "bare"]},
                }
            }
        )
    )
    policy = tmp_path / "policy.json"
    policy.write_text("{}")
    done = run_cli("policy", "check", str(policy), "--config", str(config))
    assert done.returncode == 0, done.stderr  # warnings, not failures
    assert "odd_delete_all (server 'odd', tool 'delete_all') is read-only, but its name says 'delete'" in (
        done.stderr
    )
    assert (
        "odd_peek (server 'odd', tool 'peek') declares both readOnlyHint and destructiveHint" in done.stderr
    )
    assert "every tool of server 'bare' is destructive (2 tools)" in done.stderr
    assert "odd_status" not in done.stderr and "server 'odd' is destructive" not in done.stderr


def test_check_exits_2_on_a_bad_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text('[[rules]]\nid = "x"\nverdict = "perhaps"\n')
    done = run_cli("policy", "check", str(path))
    assert done.returncode == 2
    assert "rules[0].verdict: Input should be 'allow', 'ask' or 'deny'" in done.stderr


def test_explain_prints_the_verdict_its_rule_and_the_rules_that_lost(demo_config: Path) -> None:
    done = run_cli(
        "policy",
        "explain",
        str(EXAMPLE),
        "--config",
        str(demo_config),
        "demo_delete_file",
        "--args",
        '{"path": "scratch/old.txt"}',
        "--configurable",
        "user_id=ann",
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "demo_delete_file  (server 'demo', tool 'delete_file', principal 'ann')" in out
    assert "verdict allow  scratch-deletes  scratch files are disposable" in out
    lost = out.split("matched but lost (precedence order):")[1]
    assert lost.index("destructive") < lost.index("hints:destructive")
    assert "rules     ask    destructive" in lost
    assert "built-in  ask    hints:destructive" in lost


def test_explain_reads_the_principal_from_configurable(demo_config: Path) -> None:
    args = ["policy", "explain", str(EXAMPLE), "--config", str(demo_config), "demo_reset_stats"]
    admin = run_cli(*args, "--configurable", "user_id=admin-ann")
    assert admin.returncode == 0, admin.stderr
    assert "principal 'admin-ann'" in admin.stdout and "verdict allow  admins-reset" in admin.stdout
    other = run_cli(*args, "--configurable", "user_id=bob")
    assert "verdict ask    destructive" in other.stdout
    assert "expires after 900 s" in other.stdout


def test_explain_a_locked_deny(demo_config: Path) -> None:
    done = run_cli(
        "policy",
        "explain",
        str(EXAMPLE),
        "--config",
        str(demo_config),
        "demo_read_file",
        "--args",
        '{"path": "../secrets"}',
    )
    assert done.returncode == 0, done.stderr
    assert "verdict deny   stay-in-workspace" in done.stdout
    assert "built-in  allow  hints:read-only" in done.stdout


def test_explain_needs_valid_args_json(demo_config: Path) -> None:
    done = run_cli(
        "policy", "explain", str(EXAMPLE), "--config", str(demo_config), "demo_echo", "--args", "[1]"
    )
    assert done.returncode == 2
    assert "--args must be a JSON object" in done.stderr


def test_explain_of_a_name_no_listed_server_publishes_is_an_error_with_a_did_you_mean(
    demo_config: Path,
) -> None:
    done = run_cli("policy", "explain", str(EXAMPLE), "--config", str(demo_config), "demo_delet_file")
    assert done.returncode == 2
    assert "No server in" in done.stderr and "'demo_delet_file'" in done.stderr
    assert "Did you mean: demo_delete_file" in done.stderr
    assert "allow" not in done.stdout  # never the non-MCP verdict a misspelt name used to get


def test_policy_check_imports_neither_langgraph_nor_the_mcp_sdks_transports() -> None:
    """What the command needs only: a venv with jupyter (tornado) or a server stack beside it costs it nothing."""
    probe = (
        "import sys\n"
        "from langgraph_mcp.cli.app import run\n"
        f"code = run(['policy', 'check', {str(EXAMPLE)!r}])\n"
        "print(code, sorted({m.split('.')[0] for m in sys.modules}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=HANG_GUARD, check=False
    )
    assert done.returncode == 0, done.stderr
    code, _, modules = done.stdout.strip().splitlines()[-1].partition(" ")
    assert code == "0"
    loaded = set(json.loads(modules.replace("'", '"')))
    heavy = {"langgraph", "langgraph_sdk", "mcp", "aiosqlite", "tornado", "IPython", "uvicorn", "starlette"}
    assert loaded & heavy == set()
    assert "langgraph_mcp" in loaded  # the probe did run the command
