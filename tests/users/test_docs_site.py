"""The documentation site builds offline with ``mkdocs build --strict``, and its references are complete: the API
reference documents every public name of ``langgraph_mcp.__all__``, the CLI reference every command."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import langgraph_mcp
from tests.support.helpers import HANG_GUARD

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
_DIRECTIVE = re.compile(r"^::: (?P<path>[\w.]+)\s*$", re.M)


def documented() -> dict[str, object]:
    """Every ``::: module.Name`` of the API reference pages, with the object it names."""
    found: dict[str, object] = {}
    for page in sorted(REFERENCE.glob("*.md")):
        for match in _DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            module, _, name = match.group("path").rpartition(".")
            found[match.group("path")] = getattr(importlib.import_module(module), name)
    return found


def test_the_api_reference_documents_every_public_name() -> None:
    objects = documented()

    missing = [
        name
        for name in langgraph_mcp.__all__
        if not any(
            path.rsplit(".", 1)[1] == name and obj is getattr(langgraph_mcp, name)
            for path, obj in objects.items()
        )
    ]

    assert not missing, (
        f"public names with no `::: module.Name` line in docs/reference/*.md: {missing} (add each, under its home "
        "module, to the page of its group)"
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )
    assert result.returncode == 0, (
        f"mkdocs build --strict failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    )
    return out


def test_the_site_builds_strict_and_renders_each_public_name(site: Path) -> None:
    html = "\n".join(p.read_text(encoding="utf-8") for p in (site / "reference").rglob("index.html"))

    unrendered = [path for path in documented() if f'id="{path}"' not in html]

    assert not unrendered, f"API reference entries that rendered nothing: {unrendered}"
    assert not re.search(r":(class|func|meth|mod|data|attr):`", html), (
        "a Sphinx role reached the page as text"
    )


def test_the_cli_reference_has_every_command_s_help(site: Path) -> None:
    from langgraph_mcp.cli.app import build_parser

    page = (site / "cli" / "index.html").read_text(encoding="utf-8")
    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]

    missing = [name for name in commands.choices if f"<code>langgraph-mcp {name}</code>" not in page]

    assert not missing, f"commands with no section in the generated CLI reference: {missing}"
    assert "<!-- cli-reference -->" not in page
    for name, parser in commands.choices.items():
        for action in parser._actions:
            for option in action.option_strings:
                assert option in page, f"`langgraph-mcp {name}`'s {option} is missing from the CLI reference"


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\((?!https?://|#)([^)#\s]+)", readme)

    broken = [target for target in targets if not (ROOT / target).exists()]

    assert targets and not broken, f"README.md links to files that do not exist: {broken}"
