"""The peer side of ``bench.peers.Worker`` (stdlib only, imported by the peer scripts inside their own venvs)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any


async def serve(variants: dict[str, Callable[[int], Awaitable[None]]], hello: dict[str, Any]) -> None:
    """Announce the variants, then run ``{"variant", "n"}`` requests from stdin until it closes."""
    sys.stdout.write(json.dumps({"ready": True, "variants": list(variants), **hello}) + "\n")
    sys.stdout.flush()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        request = json.loads(line)
        try:
            began = time.perf_counter()
            await variants[request["variant"]](int(request["n"]))
            reply: dict[str, Any] = {"seconds": time.perf_counter() - began}
        except Exception as exc:  # the main process reports it instead of a number
            reply = {"error": repr(exc)[:500]}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
