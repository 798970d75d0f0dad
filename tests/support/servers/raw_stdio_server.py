"""A hand-written stdio MCP server (no SDK) that misbehaves the way third-party servers do.

It prints JSON-RPC lines by hand, refuses ``server/discover`` with -32601 (so an ``auto`` client falls back to
the ``initialize`` handshake, era 2025-11-25) and answers ``initialize`` properly. Then, by mode:

* ``deep [LEVELS]`` — answers ``tools/list`` with a tool whose inputSchema holds LEVELS (default 100,000)
  nested arrays: valid JSON that no recursive parser can read.
* ``banner`` — prints a non-JSON line on stdout at startup, then serves one tool, ``ping`` (answers ``pong``).

Every other request gets -32601. Starts in milliseconds (stdlib only).
"""

from __future__ import annotations

import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "deep"
LEVELS = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
PING = {"name": "ping", "description": "Answer pong.", "inputSchema": {"type": "object", "properties": {}}}


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request_id: object, value: dict[str, object]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def deep_tools_list(request_id: object) -> None:
    # Built as text: json.dumps itself would hit Python's recursion limit.
    head = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1]
    schema = '{"type": "object", "properties": {"x": ' + "[" * LEVELS + "]" * LEVELS + "}}"
    sys.stdout.write(head + ', "result": {"tools": [{"name": "deep", "inputSchema": ' + schema + "}]}}\n")
    sys.stdout.flush()


if MODE == "banner":
    print("raw server starting... (not JSON-RPC)", flush=True)

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue  # notifications (e.g. notifications/initialized)
    request_id, method = message["id"], message.get("method")
    if method == "initialize":
        info = {"name": f"raw-{MODE}", "version": "1.0.0"}
        capabilities: dict[str, object] = {"tools": {}}
        result(
            request_id, {"protocolVersion": "2025-11-25", "capabilities": capabilities, "serverInfo": info}
        )
    elif method == "tools/list" and MODE == "deep":
        deep_tools_list(request_id)
    elif method == "tools/list":
        result(request_id, {"tools": [PING]})
    elif method == "tools/call" and MODE == "banner" and message["params"]["name"] == "ping":
        result(request_id, {"content": [{"type": "text", "text": "pong"}], "isError": False})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
