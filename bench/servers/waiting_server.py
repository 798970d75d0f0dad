"""A stdio MCP server whose start is waiting, not CPU: it sleeps ``WAIT_SECONDS`` before it reads its first message.

Usage: ``python bench/servers/waiting_server.py WAIT_SECONDS``. It speaks both eras (``server/discover`` at
2026-07-28, or the 2025-11-25 ``initialize`` handshake) with one tool, ``add``, in plain JSON-RPC over stdin/stdout:
no SDK import, so the interpreter's own start is a few ms of CPU and the start is the wait (a server that waits on
a database or a remote service before it serves). ``bench/p11_cold_start.py`` starts five of them at once.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SERVER_INFO = {"name": "waiting", "version": "1.0.0"}
INFO_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
ADD = {
    "name": "add",
    "description": "Add two integers.",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _call(params: dict[str, Any], modern: bool) -> dict[str, Any]:
    args = params.get("arguments") or {}
    if params.get("name") != "add":
        result: dict[str, Any] = {"content": [{"type": "text", "text": "unknown tool"}], "isError": True}
    else:
        result = {
            "content": [{"type": "text", "text": str(int(args["a"]) + int(args["b"]))}],
            "isError": False,
        }
    return {**result, "resultType": "complete", "_meta": INFO_META} if modern else result


def _answer(method: str, params: dict[str, Any], modern: bool) -> dict[str, Any] | None:
    if method == "server/discover":
        return {
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {"listChanged": False}},
            "cacheScope": "private",
            "ttlMs": 0,
            "resultType": "complete",
            "_meta": INFO_META,
        }
    if method == "initialize":
        return {
            "protocolVersion": LEGACY,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        }
    if method == "tools/list":
        return (
            {"tools": [ADD], "cacheScope": "private", "ttlMs": 0, "resultType": "complete"}
            if modern
            else {"tools": [ADD]}
        )
    if method == "tools/call":
        return _call(params, modern)
    if method == "ping":
        return {}
    return None


def main() -> None:
    time.sleep(float(sys.argv[1]))  # the server's own start: what this server is for
    modern = False
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None or method is None:
            continue  # a notification (initialized, cancelled) or a response: nothing to answer
        modern = modern or method == "server/discover"
        result = _answer(method, message.get("params") or {}, modern)
        if result is None:
            _send(
                {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}}
            )
        else:
            _send({"jsonrpc": "2.0", "id": ident, "result": result})


if __name__ == "__main__":
    main()
