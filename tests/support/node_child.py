"""Child process for cross-process tests: run or resume a one-call graph on a SQLite checkpoint, print JSON.

Usage: python tests/support/node_child.py DB MODE TOOL ARGS_JSON EVENTS_FILE [RESUME_JSON]
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import aclosing
from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langgraph_mcp import McpServers
from tests.support.node_support import call, one_turn_graph, start, text_of, tool_messages


async def main(db: str, mode: str, tool: str, args: str, events: str, resume: str | None) -> None:
    spec = {
        "command": sys.executable,
        "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
        "env": {"DEMO_EVENTS_FILE": events},
        "mode": mode,
    }
    async with (
        aclosing(McpServers({"demo": spec})) as servers,
        AsyncSqliteSaver.from_conn_string(db) as saver,
    ):
        graph = one_turn_graph(servers, [call(tool, "c1", **json.loads(args))], saver)
        config = {"configurable": {"thread_id": "cross-process"}}
        value = Command(resume=json.loads(resume)) if resume else start()
        out = await graph.ainvoke(value, config)
    report = {
        "interrupts": [{"id": i.id, "value": i.value} for i in out.get("__interrupt__", [])],
        "messages": {k: {"status": m.status, "text": text_of(m)} for k, m in tool_messages(out).items()},
    }
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6], sys.argv[6] if len(sys.argv) > 6 else None))
