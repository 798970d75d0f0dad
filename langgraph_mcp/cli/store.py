"""Where the CLI keeps paused threads: the SQLite checkpoint database and a small table of thread records.

LangGraph's checkpoints hold a thread's state and its pending interrupts, but not how to rebuild the graph
that made them (which server config, which policy, which model). ``resume`` and ``pending`` run in a new
process, so each thread the CLI starts gets a record in the same database file: the command that started it
and the paths and options needed to build the same graph again. Server configs are stored as paths, never
inlined, so headers and tokens in them do not end up at rest in the database.

The default database is ``<user data dir>/langgraph-mcp/threads.sqlite`` (``platformdirs``);
``LANGGRAPH_MCP_DB`` or ``--db`` override it.

The database also keeps the CLI's approval key (a random secret made on first use): a decision the gate signed in
one command proves itself to the tool node of the next (``resume`` runs in a new process, and a per-process key
would make the node ask again). ``LANGGRAPH_MCP_APPROVAL_KEY`` or the config's ``approval_key`` take precedence.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import platformdirs

__all__ = [
    "DB_ENV",
    "ThreadRecord",
    "approval_secret",
    "default_db_path",
    "list_threads",
    "load_thread",
    "new_thread_id",
    "save_thread",
]

DB_ENV = "LANGGRAPH_MCP_DB"
_TABLE = "langgraph_mcp_cli_threads"
_KEY_TABLE = "langgraph_mcp_cli_approval_key"

ThreadKind = Literal["call", "demo"]


@dataclass
class ThreadRecord:
    """How to rebuild the graph of one CLI thread in a new process."""

    thread_id: str
    kind: ThreadKind
    config: str | None = None
    """Absolute path of the server config file; ``None`` for the bundled demo server."""
    policy: str | None = None
    """Absolute path of the approval policy file; ``None`` for the default policy."""
    options: dict[str, Any] = field(default_factory=dict)
    """Command-specific: ``tool``/``args``/``tool_call_id`` for ``call``; ``model`` for ``demo``."""
    created: str = ""


def default_db_path() -> Path:
    """``$LANGGRAPH_MCP_DB``, else ``threads.sqlite`` in the per-user data directory."""
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("langgraph-mcp", appauthor=False)) / "threads.sqlite"


def new_thread_id(kind: str) -> str:
    return f"{kind}-{secrets.token_hex(4)}"


@contextmanager
def _connect(db: Path) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(db, timeout=30)) as conn, conn:
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {_TABLE} (thread_id TEXT PRIMARY KEY, kind TEXT NOT NULL, "
            "config TEXT, policy TEXT, options TEXT NOT NULL, created TEXT NOT NULL)"
        )
        yield conn


def save_thread(db: Path, record: ThreadRecord) -> None:
    """Store ``record`` (creating the database file and its directory if needed)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    record.created = record.created or datetime.now(UTC).isoformat(timespec="seconds")
    with _connect(db) as conn:
        conn.execute(
            f"INSERT OR REPLACE INTO {_TABLE} VALUES (?, ?, ?, ?, ?, ?)",
            (
                record.thread_id,
                record.kind,
                record.config,
                record.policy,
                json.dumps(record.options),
                record.created,
            ),
        )


def load_thread(db: Path, thread_id: str) -> ThreadRecord | None:
    """The record of ``thread_id``, or ``None`` (also when the database does not exist)."""
    if not db.exists():
        return None
    with _connect(db) as conn:
        row = conn.execute(
            f"SELECT thread_id, kind, config, policy, options, created FROM {_TABLE} WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
    if row is None:
        return None
    return ThreadRecord(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5])


def list_threads(db: Path) -> list[ThreadRecord]:
    """Every thread record, newest first."""
    if not db.exists():
        return []
    with _connect(db) as conn:
        rows = conn.execute(
            f"SELECT thread_id, kind, config, policy, options, created FROM {_TABLE} ORDER BY created DESC"
        ).fetchall()
    return [ThreadRecord(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows]


def approval_secret(db: Path) -> str:
    """The approval key's secret kept in ``db``, made (randomly, once) if it has none yet.

    ``INSERT OR IGNORE`` on a one-row table: two commands starting at once agree on the first secret written."""
    db.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(db, timeout=30)) as conn, conn:
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {_KEY_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), secret TEXT)"
        )
        conn.execute(f"INSERT OR IGNORE INTO {_KEY_TABLE} VALUES (1, ?)", (secrets.token_hex(32),))
        row = conn.execute(f"SELECT secret FROM {_KEY_TABLE} WHERE id = 1").fetchone()
    return str(row[0])
