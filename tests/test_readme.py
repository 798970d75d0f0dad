"""The README's Python examples run as a new user runs them: pasted into a file, run with the venv's Python.

Extraction rule (for everyone who adds a README section):

* Every fenced block opened with exactly ```` ```python ```` is a **complete program**. It is written to
  ``example.py`` in an empty temporary directory and run as ``<venv python> example.py`` with the venv *not*
  activated (its ``bin`` directory removed from ``PATH``, no ``VIRTUAL_ENV``), so it must import everything it
  uses, start servers with ``sys.executable`` and end by running itself (``asyncio.run(main())``). It passes
  when it exits 0 within :data:`TIMEOUT` seconds.
* A block opened with ```` ```python fragment ```` is a piece of a larger program (it may use names defined
  elsewhere, or ``await`` at top level). It is not run, only compiled, so a syntax error still fails.
* Other languages (```` ```bash ````, ```` ```json ````) are not touched here.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
TIMEOUT = 90
_FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    line: int
    heading: str
    info: str
    code: str

    @property
    def label(self) -> str:
        return f"README.md:{self.line} ({self.heading})"


def readme_blocks(text: str) -> list[Block]:
    """Every fenced code block of ``text`` with its line number and the heading above it."""
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()]
        headings = re.findall(r"^#+ (.+)$", before, re.M)
        blocks.append(
            Block(
                line=before.count("\n") + 1,
                heading=headings[-1] if headings else "top",
                info=match.group("info").strip(),
                code=match.group("body"),
            )
        )
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
PROGRAMS = [b for b in BLOCKS if b.info == "python"]
FRAGMENTS = [b for b in BLOCKS if b.info.split()[:1] == ["python"] and b.info != "python"]


def _unactivated_env() -> dict[str, str]:
    """The environment of a shell where the venv was never activated."""
    venv_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p) != Path(venv_bin)
    )
    return env


def run_program(code: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    script = workdir / "example.py"
    script.write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, script.name],
        cwd=workdir,
        env=_unactivated_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_the_readme_has_a_complete_example_and_marks_the_rest_as_fragments() -> None:
    assert PROGRAMS, "README.md has no complete ```python example"
    unknown = [b.label for b in BLOCKS if b.info.startswith("python") and b not in PROGRAMS + FRAGMENTS]
    assert not unknown, (
        f"python blocks with an unknown marker (use ```python or ```python fragment): {unknown}"
    )


@pytest.mark.parametrize("block", PROGRAMS, ids=lambda b: f"line{b.line}")
def test_complete_example_runs_as_a_file(block: Block, tmp_path: Path) -> None:
    result = run_program(block.code, tmp_path)

    assert result.returncode == 0, (
        f"{block.label} failed when run as a file (exit {result.returncode}). Make it a complete program, "
        f"or mark it ```python fragment.\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
    )


@pytest.mark.parametrize("block", FRAGMENTS, ids=lambda b: f"line{b.line}")
def test_fragment_compiles(block: Block) -> None:
    compile(block.code, block.label, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def test_the_graph_example_pauses_twice_and_finishes_with_one_resume(tmp_path: Path) -> None:
    (graph_example,) = [
        b for b in PROGRAMS if "create_approval_gate" in b.code and "compat=True" not in b.code
    ]

    result = run_program(graph_example.code, tmp_path)

    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "waiting: approval for call_delete_file_1 - demo_delete_file" in out
    assert "waiting: elicitation for call_book_trip_1 - demo_book_trip" in out
    assert "question langgraph_mcp.examples.demo_server:ask_date - When do you want to travel to Rome?" in out
    assert "Deleted todo.txt" in out and "Booked Rome on 2026-12-24" in out


def test_fragment_marker_and_extraction_rule() -> None:
    text = "# A\n```python\nprint(1)\n```\n## B\n```python fragment\nawait x\n```\n```bash\nls\n```\n"
    blocks = readme_blocks(text)
    assert [(b.line, b.heading, b.info) for b in blocks] == [
        (2, "A", "python"),
        (6, "B", "python fragment"),
        (9, "B", "bash"),
    ]
