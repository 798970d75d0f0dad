"""Other MCP bridges, each measured in its own venv (``langchain-mcp-adapters`` pins ``mcp<2``).

``run_side(name, script, ...)`` builds ``bench/.venvs/<name>`` on first use (``python -m venv`` + ``pip install``
from the configured package index), runs ``bench/peers/<script>`` there and returns the JSON it prints last, or
``{"error": ...}`` when the venv can't be built or the side fails (the report then says so instead of a number).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PEERS_DIR = Path(__file__).resolve().parent
VENVS_DIR = PEERS_DIR.parent / ".venvs"
REQUIREMENTS: dict[str, list[str]] = {
    "lma": ["langchain-mcp-adapters", "langgraph"],
    "lcmcp": ["langchain[mcp]", "langgraph", "langgraph-checkpoint-sqlite"],
}


def venv_python(name: str) -> Path:
    venv = VENVS_DIR / name
    python = venv / "bin" / "python"
    marker = venv / ".installed"
    wanted = " ".join(REQUIREMENTS[name])
    if marker.exists() and marker.read_text() == wanted:
        return python
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *REQUIREMENTS[name]],
        check=True,
        capture_output=True,
        text=True,
    )
    marker.write_text(wanted)
    return python


def run_side(name: str, script: str, *args: str, timeout: float = 600) -> dict[str, Any]:
    try:
        python = venv_python(name)
    except subprocess.CalledProcessError as exc:
        return {"error": f"could not build the {name} venv: {(exc.stderr or exc.stdout or exc)!s:.300}"}
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(
        [str(python), str(PEERS_DIR / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": f"{script} failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result
