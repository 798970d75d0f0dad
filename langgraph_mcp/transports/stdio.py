"""The stdio transport: a server started as a subprocess speaking JSON-RPC over stdin/stdout.

A stdio server's stderr: piped to a logger (or appended to a file), with its last lines kept for error messages.
What a decision binds to: the command line, the working directory and the environment given (any of them can pick
another backend: ``env={"DB": "prod"}`` is not the server ``env={"DB": "staging"}`` was).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import shlex
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar, Literal, TextIO, cast

from pydantic import Field

from langgraph_mcp.transports.base import StartNotes, Transport, WatchStreams

if TYPE_CHECKING:
    from mcp import Client

TAIL_LINES = 20
"""How many of the last stderr lines a start failure quotes."""


class StdioServer(Transport):
    """A server started as a subprocess speaking JSON-RPC over stdin/stdout."""

    transport: Literal["stdio"] = "stdio"
    """Optional in a config file: a ``command`` says stdio."""
    command: str = Field(min_length=1)
    """The program to start (found on ``PATH``, or a path)."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] | None = None
    """Extra environment (merged over the SDK's minimal default environment: HOME, PATH, ...)."""
    cwd: str | None = None
    """The working directory to start it in (default: this process's)."""
    stderr: Literal["log"] | str = "log"
    """``log``: the child's stderr goes to the ``langgraph_mcp.server.<name>`` logger; else a file path."""

    recognized_by: ClassVar[str] = "'command' (stdio)"
    each_client_starts_a_server: ClassVar[bool] = True

    @classmethod
    def recognizes(cls, entry: Mapping[str, Any]) -> bool:
        return "command" in entry

    def binding(self) -> dict[str, Any]:
        # Where its stderr goes does not choose the backend; everything else given here may.
        return {"command": self.command, "args": list(self.args), "cwd": self.cwd, "env": self.env}

    def location(self) -> str:
        return command_line(self)

    def start_notes(self, server: str) -> StartNotes:
        return StderrCapture(server, self.stderr, command_line(self))

    def open_client(self, notes: StartNotes, watch: WatchStreams, common: dict[str, Any]) -> Client:
        from mcp import Client, StdioServerParameters  # the SDK on first use, not with the config
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=self.command, args=self.args, env=self.env, cwd=self.cwd)
        writer = cast(TextIO, notes.writer) if isinstance(notes, StderrCapture) else None
        transport = stdio_client(params, errlog=writer) if writer is not None else stdio_client(params)
        return Client(watch(transport), **common)


def command_line(spec: StdioServer) -> str:
    return shlex.join([spec.command, *spec.args])


class StderrCapture(StartNotes):
    """One server process's stderr for one connection start; :meth:`tail` returns its last lines."""

    def __init__(self, server: str, target: str, command: str = "") -> None:
        self._command = command
        self._lines: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._pump: threading.Thread | None = None
        self._file: Path | None = None
        self._file_start = 0
        if target != "log":
            self._file = Path(target)
            self.writer: IO[str] = self._file.open("a")
            self._file_start = self.writer.tell()
            return
        read_fd, write_fd = os.pipe()
        server_logger = logging.getLogger(f"langgraph_mcp.server.{server}")

        def pump() -> None:
            with os.fdopen(read_fd, errors="replace") as lines:
                for line in lines:
                    text = line.rstrip("\n")
                    self._lines.append(text)
                    server_logger.info("%s", text)

        self._pump = threading.Thread(target=pump, name=f"mcp-stderr:{server}", daemon=True)
        self._pump.start()
        self.writer = os.fdopen(write_fd, "w")

    def close(self) -> None:
        """Close our end; the pump thread ends once the child's end is closed too."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def tail(self, wait: float = 1.0) -> list[str]:
        """The last lines the server wrote, after waiting up to ``wait`` seconds for the pipe to drain.

        Call after :meth:`close` and after the process exited, so the pump has seen end-of-file.
        """
        if self._file is not None:
            with contextlib.suppress(OSError), self._file.open(errors="replace") as f:
                f.seek(self._file_start)
                return f.read().splitlines()[-TAIL_LINES:]
            return []
        if self._pump is not None:
            self._pump.join(wait)
        return list(self._lines)

    def explain(self) -> str:
        """For a stdio server that did not come up: its command line and the last lines it wrote to stderr."""
        text = f"; command: {self._command}"
        lines = self.tail()
        if lines:
            text += "; its stderr ended with:\n    " + "\n    ".join(lines)
        else:
            text += "; it wrote nothing to stderr"
        return text
