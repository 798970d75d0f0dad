"""The README's fast subset (``pytest -m "not slow"``) is defined in one place and says what it leaves out."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import SLOW_MODULES

ROOT = Path(__file__).resolve().parents[2]


def test_every_slow_module_exists() -> None:
    present = {path.name for path in (ROOT / "tests").rglob("test_*.py")}
    missing = sorted(SLOW_MODULES - present)
    assert not missing, f"SLOW_MODULES names test modules that do not exist (renamed?): {missing}"


def test_the_readme_offers_the_fast_subset_next_to_the_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tests_section = readme.split("Run the tests", 1)[1].split("## ", 1)[0]
    # The README says how long the whole run takes, so a newcomer knows what they start (the number is measured
    # and changes; that it is said is what this checks).
    assert re.search(r"about \d+ minutes on 2 cores", tests_section), tests_section[:200]
    assert '.venv/bin/python -m pytest -m "not slow"' in tests_section
