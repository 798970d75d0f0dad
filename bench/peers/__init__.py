"""Other MCP bridges, each measured in its own venv (``langchain-mcp-adapters`` pins ``mcp<2``).

``venv_python(name)`` builds ``bench/.venvs/<name>`` on first use (``python -m venv`` + ``pip install`` from the
configured package index). ``run_side(name, script, ...)`` runs ``bench/peers/<script>`` there and returns the JSON
it prints last, or ``{"error": ...}`` (the report then says so instead of a number). ``Worker`` keeps a peer
process open and runs its variants on request, so they interleave block by block with this process's own.
"""

from __future__ import annotations

import asyncio
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


class Worker:
    """A peer process that runs named variants on request: one JSON line in (``{"variant", "n"}``), one out
    (``{"seconds"}``). It announces ``{"ready": true, "variants": [...], ...}`` once set up."""

    def __init__(self, proc: asyncio.subprocess.Process, hello: dict[str, Any]) -> None:
        self.proc = proc
        self.hello = hello

    @classmethod
    async def start(cls, name: str, script: str, *args: str) -> Worker | str:
        """A ready worker, or why not (a venv that can't be built, a side that fails to start)."""
        try:
            python = venv_python(name)
        except subprocess.CalledProcessError as exc:
            return f"could not build the {name} venv: {(exc.stderr or exc.stdout or exc)!s:.300}"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        proc = await asyncio.create_subprocess_exec(
            str(python),
            str(PEERS_DIR / script),
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None
        while True:
            line = await asyncio.wait_for(proc.stdout.readline(), 120)
            if not line:
                assert proc.stderr is not None
                err = (await proc.stderr.read()).decode(errors="replace").strip()
                return f"{script} did not start: {err[-400:]}"
            if line.startswith(b"{"):
                return cls(proc, json.loads(line))

    async def run(self, variant: str, n: int) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps({"variant": variant, "n": n}) + "\n").encode())
        await self.proc.stdin.drain()
        reply = json.loads(await asyncio.wait_for(self.proc.stdout.readline(), 600))
        if "error" in reply:
            raise RuntimeError(f"peer variant {variant!r} failed: {reply['error']}")
        return float(reply["seconds"])

    def variant(self, name: str) -> Any:
        async def go(n: int) -> float:
            return await self.run(name, n)

        return go

    async def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 30)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
