"""The ``langgraph-mcp`` command: ``tools``, ``call``, ``pending``, ``resume`` and ``demo``.

Entry point ``main()`` (console script ``langgraph-mcp``, also ``python -m langgraph_mcp``). See
:mod:`langgraph_mcp.cli.app` for the exit codes. Nothing in the package imports the CLI.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    from langgraph_mcp.cli.app import run

    return run(argv)
