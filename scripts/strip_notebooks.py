"""Strip outputs from the tutorial notebooks, so git stores only their source.

    python scripts/strip_notebooks.py            # strip notebooks/*.ipynb in place
    python scripts/strip_notebooks.py --check    # exit 1 and name the notebooks that still have outputs
    python scripts/strip_notebooks.py path.ipynb ...

Clears every code cell's outputs and execution count, and the per-cell and notebook metadata a Jupyter session
adds (execution timings, widget state); keeps cell ids, the kernelspec and the language info.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
KEEP_NOTEBOOK_METADATA = ("kernelspec", "language_info")
_read: Any = nbformat.read  # nbformat is untyped
_write: Any = nbformat.write


def strip(nb: Any) -> bool:
    """Strip ``nb`` in place; return True when anything changed."""
    changed = False
    for cell in nb.cells:
        if cell.get("metadata"):
            cell["metadata"] = {}
            changed = True
        if cell.cell_type != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            cell["outputs"] = []
            cell["execution_count"] = None
            changed = True
    extra = [key for key in nb.metadata if key not in KEEP_NOTEBOOK_METADATA]
    for key in extra:
        del nb.metadata[key]
    language_info = nb.metadata.get("language_info")
    if language_info and set(language_info) != {"name"}:
        nb.metadata["language_info"] = {"name": language_info.get("name", "python")}
        changed = True
    return changed or bool(extra)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: notebooks/*.ipynb)")
    parser.add_argument(
        "--check", action="store_true", help="report, don't write; exit 1 if any needs stripping"
    )
    args = parser.parse_args(argv)
    paths = args.paths or sorted(NOTEBOOKS.glob("*.ipynb"))
    dirty = []
    for path in paths:
        nb = _read(path, as_version=nbformat.NO_CONVERT)
        if strip(nb):
            dirty.append(path)
            if not args.check:
                _write(nb, path)
    for path in dirty:
        print(f"{'has outputs' if args.check else 'stripped'}: {path}")
    return 1 if args.check and dirty else 0


if __name__ == "__main__":
    sys.exit(main())
