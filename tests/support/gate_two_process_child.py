"""Helper for ``test_resume.py``'s two-process test: a gated graph, a stdio demo server, a SQLite file.

``build_graph`` is shared with the test (which pauses the graph in its own process); run as a script it
resumes the paused thread in a fresh process::

    python gate_two_process_child.py DB_PATH THREAD_ID '{"decisions": {...}, "answers": {...}}'

It reads what is pending from the checkpoint (``pending_for_thread``), builds one ``Command`` with
``resume_command``, runs the graph until it ends or pauses again, and prints one JSON object on stdout: the
pending interrupts it found, the ones left, the ToolMessages, the AIMessage's tool calls, and the files of
its own server's workspace.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import tools_condition

from langgraph_mcp import McpServers, McpToolNode, ToolCallRouter
from langgraph_mcp.graph.gate import create_approval_gate
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.resume import pending_for_thread, pending_interrupts, resume_command

CALLS: list[Any] = [
    {"name": "demo_delete_file", "args": {"path": "todo.txt"}, "id": "c-delete", "type": "tool_call"},
    {
        "name": "demo_write_file",
        "args": {"path": "etc/x", "content": "x"},
        "id": "c-write",
        "type": "tool_call",
    },
    {"name": "demo_book_trip", "args": {"destination": "Oslo"}, "id": "c-trip", "type": "tool_call"},
]


def stdio_servers() -> McpServers:
    return McpServers(
        {"demo": {"command": sys.executable, "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"]}}
    )


def agent(state: MessagesState) -> dict[str, list[AnyMessage]]:
    if any(isinstance(m, AIMessage) for m in state["messages"]):
        return {"messages": [AIMessage("done")]}
    return {"messages": [AIMessage("", id="ai-1", tool_calls=CALLS)]}


def build_graph(servers: McpServers, checkpointer: SqliteSaver) -> CompiledStateGraph[Any, Any, Any, Any]:
    policy = ApprovalPolicy(ask_writes=True, tools={"demo_book_trip": "allow"})
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers, policy))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def main(db: str, thread_id: str, values: dict[str, Any]) -> dict[str, Any]:
    cfg: Any = {"configurable": {"thread_id": thread_id}}
    servers = stdio_servers()
    try:
        with sqlite3.connect(db, check_same_thread=False) as conn:
            graph = build_graph(servers, SqliteSaver(conn))
            found = pending_for_thread(graph, cfg)
            command = resume_command(found, decisions=values.get("decisions"), answers=values.get("answers"))
            out = graph.invoke(command, cfg)
        files = servers.run_sync(lambda: servers.call_tool("demo_list_files", {}))
        ai = next(m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls)
        return {
            "found": [[p.interrupt_id, p.kind, p.tool_call_id] for p in found],
            "left": [[p.interrupt_id, p.kind, p.tool_call_id] for p in pending_interrupts(out)],
            "tool_messages": {
                m.tool_call_id: [m.status, m.text] for m in out["messages"] if isinstance(m, ToolMessage)
            },
            "ai": {"id": ai.id, "calls": [[c["id"], c["args"]] for c in ai.tool_calls]},
            "files": files.structured_content,
        }
    finally:
        servers.close()


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))))
