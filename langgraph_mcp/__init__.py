"""langgraph-mcp: MCP servers as first-class parts of LangGraph graphs, with humans in control.

The public API is these names (``__all__``, generated from `_EXPORTS`; everything else is internal and may
change). ``tests/test_architecture.py`` checks that this list, ``__all__`` and the type-checking imports agree.

Servers and tools
    ``McpServers``, ``McpTool``, ``McpServersConfig``
Graph parts
    ``McpToolNode``, ``ToolCallsDone``, ``route_tool_calls``, ``create_approval_gate``, ``route_through_gate``,
    ``ApprovalPolicy``
LangChain agents (`create_agent`; needs langchain: the `agents` extra)
    ``McpApprovalMiddleware``
Interceptors (:mod:`langgraph_mcp.calls.interceptors`)
    ``McpToolCallRequest``, ``ToolCallHandler``, ``ToolCallInterceptor``
Resuming paused runs
    ``resume_command``, ``pending_interrupts``, ``PendingMcpInterrupt``
Interrupt payloads and answers (more in :mod:`langgraph_mcp.payloads`)
    ``APPROVAL_INTERRUPT_TYPE``, ``ELICITATION_INTERRUPT_TYPE``, ``ApprovalInterrupt``, ``ElicitationInterrupt``,
    ``Decision``, ``ElicitationAnswers``
Errors users catch (the whole tree is in :mod:`langgraph_mcp.errors`)
    ``LangGraphMcpError``, ``ConfigError``, ``PolicyError``, ``ServerError``, ``ServerConnectionError``,
    ``ServerUnavailableError``, ``CallInterruptedError``, ``ToolCallTimeoutError``, ``ToolNotFoundError``,
    ``CredentialError``, ``ResumeError``, ``EventLoopError``

Names that used to be exported here (the server specs, `Verdict`, `ToolCallRouter`, every other error class)
still import from `langgraph_mcp`; their home is the module named in `_COMPATIBLE`. Module paths from before the
layer folders (`langgraph_mcp.interceptors`, `langgraph_mcp.approval.policy`, ...) still import too: `_MOVED`
maps each to its new home (ARCHITECTURE.md has the table).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph_mcp.calls.interceptors import McpToolCallRequest, ToolCallHandler, ToolCallInterceptor
    from langgraph_mcp.catalog import McpTool
    from langgraph_mcp.config import McpServersConfig
    from langgraph_mcp.errors import (
        CallInterruptedError,
        ConfigError,
        CredentialError,
        EventLoopError,
        LangGraphMcpError,
        PolicyError,
        ResumeError,
        ServerConnectionError,
        ServerError,
        ServerUnavailableError,
        ToolCallTimeoutError,
        ToolNotFoundError,
    )
    from langgraph_mcp.graph.approval_middleware import McpApprovalMiddleware
    from langgraph_mcp.graph.gate import create_approval_gate, route_through_gate
    from langgraph_mcp.graph.node import McpToolNode, ToolCallsDone, route_tool_calls
    from langgraph_mcp.humans.policy import ApprovalPolicy
    from langgraph_mcp.humans.resume import PendingMcpInterrupt, pending_interrupts, resume_command
    from langgraph_mcp.payloads import (
        APPROVAL_INTERRUPT_TYPE,
        ELICITATION_INTERRUPT_TYPE,
        ApprovalInterrupt,
        Decision,
        ElicitationAnswers,
        ElicitationInterrupt,
    )
    from langgraph_mcp.servers.mcp_servers import McpServers

_ERRORS = "langgraph_mcp.errors"

# The public names and their homes, imported lazily: `python -m langgraph_mcp.examples.demo_server` must start
# fast, without LangGraph.
_EXPORTS: dict[str, str] = {
    "McpServers": "langgraph_mcp.servers.mcp_servers",
    "McpTool": "langgraph_mcp.catalog",
    "McpServersConfig": "langgraph_mcp.config",
    "McpToolNode": "langgraph_mcp.graph.node",
    "McpApprovalMiddleware": "langgraph_mcp.graph.approval_middleware",
    "ToolCallsDone": "langgraph_mcp.graph.node",
    "route_tool_calls": "langgraph_mcp.graph.node",
    "create_approval_gate": "langgraph_mcp.graph.gate",
    "route_through_gate": "langgraph_mcp.graph.gate",
    "ApprovalPolicy": "langgraph_mcp.humans.policy",
    "McpToolCallRequest": "langgraph_mcp.calls.interceptors",
    "ToolCallHandler": "langgraph_mcp.calls.interceptors",
    "ToolCallInterceptor": "langgraph_mcp.calls.interceptors",
    "resume_command": "langgraph_mcp.humans.resume",
    "pending_interrupts": "langgraph_mcp.humans.resume",
    "PendingMcpInterrupt": "langgraph_mcp.humans.resume",
    "APPROVAL_INTERRUPT_TYPE": "langgraph_mcp.payloads",
    "ELICITATION_INTERRUPT_TYPE": "langgraph_mcp.payloads",
    "ApprovalInterrupt": "langgraph_mcp.payloads",
    "ElicitationInterrupt": "langgraph_mcp.payloads",
    "Decision": "langgraph_mcp.payloads",
    "ElicitationAnswers": "langgraph_mcp.payloads",
    "LangGraphMcpError": _ERRORS,
    "ConfigError": _ERRORS,
    "PolicyError": _ERRORS,
    "ServerError": _ERRORS,
    "ServerConnectionError": _ERRORS,
    "ServerUnavailableError": _ERRORS,
    "CallInterruptedError": _ERRORS,
    "ToolCallTimeoutError": _ERRORS,
    "ToolNotFoundError": _ERRORS,
    "CredentialError": _ERRORS,
    "ResumeError": _ERRORS,
    "EventLoopError": _ERRORS,
}

# Exported here before the public surface was trimmed: still importable from `langgraph_mcp`, not in __all__.
_COMPATIBLE: dict[str, str] = {
    "StdioServer": "langgraph_mcp.config",
    "HttpServer": "langgraph_mcp.config",
    "SseServer": "langgraph_mcp.config",
    "InProcessServer": "langgraph_mcp.config",
    "OutputRouting": "langgraph_mcp.config",
    "Verdict": "langgraph_mcp.humans.policy",
    "ToolCallRouter": "langgraph_mcp.graph.node",
    "ElicitationAnswer": "langgraph_mcp.payloads",
    "OAuthOptions": "langgraph_mcp.config",
    **{
        name: _ERRORS
        for name in (
            "ServerDiscoveryError",
            "ToolNameCollisionError",
            "ToolOwnerUnknownError",
            "AnswerError",
            "AnswerRefusedError",
            "DecisionError",
            "PromptError",
            "ResourceError",
            "CallNotSentError",
            "InvalidResponseError",
            "ResultTooLargeError",
            "ElicitationUnavailableError",
            "TooManyRoundsError",
            "UnsupportedRequestError",
            "SamplingRefusedError",
            "NoCheckpointerError",
            "IncompatibleDependencyError",
            "ResumeTypeError",
            "SchemaTooComplexError",
            "AnswersFileError",
            "CliError",
            "RequestTimeoutError",
            "AuthorizationRequiredError",
            "TooManyParkedCallsError",
            "ServersClosedError",
            "InterceptorError",
        )
    },
}

# Module paths from before the layer folders → their new homes (ARCHITECTURE.md). Packages that no longer exist
# (`approval`, `elicitation`) import as empty namespaces so their old submodules still resolve.
_MOVED: dict[str, str | None] = {
    "approval": None,
    "approval.policy": "humans.policy",
    "approval.decisions": "humans.decisions",
    "approval.gate": "graph.gate",
    "approval.owners": "graph.owners",
    "elicitation": None,
    "elicitation.answers": "humans.answers",
    "elicitation.validation": "humans.answers",
    "elicitation.forms": "humans.forms",
    "elicitation.inspection": "humans.inspection",
    "elicitation.driver": "calls.driver",
    "elicitation.asker": "calls.asker",
    "elicitation.paused": "calls.paused",
    "hitl": "humans.hitl",
    "resume": "humans.resume",
    "coercion": "humans.coercion",
    "response_schema": "humans.schemas",
    "untrusted_schema": "humans.schemas",
    "validation_errors": "errors",
    "call_tasks": "connection.calls",
    "client_owner": "connection.owner",
    "backoff": "connection.backoff",
    "transport": "connection.transport",
    "stderr_capture": "connection.transport",
    "http_keepalive": "connection.http",
    "post_failures": "connection.http",
    "failures": "connection.failures",
    "request_failures": "connection.failures",
    "request_jobs": "connection.requests",
    "deadlines": "connection.timers",
    "event_deadlines": "connection.timers",
    "legacy_routing": "connection.legacy_routing",
    "server_logs": "connection.logs",
    "interceptors": "calls.interceptors",
    "call_stream": "calls.observers",
    "calls.stream": "calls.observers",
    "calls.runs": "calls.observers",
    "results": "calls.results",
    "tools": "calls.tools",
    "live_connections": "servers.connections",
    "identities": "servers.connections",
    "tool_listing": "servers.listings",
    "listing_cache": "servers.listings",
    "name_resolution": "servers.names",
    "sync_bridge": "servers.sync",
    "background_loop": "servers.sync",
    "server_status": "servers.status",
    "resources": "servers.resources",
    "node": "graph.node",
    "messages": "graph.messages",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module that now holds its code (the same module object)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        prefix = __name__ + "."
        if not fullname.startswith(prefix) or fullname[len(prefix) :] not in _MOVED:
            return None
        is_package = _MOVED[fullname[len(prefix) :]] is None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=is_package)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        new = _MOVED[spec.name[len(__name__) + 1 :]]
        if new is None:
            return types.ModuleType(
                spec.name, f"Moved: its modules now live in the layer folders of {__name__}."
            )
        return importlib.import_module(f"{__name__}.{new}")

    def exec_module(self, module: types.ModuleType) -> None:
        return None


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name) or _COMPATIBLE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = list(_EXPORTS)
