"""Running a graph from the CLI: its resources (event loop, servers, SQLite checkpointer) and the pause loop.

:func:`drive` runs the graph until it finishes or pauses, shows what it waits for, gets a reply per pending
interrupt from the responders (answers file, ``--yes``, the terminal), resumes with one ``Command`` built by
:func:`langgraph_mcp.questions.resume.resume_command`, and repeats. A pause nobody answers (``--no-input``, Ctrl-C or
end of input at a prompt) leaves the thread pending in the database, to be resumed by ``langgraph-mcp resume``
in another process. Answers given before a Ctrl-C at a later prompt are kept: the thread is resumed with them
(the unanswered interrupts stay pending under the same ids) and stops at its next pause.

The graph runs on a private event loop in a background thread
(:class:`~langgraph_mcp.servers.sync.BackgroundLoop`, the class ``McpServers`` uses for its sync API) while
prompts block the main thread, so Ctrl-C at a prompt
stops right there.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import aiosqlite
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolCall, ToolMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.store.sqlite.aio import AsyncSqliteStore
from langgraph.types import StateSnapshot
from pydantic import SecretStr, ValidationError
from rich.text import Text

from langgraph_mcp.approval.audit import AUDIT_LOGGER, StoreAuditSink
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.cli.exits import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PENDING,
    EXIT_USAGE,
)
from langgraph_mcp.cli.models import with_sampling_models
from langgraph_mcp.cli.pending import PendingMcpInterrupt, Reply, command_for
from langgraph_mcp.cli.render import RunView, server_target
from langgraph_mcp.cli.responders import Responder, first_reply
from langgraph_mcp.cli.store import approval_secret
from langgraph_mcp.config import McpServersConfig
from langgraph_mcp.credentials import RUN_CONFIG
from langgraph_mcp.errors import (
    AnswerRefusedError,
    AuthorizationRequiredError,
    CliError,
    ResumeError,
    ToolNotFoundError,
    ToolOwnerUnknownError,
)
from langgraph_mcp.examples.demo_graph import DEMO_SERVER_CONFIG
from langgraph_mcp.graph.gate import create_approval_gate
from langgraph_mcp.graph.messages import last_ai_message
from langgraph_mcp.graph.node import McpToolNode, ToolCallRouter
from langgraph_mcp.policy.binding import APPROVAL_KEY_ENV
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.resume import pending_interrupts
from langgraph_mcp.questions.schemas import argument_problems
from langgraph_mcp.servers.mcp_servers import ConnectionErrorPolicy, McpServers
from langgraph_mcp.servers.sync import BackgroundLoop

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PENDING",
    "EXIT_USAGE",
    "CliError",
    "Outcome",
    "Session",
    "build_call_graph",
    "drive",
    "run_config",
]


# ------------------------------------------------------------------------------------------------ resources


class Session:
    """One command's resources: the background event loop, the MCP servers and the SQLite checkpointer."""

    def __init__(self) -> None:
        self.loop = BackgroundLoop("langgraph-mcp-cli")
        self.servers: McpServers | None = None
        self._conn: aiosqlite.Connection | None = None
        self._store_conn: aiosqlite.Connection | None = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open_servers(
        self,
        config: str | Path | None,
        *,
        db: Path | None = None,
        on_connection_error: ConnectionErrorPolicy = "raise",
    ) -> McpServers:
        """``McpServers`` for a config file (``None``: the bundled demo server). Raises ConfigError.

        With ``db`` (a command that runs a thread), decisions are signed with the key kept in that database
        unless the config or ``LANGGRAPH_MCP_APPROVAL_KEY`` names one: the thread's next command is another
        process, and its tool node must recognise what this one's gate signed."""
        loaded = McpServersConfig.load(config if config is not None else DEMO_SERVER_CONFIG)
        if db is not None and loaded.approval_key is None and not os.environ.get(APPROVAL_KEY_ENV):
            loaded = loaded.model_copy(update={"approval_key": SecretStr(approval_secret(db))})
        self.servers = McpServers(with_sampling_models(loaded), on_connection_error=on_connection_error)
        return self.servers

    def checkpointer(self, db: Path) -> AsyncSqliteSaver:
        """An ``AsyncSqliteSaver`` on ``db`` (created if needed), bound to this session's loop."""
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(
                f"cannot create the database directory {str(db.parent)!r}: {exc.strerror}"
            ) from exc

        async def open_saver() -> tuple[aiosqlite.Connection, AsyncSqliteSaver]:
            conn = await aiosqlite.connect(str(db))
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            return conn, saver

        try:
            self._conn, saver = self.loop.run(open_saver())
        except Exception as exc:
            raise CliError(f"cannot open the database {str(db)!r}: {exc}", EXIT_FAILED) from exc
        return saver

    def store(self, db: Path) -> AsyncSqliteStore:
        """The LangGraph store in ``db`` (OAuth tokens per principal: the next command, ``resume`` included,
        signs in with them), bound to this session's loop."""
        db.parent.mkdir(parents=True, exist_ok=True)

        async def open_store() -> tuple[aiosqlite.Connection, AsyncSqliteStore]:
            conn = await aiosqlite.connect(
                str(db), isolation_level=None
            )  # autocommit: the CLI's other writers
            store = AsyncSqliteStore(conn)
            await store.setup()
            return conn, store

        try:
            self._store_conn, store = self.loop.run(open_store())
        except Exception as exc:
            raise CliError(f"cannot open the store in {str(db)!r}: {exc}", EXIT_FAILED) from exc
        return store

    def close(self) -> None:
        async def shutdown() -> None:
            if self.servers is not None:
                await self.servers.aclose()
            if self._conn is not None:
                await self._conn.close()
            if self._store_conn is not None:
                await self._store_conn.close()
            # What is left on this private loop (the store's batching task) ends before the loop does.
            leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in leftover:
                task.cancel()
            await asyncio.gather(*leftover, return_exceptions=True)

        try:
            self.loop.run(shutdown())
        except (Exception, KeyboardInterrupt):
            pass
        finally:
            self.loop.close()


def _unreachable(servers: McpServers, server: str, detail: str) -> str:
    """One line: the server, where it is (its URL or command), and why it could not be reached."""
    return f"MCP server {server!r} ({server_target(servers.spec(server))}) could not be reached: {detail}"


def resolve_tool(session: Session, servers: McpServers, name: str) -> McpTool | None:
    """The tool published as ``name``, else a clear ``CliError`` (close matches, failed servers); ``None`` when
    its server needs a sign-in first (the run asks for it)."""
    try:
        return session.loop.run(servers.get_tool(name))
    except AuthorizationRequiredError:
        return None
    except ToolOwnerUnknownError as exc:  # a server that may publish it could not be listed
        lines = [
            f"No tool {name!r} could be found: the MCP server(s) that may publish it could not be reached."
        ]
        lines += [_unreachable(servers, s, detail) for s, detail in exc.servers.items()]
        raise CliError("\n".join(lines), EXIT_FAILED) from exc
    except ToolNotFoundError as exc:
        failed = servers.report.failed_servers
        if failed:
            lines = [str(exc)] + [_unreachable(servers, s, str(e)) for s, e in failed.items()]
            raise CliError("\n".join(lines), EXIT_FAILED) from exc
        names = [t.published_name for t in servers.cached_tools()]
        if not exc.close_matches:
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
            if close:
                raise CliError(f"{exc} Did you mean: {', '.join(close)}?") from exc
        raise CliError(str(exc)) from exc


def check_arguments(tool: McpTool, args: Mapping[str, Any]) -> None:
    """Check ``args`` against the tool's inputSchema before anything runs (clearer than a server error)."""
    try:
        problems = argument_problems(tool.input_schema, args)  # the gate's check: bounded, no server regex
    except Exception:  # an unusual schema: let the server judge
        return
    if problems:
        shown = "; ".join(
            f"{'.'.join(str(p) for p in e.path) or '(arguments)'}: {e.message}" for e in problems[:5]
        )
        raise CliError(f"--args do not match the inputSchema of {tool.published_name}: {shown}")


# ------------------------------------------------------------------------------------------------ call graph


class CallState(MessagesState):
    """State of the ``call`` graph: messages plus the one requested call."""

    request: dict[str, Any]


def build_call_graph(
    servers: McpServers,
    policy: ApprovalPolicy,
    checkpointer: AsyncSqliteSaver | None,
    store: BaseStore | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """START → propose (an AIMessage with the one call) → approval_gate → router → tools → END."""

    def propose(state: CallState) -> dict[str, list[BaseMessage]]:
        request = state["request"]
        call = ToolCall(name=request["name"], args=dict(request["args"]), id=request["id"], type="tool_call")
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    builder = StateGraph(CallState)
    builder.add_node("propose", propose)
    builder.add_node("approval_gate", create_approval_gate(servers, policy=policy))
    builder.add_node(
        "tools", McpToolNode(servers, policy=policy)
    )  # the node proves calls with the same policy
    builder.add_edge(START, "propose")
    builder.add_edge("propose", "approval_gate")
    builder.add_conditional_edges(
        "approval_gate", ToolCallRouter(node="tools", otherwise=END), ["tools", END]
    )
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=checkpointer, store=store, name="langgraph-mcp-call")


# ------------------------------------------------------------------------------------------------ driving


@dataclass
class Outcome:
    """How a drive ended: ``done`` (graph finished) or ``pending`` (left waiting for a human)."""

    status: Literal["done", "pending"]
    pending: list[PendingMcpInterrupt] = field(default_factory=list)
    messages: list[BaseMessage] = field(default_factory=list)

    def tool_message(self, tool_call_id: str) -> ToolMessage | None:
        for message in self.messages:
            if isinstance(message, ToolMessage) and message.tool_call_id == tool_call_id:
                return message
        return None


async def _segment(
    graph: CompiledStateGraph[Any, Any, Any, Any], value: Any, config: Any, view: RunView
) -> None:
    try:
        async for mode, chunk in graph.astream(value, config, stream_mode=["updates", "custom"]):
            if mode == "custom":
                if isinstance(chunk, Mapping) and chunk.get("type") == "mcp_progress":
                    view.progress_event(chunk)
            elif mode == "updates" and isinstance(chunk, Mapping):
                for node, update in chunk.items():
                    if node == "__interrupt__" or not isinstance(update, Mapping):
                        continue
                    messages = update.get("messages")
                    if isinstance(messages, list):
                        view.messages(messages)
    finally:
        view.end_segment()


def run_config(thread_id: str) -> dict[str, Any]:
    """A run's config: the thread, and whose run it is (``user_id``: ``--configurable user_id=...``, else the local
    user), so the approval gate can offer to remember a decision for that principal. Only the principal: other
    ``--configurable`` values (tokens) never go into the graph's config, which the checkpoint keeps."""
    given = (RUN_CONFIG.get() or {}).get("configurable") or {}
    configurable: dict[str, Any] = {"thread_id": thread_id}
    for key in ("langgraph_auth_user_id", "user_id"):
        if isinstance(given.get(key), str) and given[key]:
            configurable[key] = given[key]
    return {"configurable": configurable}


def thread_state(
    session: Session, graph: CompiledStateGraph[Any, Any, Any, Any], config: Any
) -> StateSnapshot:
    return session.loop.run(graph.aget_state(config, subgraphs=True))


def state_messages(state: StateSnapshot) -> list[BaseMessage]:
    values = state.values if isinstance(state.values, Mapping) else {}
    return list(values.get("messages") or [])


def known_calls(state: StateSnapshot) -> dict[str, str]:
    """``published name -> tool_call_id`` of the last AI message's calls (what an answers file may name)."""
    ai = last_ai_message(cast(list[AnyMessage], state_messages(state)))
    return {call["name"]: call.get("id") or "" for call in (ai.tool_calls if ai else [])}


def drive(
    session: Session,
    graph: CompiledStateGraph[Any, Any, Any, Any],
    config: Any,
    first_input: Any,
    view: RunView,
    responders: Sequence[Responder],
    *,
    resume: bool = False,
) -> Outcome:
    """Run a thread with ``first_input`` until it finishes or nobody answers what it waits for.

    ``resume=True`` starts from the thread's saved state instead (``first_input`` is ignored): answer what is
    pending, or continue a run that stopped between steps. Every decision record goes to the graph's store (the
    CLI's database), so ``langgraph-mcp audit --thread ID`` shows the CLI's own threads.
    """
    level, propagate = AUDIT_LOGGER.level, AUDIT_LOGGER.propagate
    sink = StoreAuditSink.install()
    AUDIT_LOGGER.propagate = False  # into the store, not onto the terminal
    try:
        return _drive(session, graph, config, first_input, view, responders, resume=resume)
    finally:
        AUDIT_LOGGER.removeHandler(sink)
        AUDIT_LOGGER.setLevel(level)
        AUDIT_LOGGER.propagate = propagate


def _drive(
    session: Session,
    graph: CompiledStateGraph[Any, Any, Any, Any],
    config: Any,
    first_input: Any,
    view: RunView,
    responders: Sequence[Responder],
    *,
    resume: bool,
) -> Outcome:
    value: Any = first_input
    run = not resume
    shown: set[str] = set()
    sent: dict[str, Any] = {}
    refused: dict[str, list[Any]] = {}
    while True:
        if run:
            try:
                session.loop.run(_segment(graph, value, config, view))
            except (ValidationError, AnswerRefusedError) as exc:  # refused before it was saved: ask again
                words = refusal_words(exc)
                view.console.print(
                    Text(f"The graph refused that answer (nothing was saved): {words}", style="red")
                )
                view.console.print(Text("Answer again.", style="dim"))
                for interrupt_id, answer in sent.items():
                    refused.setdefault(interrupt_id, []).append(answer)
                value, run, sent = None, False, {}
                continue
        state = thread_state(session, graph, config)
        messages = state_messages(state)
        view.messages(messages)
        pending = pending_interrupts(state)
        if not pending:
            if state.interrupts:
                raise CliError(
                    "the thread waits on interrupts that are not MCP approvals or elicitations; "
                    "the CLI cannot answer them",
                    EXIT_FAILED,
                )
            if not run and state.next:  # stopped between steps (e.g. Ctrl-C while running): carry on
                value, run = None, True
                continue
            return Outcome("done", [], messages)
        replies: dict[str, Reply] = {}
        stopped = False
        try:
            for item in pending:
                if item.interrupt_id not in shown:
                    shown.add(item.interrupt_id)
                    view.interrupt(item)
                reply = first_reply(responders, item)
                if reply is not None:
                    replies[item.interrupt_id] = reply
                    view.answered(item, reply)
        except (KeyboardInterrupt, EOFError):
            view.console.print()
            stopped = True
        if not replies:
            return Outcome("pending", pending, messages)
        if refused and all(r.value in refused.get(i, []) for i, r in replies.items()):
            # the same answers the graph refused already: asking again would loop
            raise CliError("the graph refused these answers before (nothing was saved); give other answers")
        sent = {i: r.value for i, r in replies.items()}
        try:
            value = command_for(pending, replies)
        except ResumeError as exc:
            raise CliError(str(exc)) from exc
        if (
            stopped
        ):  # keep what was answered before the stop: save it, run to the next pause, ask nothing more
            return _resume_once(session, graph, config, value, view)
        run = True


def refusal_words(exc: ValidationError | AnswerRefusedError) -> str:
    """What was wrong with a refused answer, in words: a card's refusal as it is, a pydantic error's messages
    without its model and error-type framing."""
    if isinstance(exc, AnswerRefusedError):
        return str(exc)
    return "; ".join(
        str(error.get("msg", "")).removeprefix("Value error, ") for error in exc.errors()
    ) or str(exc)


def _resume_once(
    session: Session, graph: CompiledStateGraph[Any, Any, Any, Any], config: Any, value: Any, view: RunView
) -> Outcome:
    """Resume with the answers given so far (the others stay pending, same ids) and stop at the next pause."""
    try:
        session.loop.run(_segment(graph, value, config, view))
    except (ValidationError, AnswerRefusedError) as exc:
        raise CliError(f"the graph refused an answer (nothing was saved): {refusal_words(exc)}") from exc
    state = thread_state(session, graph, config)
    messages = state_messages(state)
    view.messages(messages)
    pending = pending_interrupts(state)
    return Outcome("pending" if pending or state.next else "done", pending, messages)
