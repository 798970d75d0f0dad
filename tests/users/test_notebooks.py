"""The tutorial notebooks run top to bottom in a real Jupyter kernel, and git stores them without outputs.

Each notebook is executed by ``nbclient`` in a fresh ``python3`` kernel (ipykernel's native kernelspec, which
jupyter_client launches with this interpreter, ``sys.executable``), with a temporary working directory. They
talk only to the bundled demo server (stdio subprocess or in-process): no network, no API key.
"""

from __future__ import annotations

import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
EXPECTED = [
    "01_quickstart.ipynb",
    "02_approval_gate.ipynb",
    "03_elicitation.ipynb",
    "04_persistence_and_studio.ipynb",
]
CELL_TIMEOUT = 120
"""Seconds per cell: generous for a loaded CI machine; each notebook takes well under 30 s normally."""
INTERPRETER_PROBE = "import sys\nprint(sys.executable)"
read_notebook: Any = nbformat.read  # nbformat is untyped
new_code_cell: Any = nbformat.v4.new_code_cell


def test_every_tutorial_notebook_is_present() -> None:
    assert sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb")) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED, ids=lambda n: n.split(".")[0])
def test_notebook_is_stored_without_outputs(name: str) -> None:
    nb = read_notebook(NOTEBOOK_DIR / name, as_version=4)
    nbformat.validate(nb)
    dirty = [
        index
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, f"{name}: cells {dirty} have outputs; run `python scripts/strip_notebooks.py`"


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPECTED, ids=lambda n: n.split(".")[0])
def test_notebook_runs_top_to_bottom_without_errors(name: str, tmp_path: Path) -> None:
    nb = read_notebook(NOTEBOOK_DIR / name, as_version=4)
    nb.cells.append(new_code_cell(INTERPRETER_PROBE))
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    started = time.monotonic()
    client.execute()  # raises CellExecutionError, naming the cell, on the first error
    elapsed = time.monotonic() - started

    errors = [
        o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs if o.output_type == "error"
    ]
    assert not errors
    probe = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    assert probe.strip() == sys.executable, "the notebook ran in another interpreter than the test's"
    print(f"{name}: {elapsed:.1f} s")


@pytest.mark.parametrize("name", EXPECTED, ids=lambda n: n.split(".")[0])
def test_notebook_says_what_it_needs_at_the_top(name: str) -> None:
    nb = read_notebook(NOTEBOOK_DIR / name, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert "**What you need:**" in first.source and '".[notebooks]"' in first.source


def test_the_notebooks_extra_installs_what_the_readme_line_runs() -> None:
    root = NOTEBOOK_DIR.parent
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {spec.split("[")[0].split(">")[0].split("=")[0].strip() for spec in extras["notebooks"]}
    assert {
        "jupyterlab",
        "ipykernel",
        "langgraph-cli",
    } <= names  # 04 imports the Studio factory (langgraph_sdk)
    assert (
        '.venv/bin/pip install -e ".[notebooks]" && .venv/bin/jupyter lab notebooks/'
        in (root / "README.md").read_text()
    )


def test_quickstart_does_not_say_plain_tools_lose_elicitation() -> None:
    # They don't: tests/calls/test_agent_tools.py and tests/graph/test_approval_middleware.py (a restart between the pause
    # and the answer) show get_tools() tools pausing on a server's question inside create_agent.
    nb = read_notebook(NOTEBOOK_DIR / "01_quickstart.ipynb", as_version=4)
    text = " ".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    assert "You lose what `McpToolNode` adds: elicitation" not in text
    assert "McpApprovalMiddleware" in text
