"""The bundled demo server (stdio), started only once ``N`` servers of one group have started: a start barrier.

Usage: ``barrier_server.py GROUP_DIR N``. On start it writes ``GROUP_DIR/<pid>`` (its start), then waits until
``N`` such files exist before it speaks MCP at all (no handshake before). So a group of ``N`` finishes starting
only if all ``N`` were started concurrently; a group that never reaches ``N`` never finishes starting (the
process gives up after ``GIVE_UP_SECONDS``, long after any test's hang guard).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

GIVE_UP_SECONDS = 600.0


def main() -> None:
    group, count = Path(sys.argv[1]), int(sys.argv[2])
    group.mkdir(parents=True, exist_ok=True)
    (group / str(os.getpid())).write_text(repr(time.time()))
    deadline = time.monotonic() + GIVE_UP_SECONDS
    while len(list(group.iterdir())) < count:  # the server's own wait, not a test's synchronisation
        if time.monotonic() > deadline:
            sys.exit(1)
        time.sleep(0.02)
    from langgraph_mcp.examples.demo_server import main as demo_main

    demo_main(["stdio"])


if __name__ == "__main__":
    main()
