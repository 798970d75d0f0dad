"""A hand-written stdio MCP server (stdlib only) that speaks both eras and answers ``tools/call`` of ``deep`` with
a JSON line nested deeper than any recursive parser reads (valid JSON); ``ping`` answers ``pong``.

``server/discover`` gets a 2026-07-28 answer (``modern`` argument) or -32601 (``legacy``: the client falls back to
``initialize``). Starts in milliseconds.
"""

from __future__ import annotations

import json
import sys

ERA = sys.argv[1] if len(sys.argv) > 1 else "modern"
LEVELS = 100_000
TOOLS = [
    {"name": name, "description": f"Answer {name}.", "inputSchema": {"type": "object", "properties": {}}}
    for name in ("ping", "deep")
]
MODERN_EXTRA = {"resultType": "complete"}


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request_id: object, value: dict[str, object]) -> None:
    if ERA == "modern":
        value = {**value, **MODERN_EXTRA}
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def deep_answer(request_id: object) -> None:
    # Built as text: json.dumps itself would hit Python's recursion limit.
    head = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1]
    value = "[" * LEVELS + "]" * LEVELS
    extra = ', "resultType": "complete"' if ERA == "modern" else ""
    body = '{"content": [], "structuredContent": {"x": ' + value + "}" + extra + "}"
    sys.stdout.write(head + ', "result": ' + body + "}\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    request_id, method = message["id"], message.get("method")
    params = message.get("params") or {}
    if method == "server/discover" and ERA == "modern":
        result(
            request_id,
            {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "deep-answer", "version": "1.0.0"}},
            },
        )
    elif method == "initialize" and ERA == "legacy":
        info = {"name": "deep-answer", "version": "1.0.0"}
        result(
            request_id, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
        )
    elif method == "tools/list":
        extra = {"ttlMs": 0, "cacheScope": "private"} if ERA == "modern" else {}
        result(request_id, {"tools": TOOLS, **extra})
    elif method == "tools/call" and params.get("name") == "deep":
        deep_answer(request_id)
    elif method == "tools/call" and params.get("name") == "ping":
        result(request_id, {"content": [{"type": "text", "text": "pong"}], "isError": False})
    elif method == "ping":
        result(request_id, {})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
