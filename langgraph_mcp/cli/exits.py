"""The CLI's exit codes (see :mod:`langgraph_mcp.cli.app`), in a module of their own: a command that needs no
graph (``policy check``) reads them without importing LangGraph."""

from __future__ import annotations

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_PENDING", "EXIT_USAGE"]

EXIT_OK = 0
"""Done."""
EXIT_FAILED = 1
"""The tool call ended with an error result, a server could not be reached, or something unexpected failed."""
EXIT_USAGE = 2
"""Bad input: arguments, server config, policy, answers file, unknown tool or thread; ``tools --strict`` with
a failed server."""
EXIT_PENDING = 3
"""The thread is paused waiting for a human; ``langgraph-mcp resume --thread ID`` continues it."""
EXIT_INTERRUPTED = 130
"""Ctrl-C while the graph was running (not at a prompt)."""
EXIT_BROKEN_PIPE = 141
"""Standard output was closed before everything was written (``langgraph-mcp tools | head``): the command ends
quietly with the status a shell reports for a command killed by SIGPIPE (128 + 13), as ``yes | head -1`` does."""
