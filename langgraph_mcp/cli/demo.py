"""``langgraph-mcp demo``: one agent turn over the bundled demo server, with a human in the loop.

The bundled server starts over stdio; the scripted model (no network, no API key) proposes three parallel
calls — a read-only one that just runs, a destructive one the approval gate asks about, and one whose server
asks for a travel date mid-call — and the full graph (agent → approval gate → one task per call →
``McpToolNode`` → agent) runs with SQLite checkpoints (a temporary database unless ``--db`` is given). Each
pause is answered from ``--answers``, by ``--yes`` (approve, fill forms with defaults or sample values, accept
URL requests) or in the terminal, and the transcript shows every message, every interrupt and how it was
answered.

``--model provider:model`` uses a real chat model through ``langchain.chat_models.init_chat_model`` instead
(needs the ``langchain`` package, the provider's integration package and its API key).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.cli.hints import report_pending
from langgraph_mcp.cli.models import demo_model
from langgraph_mcp.cli.render import RunView, server_target
from langgraph_mcp.cli.responders import AnswersFile, responder_chain
from langgraph_mcp.cli.runner import EXIT_FAILED, EXIT_OK, CliError, Session, drive, run_config
from langgraph_mcp.cli.store import ThreadRecord, new_thread_id, save_thread
from langgraph_mcp.errors import LangGraphMcpError
from langgraph_mcp.examples.demo_graph import build_graph
from langgraph_mcp.examples.scripted_model import DEMO_PROMPT, ScriptedChatModel, demo_call_ids
from langgraph_mcp.policy.policy import ApprovalPolicy

__all__ = ["cmd_demo"]


def cmd_demo(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Run the demo turn; exit 0 when done, 3 when left waiting for a human."""
    answers = AnswersFile.load(args.answers) if args.answers else None
    model = demo_model(args.model)
    scripted = isinstance(model, ScriptedChatModel)
    if answers is not None and scripted:
        answers.check_known(demo_call_ids())
    temp_dir: str | None = None
    if args.db:
        db = Path(args.db).expanduser()
    else:
        temp_dir = tempfile.mkdtemp(prefix="langgraph-mcp-demo-")
        db = Path(temp_dir) / "demo.sqlite"
    keep_db = False
    try:
        with Session() as session:
            servers = session.open_servers(None, db=db)

            async def start() -> tuple[list[McpTool], dict[str, Any]]:
                return await servers.list_tools(), servers.server_status("demo").as_dict()

            try:
                tools, status = session.loop.run(start())
            except LangGraphMcpError as exc:
                target = server_target(servers.spec("demo"))
                raise CliError(
                    f"the bundled demo server ({target}) did not start: {exc}", EXIT_FAILED
                ) from exc
            policy = ApprovalPolicy()
            graph = build_graph(
                servers,
                policy=policy,
                model=model,
                checkpointer=session.checkpointer(db),
                store=session.store(db),
            )
            thread_id = new_thread_id("demo")
            save_thread(db, ThreadRecord(thread_id, "demo", options={"model": args.model}))
            console.print(Rule("langgraph-mcp demo"))
            console.print(
                Text(
                    f"server demo: {len(tools)} tools, era {status.get('era')} "
                    f"({status.get('protocol_version')}); model: {args.model or 'scripted (offline)'}; "
                    f"thread {thread_id}; db {db}",
                    style="dim",
                )
            )
            responders = responder_chain(console, answers=answers, yes=args.yes, no_input=args.no_input)
            view = RunView(console, transcript=True, policy=policy, tools=tools)
            human = HumanMessage(content=DEMO_PROMPT, id="demo-prompt")
            view.messages([human])
            config: dict[str, Any] = run_config(thread_id)
            outcome = drive(session, graph, config, {"messages": [human]}, view, responders)
            if answers is not None:
                unused = [k for k, v in answers.entries.items() if v]
                if unused:
                    err.print(Text(f"answers file entries not used: {', '.join(unused)}", style="yellow"))
            if outcome.status == "pending":
                keep_db = True  # the thread lives there: `resume --db` needs it
                return report_pending(console, thread_id, db, outcome.pending)
            console.print(Rule("done"))
            return EXIT_OK
    finally:
        if temp_dir is not None and not keep_db:
            shutil.rmtree(temp_dir, ignore_errors=True)
