"""A hand-written stdio MCP server (stdlib only, no SDK) with the faults third-party servers have, one per mode.

Speaks the legacy handshake (refuses ``server/discover`` with -32601 so an ``auto`` client falls back to
``initialize``), lists one tool ``ping`` and answers it ``pong`` — except where the mode says otherwise:

* ``late_banner`` — on ``tools/list`` prints a log line to stdout, waits 0.8 s, then answers.
* ``garbage_call`` — answers ``tools/call`` with a JSON-RPC object that is not a valid response.
* ``endless_pages`` — every ``tools/list`` page has a new ``nextCursor``.
* ``same_cursor`` — every ``tools/list`` page has the same ``nextCursor``.
"""

from __future__ import annotations

import json
import sys
import time

MODE = sys.argv[1]
PING = {"name": "ping", "description": "Answer pong.", "inputSchema": {"type": "object", "properties": {}}}


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request_id: object, value: dict[str, object]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    request_id, method = message["id"], message.get("method")
    params = message.get("params") or {}
    if method == "initialize":
        info = {"name": f"faulty-{MODE}", "version": "1.0.0"}
        result(
            request_id, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
        )
    elif method == "tools/list" and MODE == "late_banner":
        print("faulty server: listing tools (a log line on stdout)", flush=True)
        time.sleep(0.8)
        result(request_id, {"tools": [PING]})
    elif method == "tools/list" and MODE in ("endless_pages", "same_cursor"):
        cursor_in = str(params.get("cursor") or "0")
        page = int(cursor_in) if cursor_in.isdigit() else 0
        cursor = "again" if MODE == "same_cursor" else str(page + 1)
        result(request_id, {"tools": [{**PING, "name": f"ping{page}"}], "nextCursor": cursor})
    elif method == "tools/list":
        result(request_id, {"tools": [PING]})
    elif method == "tools/call" and MODE == "garbage_call":
        send({"jsonrpc": "2.0", "id": request_id, "result": "not an object"})
    elif method == "tools/call" and params.get("name") == "ping":
        result(request_id, {"content": [{"type": "text", "text": "pong"}], "isError": False})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
