"""A decision runs its call at most once: the *consumed* marker.

**What "runs" means.** A decision (a human's approve or edit, or a remembered approval) authorises one *execution*
of its call: the graph task that sends it (identified by the task's checkpoint namespace, which LangGraph keeps
the same when the task is resumed, on this worker or another). The re-sends that belong to that execution are part
of it: a 2026-07-28 call re-issued after the server's question, a legacy call replayed on resume, a send retried
after a transport failure. A *new* execution of a tool call id whose decision already produced a result (the same
approved ``AIMessage`` written to the thread again, a fork run again) is refused with an error ``ToolMessage``.

**Where the marker lives.** In the graph's LangGraph store when it has one (``compile(store=...)``, Agent Server's
store), under ``("langgraph_mcp", "consumed", <thread id>)``, one item per tool call id: ``{"execution", "done"}``.
It is written before the call is sent (claimed by this execution) and marked ``done`` once the call produced its
result. A store outlives the thread's checkpoints, so a client that rewrites or forks the thread cannot undo it,
*as long as the client cannot write the store*: on LangGraph Server, custom auth that keeps clients out of the
``langgraph_mcp`` namespaces (``@auth.on.store``) makes the marker out of a client's reach. Without a store the
marker is kept in this process, per checkpointer (bounded), so it holds until a restart; the thread's own messages are not used
(a client can rewrite them). In every deployment the call also carries its idempotency key
(``_meta["io.github.langgraph-mcp/idempotency-key"]``, one per decision, the same across its rounds), so a server
can drop a second execution itself: where the marker can be undone, that key is the remaining defence.
"""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from langgraph.config import get_config
from langgraph.store.base import BaseStore, GetOp, PutOp

from langgraph_mcp._compat import run_checkpointer

__all__ = [
    "CONSUMED_NAMESPACE",
    "IDEMPOTENCY_META_KEY",
    "approval_index",
    "claim",
    "execution_id",
    "finish",
    "idempotency_key",
]

CONSUMED_NAMESPACE: tuple[str, str] = ("langgraph_mcp", "consumed")
IDEMPOTENCY_META_KEY = "io.github.langgraph-mcp/idempotency-key"
"""The ``_meta`` key of a decided call's idempotency key (see the module docstring)."""

_LOCAL_SIZE = 65_536
_local: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[str, str], dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)
"""The markers of a graph without a store, per checkpointer (a new checkpointer is a new world of threads):
``(thread id, tool call id) -> {"execution", "done"}``."""


class _Process:
    """The key of the markers that live with the process (no checkpointer, or one that can't be weakly referenced)."""


_PROCESS = _Process()


def _markers() -> OrderedDict[tuple[str, str], dict[str, Any]]:
    try:
        checkpointer = run_checkpointer(get_config().get("configurable", {}))
    except RuntimeError:  # outside a graph
        checkpointer = None
    key = checkpointer if checkpointer is not None else _PROCESS
    try:
        return _local.setdefault(key, OrderedDict())
    except TypeError:  # a checkpointer that cannot be weakly referenced: its markers live with the process
        return _local.setdefault(_PROCESS, OrderedDict())


def execution_id(configurable: Mapping[str, Any]) -> str:
    """The running task's execution: its checkpoint namespace (kept by LangGraph across a resume)."""
    return str(configurable.get("checkpoint_ns") or configurable.get("checkpoint_id") or "")


def idempotency_key(thread_id: str, tool_call_id: str, signature: str) -> str:
    """One key per decision (its thread, call and signature), the same across every round of its execution."""
    text = "\0".join(("langgraph-mcp decision", thread_id, tool_call_id, signature))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


async def _batch(store: BaseStore, ops: list[Any]) -> list[Any]:
    try:
        return list(await store.abatch(ops))
    except NotImplementedError:  # a sync-only store (SqliteStore): its sync API from a worker thread
        return list(await asyncio.to_thread(store.batch, ops))


async def _read(store: BaseStore | None, thread_id: str, call_id: str) -> dict[str, Any] | None:
    if store is None:
        return _markers().get((thread_id, call_id))
    [item] = await _batch(store, [GetOp((*CONSUMED_NAMESPACE, thread_id), call_id)])
    return dict(item.value) if item is not None and isinstance(item.value, Mapping) else None


async def _write(store: BaseStore | None, thread_id: str, call_id: str, value: dict[str, Any]) -> None:
    if store is None:
        markers = _markers()
        markers[(thread_id, call_id)] = value
        markers.move_to_end((thread_id, call_id))
        while len(markers) > _LOCAL_SIZE:
            markers.popitem(last=False)
        return
    await _batch(store, [PutOp((*CONSUMED_NAMESPACE, thread_id), call_id, value, index=False)])


async def approval_index(store: BaseStore | None, thread_id: str, call_id: str, execution: str) -> int | None:
    """Where ``execution`` of ``call_id`` had its approval answered among its task's interrupts, as its claim
    recorded it (``None``: not recorded here)."""
    marker = await _read(store, thread_id, call_id)
    if marker is None or marker.get("execution") != execution:
        return None
    at = marker.get("approved_at")
    return at if isinstance(at, int) else None


async def claim(
    store: BaseStore | None, thread_id: str, call_id: str, execution: str, *, approved_at: int | None = None
) -> str | None:
    """Claim the decided call ``call_id`` for ``execution`` before it is sent; why not, when it may not run.

    ``approved_at``: the place of the node's own approval among the task's interrupts, kept with the claim so
    a later round of the same execution (the call's questions) finds it (:func:`approval_index`)."""
    marker = await _read(store, thread_id, call_id)
    extra = {"approved_at": approved_at} if approved_at is not None else {}
    if marker is not None:
        if marker.get("done"):
            return (
                f"its decision already ran it once (tool call {call_id!r}), and a decision runs its call at most "
                "once; call it again to have it reviewed"
            )
        if marker.get("execution") != execution:
            return (
                f"its decision is being run by another execution of tool call {call_id!r}; a decision runs its "
                "call at most once"
            )
        if extra and marker.get("approved_at") != approved_at:
            await _write(store, thread_id, call_id, {**marker, **extra})
        return None
    await _write(store, thread_id, call_id, {"execution": execution, "done": False, **extra})
    return None


async def finish(store: BaseStore | None, thread_id: str, call_id: str, execution: str) -> None:
    """Mark the decided call consumed: it produced its result."""
    await _write(store, thread_id, call_id, {"execution": execution, "done": True})
