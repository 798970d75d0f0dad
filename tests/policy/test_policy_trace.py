"""OpenTelemetry: a tool call's span carries its ``mcp_decision`` fields, and the W3C ``traceparent`` reaches the
server (a stdio process) in the request's ``_meta``, so the server's trace joins the graph's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from langgraph_mcp import ApprovalPolicy
from tests.graph.test_policy_gate import WIRINGS, graph_for
from tests.support.helpers import HANG_GUARD, OpenServers
from tests.support.node_support import call, text_of, tool_messages

pytestmark = pytest.mark.anyio

TRACED_SERVER = str(Path(__file__).resolve().parents[1] / "support" / "servers" / "traced_server.py")


@pytest.fixture(scope="module")
def spans() -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # once per process: OpenTelemetry refuses a second one
    return exporter


@pytest.mark.parametrize("wiring", WIRINGS)
@pytest.mark.parametrize("mode", ["modern", "legacy"])
async def test_the_call_span_has_the_decision_and_the_server_gets_its_traceparent(
    open_servers: OpenServers, spans: InMemorySpanExporter, wiring: str, mode: str
) -> None:
    spans.clear()
    servers = open_servers({"t": {"command": sys.executable, "args": [TRACED_SERVER], "mode": mode}})
    graph = graph_for(servers, ApprovalPolicy(), [call("t_whoami", "w")], wiring)
    cfg: Any = {"configurable": {"thread_id": f"{wiring}-{mode}", "user_id": "ann"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    traceparent = text_of(tool_messages(out)["w"])
    (span,) = [s for s in spans.get_finished_spans() if s.name == "mcp tool call t_whoami"]
    context = span.get_span_context()
    assert context is not None
    version, trace_id, parent_id, _flags = traceparent.split("-")
    assert version == "00" and trace_id == f"{context.trace_id:032x}"  # the server joined the graph's trace
    sent = [
        s for s in spans.get_finished_spans() if s.parent is not None and s.parent.span_id == context.span_id
    ]
    assert any(f"{s.context.span_id:016x}" == parent_id for s in sent if s.context is not None)
    attributes = dict(span.attributes or {})
    assert attributes["mcp.decision.verdict"] == "allow"
    assert attributes["mcp.decision.decided_by"] == "policy"
    assert attributes["mcp.decision.rule"] == "hints:read-only"
    assert attributes["mcp.decision.outcome"] == "ran"
    assert attributes["mcp.decision.principal"] == "ann"
    assert attributes["mcp.decision.server"] == "t" and attributes["mcp.decision.tool"] == "whoami"
    assert len(str(attributes["mcp.decision.definition_hash"])) == 64
    assert len(str(attributes["mcp.decision.args_digest"])) == 64


_LATER = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from langgraph_mcp.calls.observers import call_span
with call_span("demo_add") as span:
    before = (span.is_recording(), span.get_span_context().is_valid)
trace.set_tracer_provider(TracerProvider())
with call_span("demo_add") as span:
    after = (span.is_recording(), trace.get_current_span() is span, span.name)
print(before, after)
"""


def test_no_span_until_a_tracer_provider_is_set_and_one_set_later_is_honoured() -> None:
    # A process of its own: OpenTelemetry takes one provider per process, and this module's fixture sets one.
    done = subprocess.run(
        [sys.executable, "-c", _LATER], capture_output=True, text=True, timeout=HANG_GUARD, check=True
    )
    assert done.stdout.strip() == "(False, False) (True, True, 'mcp tool call demo_add')", done.stderr
