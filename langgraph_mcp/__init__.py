"""langgraph-mcp: MCP servers as first-class parts of LangGraph graphs, with humans in control.

The public API is these names (``__all__``, generated from `_EXPORTS`; everything else is internal and may
change). ``tests/package/test_architecture.py`` checks that this list, ``__all__`` and the type-checking imports agree.

Servers and tools
    ``McpServers``, ``McpTool``, ``McpServersConfig``
Graph parts
    ``add_mcp_tools`` and ``Oversight`` (the MCP part of a graph from one set of options), ``McpToolNode``,
    ``ToolCallsDone``, ``route_tool_calls``, ``ToolCallRouter``, ``create_approval_gate``, ``route_through_gate``,
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

Everything else (the server specs, the rest of the error tree, ...) imports from the module that defines it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph_mcp.approval.oversight import Oversight
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
    from langgraph_mcp.graph.agent import add_mcp_tools
    from langgraph_mcp.graph.approval_middleware import McpApprovalMiddleware
    from langgraph_mcp.graph.gate import create_approval_gate, route_through_gate
    from langgraph_mcp.graph.node import McpToolNode, ToolCallRouter, ToolCallsDone, route_tool_calls
    from langgraph_mcp.payloads import (
        APPROVAL_INTERRUPT_TYPE,
        ELICITATION_INTERRUPT_TYPE,
        ApprovalInterrupt,
        Decision,
        ElicitationAnswers,
        ElicitationInterrupt,
    )
    from langgraph_mcp.policy.policy import ApprovalPolicy
    from langgraph_mcp.questions.resume import PendingMcpInterrupt, pending_interrupts, resume_command
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
    "ToolCallRouter": "langgraph_mcp.graph.node",
    "create_approval_gate": "langgraph_mcp.graph.gate",
    "route_through_gate": "langgraph_mcp.graph.gate",
    "add_mcp_tools": "langgraph_mcp.graph.agent",
    "Oversight": "langgraph_mcp.approval.oversight",
    "ApprovalPolicy": "langgraph_mcp.policy.policy",
    "McpToolCallRequest": "langgraph_mcp.calls.interceptors",
    "ToolCallHandler": "langgraph_mcp.calls.interceptors",
    "ToolCallInterceptor": "langgraph_mcp.calls.interceptors",
    "resume_command": "langgraph_mcp.questions.resume",
    "pending_interrupts": "langgraph_mcp.questions.resume",
    "PendingMcpInterrupt": "langgraph_mcp.questions.resume",
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


try:
    __version__: str = importlib.metadata.version("langgraph-mcp")
    """The installed distribution's version (``langgraph-mcp --version`` says the same)."""
except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

_EXTRAS = {"langchain": "agents"}
"""The top-level packages an export needs that only an extra installs: package -> extra."""


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        package = (exc.name or "").partition(".")[0]
        extra = _EXTRAS.get(package)
        if extra is None:
            raise
        raise ModuleNotFoundError(
            f"langgraph_mcp.{name} needs {package!r}, which the {extra!r} extra installs: "
            f"pip install 'langgraph-mcp[{extra}]'",
            name=exc.name,
        ) from exc
    globals()[name] = value
    return value


__all__ = list(_EXPORTS)
