"""A stdio server's stderr: piped to a logger (or appended to a file), with its last lines kept for error messages."""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import threading
from pathlib import Path
from typing import IO

TAIL_LINES = 20
"""How many of the last stderr lines a start failure quotes."""


class StderrCapture:
    """One server process's stderr for one connection start; :meth:`tail` returns its last lines."""

    def __init__(self, server: str, target: str) -> None:
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
