"""The ``approvals list|revoke`` and ``audit`` commands: remembered decisions and the decision record in a store.

Both read a LangGraph store: ``--store DSN`` (a ``postgresql://`` DSN opens langgraph's ``PostgresStore``, which
needs ``langgraph-checkpoint-postgres`` and ``psycopg``; anything else is a SQLite file for langgraph's
``SqliteStore``, ``sqlite:///`` prefix optional), else ``$LANGGRAPH_MCP_STORE``, else the CLI's own database
(``--db``, ``$LANGGRAPH_MCP_DB``, the per-user default), where ``call``, ``demo`` and ``resume`` keep their store.
Give a graph's store the same way (the file or DSN its ``compile(store=...)`` uses) to manage what it remembers.

Exit codes: ``0`` done (``list``/``audit`` printed something, ``revoke`` deleted something); ``1`` nothing was
there (no remembered decision matched, no record of the thread); ``2`` bad input (no such store file, a
PostgreSQL DSN without the PostgreSQL packages, a store that cannot be opened).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore
from rich.console import Console
from rich.text import Text

from langgraph_mcp.approval.audit import audit_records
from langgraph_mcp.approval.memory import StoredApproval, list_approvals, revoke_approvals
from langgraph_mcp.cli.inputs import db_path
from langgraph_mcp.cli.runner import EXIT_FAILED, EXIT_OK, CliError
from langgraph_mcp.cli.store import approval_secret
from langgraph_mcp.payloads import RememberScope
from langgraph_mcp.policy.binding import APPROVAL_KEY_ENV, ApprovalKey

__all__ = ["STORE_ENV", "cmd_approvals", "cmd_audit", "open_store"]

STORE_ENV = "LANGGRAPH_MCP_STORE"
"""The store ``approvals`` and ``audit`` read when ``--store`` is not given."""


@contextmanager
def open_store(dsn: str | None, db: Path) -> Iterator[BaseStore]:
    """The store named by ``dsn`` (PostgreSQL DSN or SQLite path), else the one in the CLI's database ``db``."""
    dsn = dsn or os.environ.get(STORE_ENV) or None
    if dsn is not None and dsn.startswith(("postgres://", "postgresql://")):
        try:
            from langgraph.store.postgres import PostgresStore
        except ImportError as exc:
            raise CliError(
                f"--store {dsn.split('@')[-1]!r} is a PostgreSQL store, which needs langgraph's PostgreSQL "
                "packages: pip install langgraph-checkpoint-postgres 'psycopg[binary,pool]'"
            ) from exc
        try:
            with PostgresStore.from_conn_string(dsn) as pg_store:
                pg_store.setup()
                yield pg_store
        except CliError:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith("psycopg"):
                raise CliError(f"cannot open the PostgreSQL store: {exc}") from exc
            raise
        return
    from langgraph.store.sqlite import SqliteStore

    path = Path(dsn.removeprefix("sqlite:///")).expanduser() if dsn is not None else db
    if not path.is_file():
        given = "--store" if dsn is not None else "the CLI's database (give --store or --db)"
        raise CliError(f"no store at {str(path)!r} ({given}): the file does not exist")
    try:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    except sqlite3.Error as exc:
        raise CliError(f"cannot open the store in {str(path)!r}: {exc}") from exc
    with closing(conn):
        store = SqliteStore(conn)
        try:
            store.setup()
        except sqlite3.Error as exc:
            raise CliError(f"{str(path)!r} is not a usable SQLite store: {exc}") from exc
        yield store


def _scope(args: argparse.Namespace) -> tuple[RememberScope | None, str | None]:
    if args.principal is not None:
        return "principal", args.principal
    if args.thread is not None:
        return "thread", args.thread
    return None, None


def _when(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "?"
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def _key_here(args: argparse.Namespace) -> ApprovalKey:
    """The approval key remembered decisions are verified with here: ``LANGGRAPH_MCP_APPROVAL_KEY``, else (the CLI's
    own database, when it exists) that database's key, else this machine's."""
    db = db_path(args)
    if os.environ.get(APPROVAL_KEY_ENV) or args.store or os.environ.get(STORE_ENV) or not db.is_file():
        return ApprovalKey()
    return ApprovalKey(approval_secret(db))


def _row(approval: StoredApproval, verifiable: bool = True) -> Text:
    entry = approval.entry
    decision = str(entry.get("decision", "?"))
    text = Text()
    text.append(f"{approval.scope} {approval.owner}  ", style="bold")
    text.append(approval.key)
    text.append(f"  {decision}", style="green" if decision == "approve" else "red")
    args = "any args" if entry.get("args_digest") is None else f"args {str(entry['args_digest'])[:12]}"
    if entry.get("published_name"):
        args += f"; called {entry['published_name']}"
    text.append(
        f"  ({args}; definition {str(entry.get('definition_hash', '?'))[:12]}; rule {entry.get('rule') or '-'};"
        f" decided {_when(entry.get('decided_at'))} on call {entry.get('tool_call_id', '?')})"
    )
    if entry.get("owner_origin"):
        text.append(
            f"  principal {entry['owner_origin']}",
            style="yellow" if entry["owner_origin"] == "client" else "",
        )
    if entry.get("message"):
        text.append(f"  message: {entry['message']}")
    if not verifiable:
        text.append(
            f"  NOT VERIFIABLE HERE: signed with another approval key (or altered), so it is ignored; set "
            f"{APPROVAL_KEY_ENV} to the key that signed it",
            style="bold red",
        )
    return text


def _as_json(approval: StoredApproval) -> dict[str, Any]:
    return {
        "scope": approval.scope,
        "owner": approval.owner,
        "key": approval.key,
        "updated_at": approval.updated_at,
        **{k: v for k, v in approval.entry.items() if k not in ("signature", "key_id", "v")},
    }


def cmd_approvals(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``approvals list`` / ``approvals revoke``: the remembered decisions in a store."""
    scope, owner = _scope(args)
    if args.action == "revoke" and scope is None and not args.all:
        raise CliError("approvals revoke: say whose decisions: --principal ID, --thread ID, or --all")
    with open_store(args.store, db_path(args)) as store:
        if args.action == "list":
            found = list_approvals(store, scope=scope, owner=owner)
            found = [
                a
                for a in found
                if (args.server is None or a.entry.get("server") == args.server)
                and (args.tool is None or args.tool in (a.entry.get("tool"), a.entry.get("published_name")))
            ]
        else:
            found = revoke_approvals(
                store, scope=scope, owner=owner, server=args.server, tool=args.tool, key=args.key
            )
    key = _key_here(args) if args.action == "list" else None
    if args.json:
        console.print_json(
            json.dumps([{**_as_json(a), **({"verifiable": a.verifiable(key)} if key else {})} for a in found])
        )
    elif not found:
        console.print("No remembered decisions match." if args.action == "list" else "Nothing to revoke.")
    else:
        for approval in found:
            if args.action == "revoke":
                console.print(Text("revoked: ", style="bold red") + _row(approval), soft_wrap=True)
            else:
                console.print(_row(approval, key is None or approval.verifiable(key)), soft_wrap=True)
    return EXIT_OK if found else EXIT_FAILED


def cmd_audit(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``audit --thread ID``: the ``mcp_decision`` records a store audit sink kept for one thread."""
    with open_store(args.store, db_path(args)) as store:
        records = audit_records(store, args.thread)
    if args.json:
        console.print_json(json.dumps(records))
    elif not records:
        console.print(f"No decisions recorded for thread {args.thread!r}.")
    for record in [] if args.json else records:
        line = Text()
        line.append(f"{_when(record.get('recorded_at'))}  ")
        line.append(f"{record['tool_call_id']}  ", style="bold")
        line.append(f"{record['server'] or '-'}/{record['tool']}  ")
        line.append(f"{record['verdict']} by {record['decided_by']}")
        if record.get("decision"):
            line.append(f" ({record['decision']})")
        outcome = record["outcome"]
        line.append(f"  -> {outcome}", style="green" if outcome == "ran" else "red")
        line.append(f"  rule {record['rule'] or '-'}; principal {record['principal'] or '-'}")
        line.append(f"; args {record['args_digest'][:12]}")
        console.print(line, soft_wrap=True)
    return EXIT_OK if records else EXIT_FAILED
