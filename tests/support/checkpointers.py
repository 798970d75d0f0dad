"""The checkpointers the tests run graphs on: in memory, SQLite on a file, and strict msgpack.

"Strict" is what ``LANGGRAPH_STRICT_MSGPACK=true`` gives in the installed langgraph-checkpoint: a
``JsonPlusSerializer(allowed_msgpack_modules=None)``, which revives only langgraph's own safe types (messages, ``Send``,
``Interrupt``, ``Command``, datetimes, UUIDs, ...) and hands anything else back as its plain serialized data, with a
log line and a ``msgpack_blocked`` serde event. A payload that comes back as something other than what was saved would
break a resume quietly, so :class:`StrictSaver` reads with :class:`RefusingSerializer`, which raises
``AssertionError`` naming the type the moment it is refused (inside the ``ainvoke``/``get_state`` that read it). It
keeps the checkpoints in memory (the in-memory saver serializes every checkpoint and write just as SQLite does); it
is stricter than the environment variable in one respect, on purpose: ``compile()`` adds no allowlist from the
graph's schemas. A graph builder in a test module may make its own ``StrictSaver()`` where each graph needs a saver
of its own.

The ``checkpointer`` / ``sync_checkpointer`` fixtures (tests/conftest.py) give one of :data:`KINDS`: ``strict``
unless the test parametrizes it (``@pytest.mark.parametrize("checkpointer", KINDS, indirect=True)``) or the run asks
for others (``pytest --checkpointers=all`` or ``--checkpointers=memory,sqlite``). A test that restarts from a file
opens the same path twice with :func:`open_checkpointer` / :func:`open_sync_checkpointer`.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

KINDS = ("memory", "sqlite", "strict")
"""Every checkpointer a test can ask for: ``InMemorySaver``, (Async)SqliteSaver on a file, :class:`StrictSaver`."""

DEFAULT_KIND = "strict"
"""What the fixtures give when neither the test nor the run says otherwise."""


def strict_serde() -> JsonPlusSerializer:
    """The serializer ``LANGGRAPH_STRICT_MSGPACK=true`` makes: only langgraph's safe types are revived."""
    return JsonPlusSerializer(allowed_msgpack_modules=None)


class BlockedTypes:
    """Records the types a strict serializer refused to revive while it is open (``with BlockedTypes() as b``)."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._lock = threading.Lock()
        self._unregister: Any = None

    def _record(self, event: SerdeEvent) -> None:
        if event["kind"].endswith("_blocked"):
            name = f"{event['module']}.{event['name']}"
            if "method" in event:
                name += f".{event['method']}"
            with self._lock:
                self.seen.append(name)

    def __enter__(self) -> BlockedTypes:
        self._unregister = register_serde_event_listener(self._record)
        return self

    def __exit__(self, *exc: object) -> None:
        self._unregister()

    def problem(self) -> str | None:
        """What went wrong, said for the person reading the failure; ``None`` when nothing was refused."""
        if not self.seen:
            return None
        names = ", ".join(sorted(set(self.seen)))
        return (
            f"a checkpoint held types that strict msgpack does not revive (they came back as plain data): {names}. "
            "Save JSON-shaped values (TypedDicts, lists, str/int/bool/None) instead."
        )


@contextlib.contextmanager
def strict_guard() -> Iterator[None]:
    """Fail (``AssertionError``) on leaving when a strict serializer refused a type in between."""
    with BlockedTypes() as blocked:
        yield
    problem = blocked.problem()
    if problem is not None:
        raise AssertionError(problem)


class RefusingSerializer(JsonPlusSerializer):
    """:func:`strict_serde` that raises where the strict one would hand back plain data for a refused type."""

    def __init__(self) -> None:
        super().__init__(allowed_msgpack_modules=None)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        with strict_guard():
            return super().loads_typed(data)


class StrictSaver(InMemorySaver):
    """An ``InMemorySaver`` that reads as a deployment with ``LANGGRAPH_STRICT_MSGPACK=true`` does, failing loudly."""

    def __init__(self) -> None:
        super().__init__(serde=RefusingSerializer())


@contextlib.asynccontextmanager
async def open_checkpointer(kind: str, path: Path) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """One checkpointer of ``kind`` for async graphs; ``sqlite`` keeps it in ``path`` (open it again to restart)."""
    if kind == "memory":
        yield InMemorySaver()
    elif kind == "sqlite":
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            yield saver
    elif kind == "strict":
        yield StrictSaver()
    else:
        raise ValueError(f"unknown checkpointer kind {kind!r}: use one of {', '.join(KINDS)}")


@contextlib.contextmanager
def open_sync_checkpointer(kind: str, path: Path) -> Iterator[BaseCheckpointSaver[Any]]:
    """:func:`open_checkpointer` for graphs run with ``invoke``/``stream`` (``sqlite`` is the sync ``SqliteSaver``)."""
    if kind == "memory":
        yield InMemorySaver()
    elif kind == "sqlite":
        with contextlib.closing(sqlite3.connect(path, check_same_thread=False)) as conn:
            yield SqliteSaver(conn)
    elif kind == "strict":
        yield StrictSaver()
    else:
        raise ValueError(f"unknown checkpointer kind {kind!r}: use one of {', '.join(KINDS)}")


def kinds_from_option(value: str) -> tuple[str, ...]:
    """The kinds ``--checkpointers`` names (``all`` or a comma-separated list of :data:`KINDS`)."""
    if value.strip() == "all":
        return KINDS
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(
            f"--checkpointers={value!r}: use 'all' or a comma-separated list of {', '.join(KINDS)}"
        )
    return kinds
