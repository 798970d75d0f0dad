"""The ``tools``, ``call``, ``pending`` and ``resume`` commands (``demo``: :mod:`langgraph_mcp.cli.demo`).

Each command takes the parsed arguments and the consoles and returns an exit code (see
:mod:`langgraph_mcp.cli.runner` for their meaning); failures with a clear message raise
:class:`~langgraph_mcp.cli.runner.CliError`.
"""

from __future__ import annotations

import argparse
import json
import secrets
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from rich.console import Console
from rich.text import Text

from langgraph_mcp.cli.hints import pending_hint, print_hint, report_pending, resume_hint
from langgraph_mcp.cli.inputs import db_path
from langgraph_mcp.cli.models import demo_model
from langgraph_mcp.cli.render import RunView, render_pending, render_tools, server_target
from langgraph_mcp.cli.responders import AnswersFile, responder_chain
from langgraph_mcp.cli.runner import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PENDING,
    EXIT_USAGE,
    CliError,
    Outcome,
    Session,
    build_call_graph,
    check_arguments,
    drive,
    known_calls,
    resolve_tool,
    run_config,
    state_messages,
    thread_state,
)
from langgraph_mcp.cli.store import ThreadRecord, load_thread, new_thread_id, save_thread
from langgraph_mcp.examples.demo_graph import build_graph
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.resume import pending_interrupts

__all__ = ["cmd_call", "cmd_pending", "cmd_resume", "cmd_tools", "load_policy"]


def _abs(path: str | None) -> str | None:
    return str(Path(path).expanduser().resolve()) if path else None


def load_policy(path: str | None) -> ApprovalPolicy:
    """The approval policy from ``--policy`` (a JSON file), or the default policy."""
    return ApprovalPolicy.load(path) if path else ApprovalPolicy()


# ------------------------------------------------------------------------------------------------ tools


def cmd_tools(args: argparse.Namespace, console: Console, err: Console) -> int:
    """A table per server (era, status or error; tools, hints, verdicts); ``--strict`` fails on errors."""
    policy = load_policy(args.policy)
    with Session() as session:
        servers = session.open_servers(args.config, on_connection_error="ignore")

        async def discover() -> tuple[list[Any], list[dict[str, Any]]]:
            tools = await servers.list_tools()
            return tools, [servers.server_status(name).as_dict() for name in servers.names]

        tools, statuses = session.loop.run(discover())
        targets = {name: server_target(servers.spec(name)) for name in servers.names}
        render_tools(console, statuses, tools, servers.report.skipped, policy, targets)
        failed = [s["server"] for s in statuses if s.get("error")]
    if failed:
        err.print(Text(f"{len(failed)} server(s) failed: {', '.join(failed)}", style="red"))
        return EXIT_USAGE if args.strict else EXIT_FAILED
    return EXIT_OK


# ------------------------------------------------------------------------------------------------ call


def _parse_args_json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"--args is not valid JSON ({exc.msg} at column {exc.colno}): {text}") from exc
    if not isinstance(value, dict):
        raise CliError(f"--args must be a JSON object of arguments, got {type(value).__name__}: {text}")
    return value


def _finish_call(console: Console, err: Console, record: ThreadRecord, db: Path, outcome: Outcome) -> int:
    if outcome.status == "pending":
        return report_pending(console, record.thread_id, db, outcome.pending)
    message = outcome.tool_message(str(record.options.get("tool_call_id")))
    if message is None:
        err.print(Text("The call ended without a result.", style="red"))
        return EXIT_FAILED
    return EXIT_FAILED if message.status == "error" else EXIT_OK


def cmd_call(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Run one tool call through the approval gate and the tool node, in a checkpointed thread."""
    call_args = _parse_args_json(args.args)
    policy = load_policy(args.policy)
    db = db_path(args)
    thread_id = args.thread or new_thread_id("call")
    if args.thread and load_thread(db, thread_id) is not None:
        raise CliError(
            f"thread {thread_id!r} already exists in {db}; continue it with `{resume_hint(thread_id, db)}`, "
            "or pick a new id"
        )
    with Session() as session:
        servers = session.open_servers(args.config, db=db)
        tool = resolve_tool(session, servers, args.tool)
        if tool is not None:
            check_arguments(tool, call_args)
        tool_call_id = f"call_{secrets.token_hex(6)}"
        record = ThreadRecord(
            thread_id,
            "call",
            config=_abs(args.config),
            policy=_abs(args.policy),
            options={"tool": args.tool, "args": call_args, "tool_call_id": tool_call_id},
        )
        graph = build_call_graph(servers, policy, session.checkpointer(db), session.store(db))
        save_thread(db, record)
        config = run_config(thread_id)
        console.print(Text.assemble(("thread ", "dim"), (thread_id, "bold"), (f"  ({db})", "dim")))
        view = RunView(console, transcript=False, policy=policy, tools=[tool] if tool is not None else [])
        request = {"name": args.tool, "args": call_args, "id": tool_call_id}
        outcome = drive(
            session,
            graph,
            config,
            {"messages": [], "request": request},
            view,
            responder_chain(console, no_input=args.no_input),
        )
        return _finish_call(console, err, record, db, outcome)


# ------------------------------------------------------------------------------------------ pending / resume


def _record(db: Path, thread_id: str) -> ThreadRecord:
    record = load_thread(db, thread_id)
    if record is None:
        raise CliError(f"no thread {thread_id!r} in {db} (give --db if it was started with another database)")
    return record


def _graph_for(
    session: Session, record: ThreadRecord, db: Path, args: argparse.Namespace
) -> tuple[CompiledStateGraph[Any, Any, Any, Any], ApprovalPolicy]:
    """The graph that made the thread, rebuilt from its record (``--config`` overrides the stored path)."""
    config = args.config or record.config
    policy = load_policy(record.policy)
    servers = session.open_servers(config, db=db)
    checkpointer = session.checkpointer(db)
    if record.kind == "demo":
        model = demo_model(record.options.get("model"))
        store = session.store(db)
        return build_graph(
            servers, policy=policy, model=model, checkpointer=checkpointer, store=store
        ), policy
    return build_call_graph(servers, policy, checkpointer, session.store(db)), policy


def cmd_pending(args: argparse.Namespace, console: Console, err: Console) -> int:
    """List what a thread waits for (typed), or ``--json`` for scripts."""
    db = db_path(args)
    record = _record(db, args.thread)
    with Session() as session:
        graph, _ = _graph_for(session, record, db, args)
        state = thread_state(session, graph, {"configurable": {"thread_id": args.thread}})
        pending = pending_interrupts(state)
    if args.json:
        console.print_json(
            data=[
                {
                    "interrupt_id": i.interrupt_id,
                    "kind": i.kind,
                    "tool_call_id": i.tool_call_id,
                    "payload": i.payload,
                }
                for i in pending
            ]
        )
        return EXIT_PENDING if pending else EXIT_OK
    if not pending:
        status = "finished" if not state.next else f"stopped before {', '.join(state.next)}"
        console.print(f"Thread {args.thread} has nothing pending ({status}).")
        return EXIT_OK
    console.print(
        Text.assemble(("Thread ", "bold"), (args.thread, "bold yellow"), f" ({record.kind}) waits for:")
    )
    for item in pending:
        console.print(render_pending(item))
        console.print(Text(f"    interrupt id: {item.interrupt_id}", style="dim"))
    print_hint(console, "Answer with:", resume_hint(args.thread, db))
    console.print(
        Text("  (add --answers FILE to answer from a JSON file, --no-input to only check)", style="dim")
    )
    return EXIT_PENDING


def cmd_resume(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Continue a paused thread in this (new) process: answers file entries first, then the terminal."""
    db = db_path(args)
    record = _record(db, args.thread)
    answers = AnswersFile.load(args.answers) if args.answers else None
    with Session() as session:
        graph, policy = _graph_for(session, record, db, args)
        config = run_config(args.thread)
        state = thread_state(session, graph, config)
        if not pending_interrupts(state) and not state.interrupts and not state.next:
            console.print(
                f"Thread {args.thread} is finished: nothing to resume (it ran to the end earlier).",
                soft_wrap=True,
            )
            print_hint(console, "See its state with:", pending_hint(args.thread, db))
            return EXIT_OK
        if answers is not None:
            answers.check_known(known_calls(state))
        tools = session.servers.cached_tools() if session.servers else []
        view = RunView(console, transcript=record.kind == "demo", policy=policy, tools=tools)
        view.mark_seen(state_messages(state))
        outcome = drive(
            session,
            graph,
            config,
            None,
            view,
            responder_chain(console, answers=answers, no_input=args.no_input),
            resume=True,
        )
        if answers is not None:
            unused = [k for k, v in answers.entries.items() if v]
            if unused:
                err.print(Text(f"answers file entries not used: {', '.join(unused)}", style="yellow"))
        if record.kind == "demo":
            if outcome.status == "pending":
                return report_pending(console, record.thread_id, db, outcome.pending)
            return EXIT_OK
        if outcome.status == "done":
            message = outcome.tool_message(str(record.options.get("tool_call_id")))
            if message is not None and message.tool_call_id not in view.printed_results:
                view.tool_result(message)
        return _finish_call(console, err, record, db, outcome)


# ------------------------------------------------------------------------------------------ auth


def cmd_auth(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``auth list`` / ``auth revoke``: the OAuth records the CLI's runs keep in the store of ``--db``."""
    import sqlite3
    from contextlib import closing
    from datetime import UTC, datetime

    from langgraph.store.sqlite import SqliteStore

    from langgraph_mcp.connection.oauth import (
        OAUTH_RECORD_KEYS,
        oauth_namespace,
        revoke_at_server,
        token_summary,
    )
    from langgraph_mcp.credentials import label_value

    db = db_path(args)
    if not db.exists():
        console.print(f"No sign-ins: {db} does not exist yet.")
        return EXIT_OK
    with closing(sqlite3.connect(db, check_same_thread=False, isolation_level=None)) as conn:
        store = SqliteStore(conn)
        store.setup()
        prefix = (
            oauth_namespace(args.server, args.principal) if args.principal else oauth_namespace(args.server)
        )
        namespaces = store.list_namespaces(prefix=prefix, limit=10_000)
        if not namespaces:
            who = f" for {args.principal!r}" if args.principal else ""
            console.print(f"No sign-ins to MCP server {args.server!r}{who} in {db}.")
            return EXIT_OK
        failed = EXIT_OK
        for namespace in namespaces:
            principal = label_value(namespace[-1])
            if args.action == "revoke":
                tokens, client = store.get(namespace, "tokens"), store.get(namespace, "client")
                problems = revoke_at_server(
                    tokens.value if tokens is not None else None, client.value if client is not None else None
                )
                for key in OAUTH_RECORD_KEYS:
                    store.delete(namespace, key)
                endpoint = ((tokens.value if tokens else {}).get("oauth_metadata") or {}).get(
                    "revocation_endpoint"
                )
                where = (
                    f"; revoked at the authorization server ({endpoint})" if endpoint and not problems else ""
                )
                console.print(
                    f"revoked: {principal} (tokens, registration and any sign-in in progress deleted{where})"
                )
                for problem in problems:
                    failed = EXIT_FAILED
                    err.print(
                        f"{principal}: the authorization server did not confirm the revocation of the {problem}; "
                        "the token may stay valid there until it expires"
                    )
                continue
            item = store.get(namespace, "tokens")
            summary = token_summary(item.value if item is not None else None)
            if not summary:
                console.print(f"{principal}: no token (a sign-in may be in progress)")
                continue
            expires = summary["expires_at"]
            when = datetime.fromtimestamp(expires, UTC).isoformat(timespec="seconds") if expires else "never"
            refresh = "refreshable" if summary["refreshable"] else "no refresh token"
            console.print(
                f"{principal}: scopes {' '.join(summary['scopes']) or '-'}; expires {when}; {refresh}"
            )
    return failed
