"""Every decision on the record: one ``mcp_decision`` per judged tool call, on the graph's custom stream
(``stream_mode="custom"``) and as a structured record on the ``langgraph_mcp.audit`` logger.

The gate writes the record of a call that does not run (denied, rejected, answered by a human, expired) when it
applies the decisions; the tool node writes the record of a call that was let through, once it has its answer
(``ran``, or ``failed``). The logger gets the same dict as ``record.mcp_decision`` (and as JSON in the message),
so any log pipeline can take it: ``logging.getLogger("langgraph_mcp.audit").addHandler(...)``.

An optional sink keeps the same records in a LangGraph store, per thread (:class:`StoreAuditSink`: a logging handler
on that logger), under ``("langgraph_mcp", "audit", <thread id>)``; :func:`audit_records` reads them back and
``langgraph-mcp audit --thread ID`` prints them::

    StoreAuditSink.install()        # into the running graph's own store (compile(store=...), Agent Server's)
    StoreAuditSink.install(store)   # or into this one

The gate is a subgraph, and LangGraph streams a subgraph's custom events only with ``subgraphs=True`` (LangGraph
Server: ``stream_subgraphs=True``): stream that way to see the gate's records next to the tool node's. The logger
gets every record either way.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Literal, cast

from langgraph.config import get_config, get_stream_writer
from langgraph.store.base import BaseStore

from langgraph_mcp._compat import writes_nowhere
from langgraph_mcp.catalog import args_digest
from langgraph_mcp.credentials import namespace_label
from langgraph_mcp.payloads import DECISION_EVENT_TYPE, DecisionRecord, DecisionType
from langgraph_mcp.servers.identities import current_store

__all__ = [
    "AUDIT_LOGGER",
    "AUDIT_NAMESPACE",
    "Outcome",
    "StoreAuditSink",
    "audit_records",
    "decision_record",
    "decisions_heard",
    "emit_decision",
    "span_attributes",
]

AUDIT_NAMESPACE: tuple[str, str] = ("langgraph_mcp", "audit")
"""The store namespace prefix of the audit sink's records: ``(*AUDIT_NAMESPACE, thread_id)``."""
_PAGE = 500

AUDIT_LOGGER = logging.getLogger("langgraph_mcp.audit")

Outcome = Literal["ran", "rejected", "denied", "expired", "failed"]


def decision_record(
    *,
    tool_call_id: str,
    server: str | None,
    tool: str,
    definition_hash: str | None,
    verdict: Literal["allow", "ask", "deny"],
    decided_by: Literal["policy", "human", "remembered"],
    rule: str,
    args: Any,
    principal: str | None,
    decision: DecisionType | None,
    outcome: Outcome,
) -> DecisionRecord:
    """The record of one call (``args``: the arguments judged, digested here)."""
    return {
        "type": DECISION_EVENT_TYPE,
        "tool_call_id": tool_call_id,
        "server": server,
        "tool": tool,
        "verdict": verdict,
        "decided_by": decided_by,
        "rule": rule,
        "definition_hash": definition_hash,
        "args_digest": args_digest(args if isinstance(args, dict) else {}),
        "principal": principal,
        "decision": decision,
        "outcome": outcome,
    }


def span_attributes(record: DecisionRecord) -> dict[str, str]:
    """The record as span attributes (``mcp.decision.<field>``; fields without a value are left out)."""
    return {f"mcp.decision.{k}": str(v) for k, v in record.items() if v is not None and k != "type"}


def decisions_heard(span: Any) -> bool:
    """Whether a call's ``mcp_decision`` record would reach anyone: its span records, the audit logger takes INFO
    (a :class:`StoreAuditSink` or any handler set to it), or the run streams custom events."""
    if span.is_recording() or AUDIT_LOGGER.isEnabledFor(logging.INFO):
        return True
    try:
        writer = get_stream_writer()
    except RuntimeError:  # outside a graph run: the log alone, which does not take it
        return False
    return not writes_nowhere(writer)


def emit_decision(record: DecisionRecord) -> None:
    """Write ``record`` to the running graph's custom stream (if any) and to the audit logger."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # outside a graph run: the log alone
        writer = None
    if writer is not None:
        writer(dict(record))
    if AUDIT_LOGGER.isEnabledFor(logging.INFO):
        try:
            thread_id = str(get_config().get("configurable", {}).get("thread_id") or "")
        except RuntimeError:  # outside a graph run
            thread_id = ""
        AUDIT_LOGGER.info(
            "%s %s",
            DECISION_EVENT_TYPE,
            json.dumps(record, sort_keys=True),
            extra={"mcp_decision": dict(record), "mcp_thread_id": thread_id},
        )


class StoreAuditSink(logging.Handler):
    """Keeps every ``mcp_decision`` record of a thread in a LangGraph store: ``store``, or (``None``) the store of
    the graph that emits it (records from a graph without one, or outside a thread, are skipped).

    Each record goes under ``(*AUDIT_NAMESPACE, thread_id)``, keyed by when it was written (nanoseconds) and its
    tool call id, with ``recorded_at`` (seconds since the epoch) added. Writing never fails the run: a store error
    goes to ``logging``'s ``handleError``."""

    def __init__(self, store: BaseStore | None = None) -> None:
        super().__init__(logging.INFO)
        self.store = store
        self._writes: set[asyncio.Task[Any]] = set()

    @classmethod
    def install(cls, store: BaseStore | None = None) -> StoreAuditSink:
        """Add a sink to the ``langgraph_mcp.audit`` logger (and let it pass ``INFO``); returns it
        (``AUDIT_LOGGER.removeHandler(sink)`` takes it off again)."""
        sink = cls(store)
        AUDIT_LOGGER.addHandler(sink)
        if not AUDIT_LOGGER.isEnabledFor(logging.INFO):
            AUDIT_LOGGER.setLevel(logging.INFO)
        return sink

    def emit(self, record: logging.LogRecord) -> None:
        decision = getattr(record, "mcp_decision", None)
        thread_id = getattr(record, "mcp_thread_id", "")
        if not isinstance(decision, dict) or not thread_id:
            return
        store = self.store if self.store is not None else current_store()
        if store is None:
            return
        now = time.time()
        namespace = (*AUDIT_NAMESPACE, namespace_label(str(thread_id)))
        key = f"{time.time_ns():020d}-{decision.get('tool_call_id', '')}"
        value = {**decision, "recorded_at": now}
        try:
            store.put(namespace, key, value, index=False)
        except Exception:
            # An async store refuses sync calls on its own loop: write through its async API there instead.
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.handleError(record)
                return
            task = loop.create_task(store.aput(namespace, key, value, index=False))
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)


def audit_records(store: BaseStore, thread_id: str) -> list[DecisionRecord]:
    """The ``mcp_decision`` records :class:`StoreAuditSink` kept for ``thread_id``, oldest first (each with its
    ``recorded_at``)."""
    namespace = (*AUDIT_NAMESPACE, namespace_label(thread_id))
    items: list[Any] = []
    while True:
        page = store.search(namespace, limit=_PAGE, offset=len(items))
        items.extend(page)
        if len(page) < _PAGE:
            break
    exact = [i for i in items if tuple(i.namespace) == namespace]
    return [cast(DecisionRecord, dict(i.value)) for i in sorted(exact, key=lambda i: i.key)]
