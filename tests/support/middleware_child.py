"""Helper for ``test_approval_middleware.py``'s restart test: one phase of a ``create_agent`` run per process.

    python -m tests.support.middleware_child DB THREAD ERA start
    python -m tests.support.middleware_child DB THREAD ERA resume '{"type": "reject", "message": "..."}'

The agent is ``create_agent(ScriptedChatModel, tools=await servers.get_tools(),
middleware=[McpApprovalMiddleware(servers)])`` over the bundled demo server (stdio, ``ERA``), checkpointed in
the SQLite file ``DB``. ``start`` runs the demo prompt until it pauses; ``resume`` reads what is pending from
the checkpoint, answers the approval with the given decision and the server's question (a get_tools() tool's
``mcp_elicitation``) with a date, in one ``resume_command``. The server logs what it runs to ``DEMO_EVENTS_FILE`` (set by the test). Prints
one JSON object: the pending interrupts (id, type, tool call id) and the ToolMessages (id, status, text).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_mcp import McpApprovalMiddleware, McpServers, pending_interrupts, resume_command
from langgraph_mcp.examples.scripted_model import ScriptedChatModel

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_files", {}),
    ("delete_file", {"path": "todo.txt"}),
    ("book_trip", {"destination": "Rome"}),
]

DATE = "2026-12-24"


def _text(message: ToolMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)


async def main(db: str, thread: str, era: str, phase: str, decision: str | None) -> None:
    servers = McpServers(
        {
            "demo": {
                "command": sys.executable,
                "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
                "mode": era,
                "env": {"DEMO_EVENTS_FILE": os.environ["DEMO_EVENTS_FILE"]},
            }
        }
    )
    try:
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            agent = create_agent(
                ScriptedChatModel(tool_calls=CALLS),
                tools=await servers.get_tools(),
                middleware=[McpApprovalMiddleware(servers)],
                checkpointer=saver,
            )
            config: Any = {"configurable": {"thread_id": thread}}
            if phase == "start":
                await agent.ainvoke({"messages": [HumanMessage("tidy up")]}, config)
            else:
                before = await agent.aget_state(config)
                assert decision is not None
                decisions, answers = {}, {}
                for item in pending_interrupts(before):
                    if item.kind == "approval":
                        decisions[item.tool_call_id] = json.loads(decision)
                    else:
                        (key,) = item.elicitation["requests"]
                        answers[item.tool_call_id] = {key: {"action": "accept", "content": {"date": DATE}}}
                command = resume_command(before, decisions=decisions, answers=answers)
                await agent.ainvoke(command, config)
            state = await agent.aget_state(config)
            print(
                json.dumps(
                    {
                        "resumed": [i.id for i in before.interrupts] if phase == "resume" else [],
                        "pending": [
                            {"id": i.id, "type": i.value["type"], "tool_call_id": i.value["tool_call_id"]}
                            for i in state.interrupts
                        ],
                        "tool_messages": [
                            {"id": m.tool_call_id, "status": m.status, "text": _text(m)}
                            for m in state.values["messages"]
                            if isinstance(m, ToolMessage)
                        ],
                    }
                )
            )
    finally:
        await servers.aclose()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5], sys.argv[5] if len(sys.argv) > 5 else None))
