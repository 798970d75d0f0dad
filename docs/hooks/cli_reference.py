"""An mkdocs hook: the CLI reference in ``cli.md``, generated from the argparse parser at build time.

``cli.md`` holds the line ``<!-- cli-reference -->``; the build replaces it with one section per command (and
per ``policy`` action), each the command's own ``--help`` text (the exit codes every command lists are shown
once, with the top command). Nothing is fetched: the parser is imported from
the checkout being built.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

MARKER = "<!-- cli-reference -->"
_ROOT = Path(__file__).resolve().parents[2]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help(parser: argparse.ArgumentParser, shared_epilog: str | None = None) -> str:
    """``parser``'s help, without the epilog every command repeats (shown once, with the top command)."""
    if shared_epilog is not None and parser.epilog == shared_epilog:
        parser.epilog = None
    return parser.format_help().rstrip()


def cli_reference() -> str:
    """Every command's ``--help``, as Markdown: one ``##`` section per command, ``###`` per action."""
    if str(_ROOT) not in sys.path:
        sys.path.insert(0, str(_ROOT))
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: the same width on every machine
    from langgraph_mcp.cli.app import build_parser

    parser = build_parser()
    parts = ["## `langgraph-mcp`", "", "```text", _help(parser), "```", ""]
    for name, command in _subcommands(parser).items():
        parts += [f"## `langgraph-mcp {name}`", "", "```text", _help(command, parser.epilog), "```", ""]
        for action, sub in _subcommands(command).items():
            help_text = _help(sub, parser.epilog)
            parts += [f"### `langgraph-mcp {name} {action}`", "", "```text", help_text, "```", ""]
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri != "cli.md":
        return markdown
    if MARKER not in markdown:
        raise PluginError(f"cli.md has no {MARKER} line: the generated CLI reference has nowhere to go")
    return markdown.replace(MARKER, cli_reference())
