"""Every decision on the record: one ``mcp_decision`` per judged tool call, on the graph's custom stream
(``stream_mode="custom"``) and as a structured record on the ``langgraph_mcp.audit`` logger.

The gate writes the record of a call that does not run (denied, rejected, answered by a human, expired) when it
applies the decisions; the tool node writes the record of a call that was let through, once it has its answer
(``ran``, or ``failed``). The logger gets the same dict as ``record.mcp_decision`` (and as JSON in the message),
so any log pipeline can take it: ``logging.getLogger("langgraph_mcp.audit").addHandler(...)``.

The gate is a subgraph, and LangGraph streams a subgraph's custom events only with ``subgraphs=True`` (LangGraph
Server: ``stream_subgraphs=True``): stream that way to see the gate's records next to the tool node's. The logger
gets every record either way.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

from langgraph.config import get_stream_writer
from opentelemetry import trace

from langgraph_mcp.catalog import args_digest
from langgraph_mcp.payloads import DECISION_EVENT_TYPE, DecisionRecord, DecisionType

__all__ = ["AUDIT_LOGGER", "Outcome", "call_span", "decision_record", "emit_decision", "span_attributes"]

AUDIT_LOGGER = logging.getLogger("langgraph_mcp.audit")
_TRACER = trace.get_tracer("langgraph_mcp")

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


def call_span(published_name: str) -> Any:
    """The OpenTelemetry span of one tool call (current while it runs, so the SDK's ``tools/call`` span is its
    child and the W3C ``traceparent`` the SDK puts in the request's ``_meta`` joins the server to this trace)."""
    return _TRACER.start_as_current_span(
        f"mcp tool call {published_name}", record_exception=False, set_status_on_exception=False
    )


def span_attributes(record: DecisionRecord) -> dict[str, str]:
    """The record as span attributes (``mcp.decision.<field>``; fields without a value are left out)."""
    return {f"mcp.decision.{k}": str(v) for k, v in record.items() if v is not None and k != "type"}


def emit_decision(record: DecisionRecord) -> None:
    """Write ``record`` to the running graph's custom stream (if any) and to the audit logger."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # outside a graph run: the log alone
        writer = None
    if writer is not None:
        writer(dict(record))
    if AUDIT_LOGGER.isEnabledFor(logging.INFO):
        AUDIT_LOGGER.info(
            "%s %s",
            DECISION_EVENT_TYPE,
            json.dumps(record, sort_keys=True),
            extra={"mcp_decision": dict(record)},
        )
