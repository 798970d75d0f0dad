"""langgraph-mcp: MCP servers as first-class parts of LangGraph graphs, with humans in control.

The public API is these names (``__all__``; everything else is internal and may change).
``tests/test_architecture.py`` checks that this list, ``__all__`` and the lazy exports agree.

Servers and tools
    ``McpServers``, ``McpTool``
Graph parts
    ``McpToolNode``, ``ToolCallRouter``, ``ToolCallsDone``, ``route_tool_calls``, ``create_approval_gate``,
    ``route_through_gate``, ``ApprovalPolicy``, ``Verdict``
Interceptors (:mod:`langgraph_mcp.interceptors`)
    ``McpToolCallRequest``, ``ToolCallHandler``, ``ToolCallInterceptor``
Resuming paused runs
    ``resume_command``, ``pending_interrupts``, ``PendingMcpInterrupt``
Interrupt payloads and answers
    ``APPROVAL_INTERRUPT_TYPE``, ``ELICITATION_INTERRUPT_TYPE``, ``ApprovalInterrupt``, ``ElicitationInterrupt``,
    ``Decision``, ``ElicitationAnswer``, ``ElicitationAnswers``
Configuration
    ``McpServersConfig``, ``StdioServer``, ``HttpServer``, ``SseServer``, ``InProcessServer``, ``OutputRouting``
Errors (:mod:`langgraph_mcp.errors`)
    ``LangGraphMcpError``, ``ConfigError``, ``ServerConnectionError``, ``ServerDiscoveryError``,
    ``ToolCallTimeoutError``, ``ToolNameCollisionError``, ``ToolNotFoundError``, ``ToolOwnerUnknownError``,
    ``AnswerError``, ``DecisionError``, ``ResumeError``, ``CredentialError``, ``ResourceError``, ``PromptError``,
    ``ServerError``, ``ServerUnavailableError``, ``CallInterruptedError``, ``CallNotSentError``,
    ``InvalidResponseError``, ``ResultTooLargeError``, ``ElicitationUnavailableError``, ``TooManyRoundsError``,
    ``UnsupportedRequestError``, ``NoCheckpointerError``, ``IncompatibleDependencyError``, ``ResumeTypeError``,
    ``SchemaTooComplexError``, ``AnswersFileError``, ``CliError``, ``EventLoopError``,
    ``PolicyError``, ``RequestTimeoutError``
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph_mcp.approval.gate import create_approval_gate, route_through_gate
    from langgraph_mcp.approval.policy import ApprovalPolicy, Verdict
    from langgraph_mcp.catalog import McpTool
    from langgraph_mcp.config import (
        HttpServer,
        InProcessServer,
        McpServersConfig,
        OutputRouting,
        SseServer,
        StdioServer,
    )
    from langgraph_mcp.errors import (
        AnswerError,
        AnswersFileError,
        CallInterruptedError,
        CallNotSentError,
        CliError,
        ConfigError,
        CredentialError,
        DecisionError,
        ElicitationUnavailableError,
        EventLoopError,
        IncompatibleDependencyError,
        InvalidResponseError,
        LangGraphMcpError,
        NoCheckpointerError,
        PolicyError,
        PromptError,
        RequestTimeoutError,
        ResourceError,
        ResultTooLargeError,
        ResumeError,
        ResumeTypeError,
        SchemaTooComplexError,
        ServerConnectionError,
        ServerDiscoveryError,
        ServerError,
        ServerUnavailableError,
        ToolCallTimeoutError,
        ToolNameCollisionError,
        ToolNotFoundError,
        ToolOwnerUnknownError,
        TooManyRoundsError,
        UnsupportedRequestError,
    )
    from langgraph_mcp.interceptors import McpToolCallRequest, ToolCallHandler, ToolCallInterceptor
    from langgraph_mcp.node import McpToolNode, ToolCallRouter, ToolCallsDone, route_tool_calls
    from langgraph_mcp.payloads import (
        APPROVAL_INTERRUPT_TYPE,
        ELICITATION_INTERRUPT_TYPE,
        ApprovalInterrupt,
        Decision,
        ElicitationAnswer,
        ElicitationAnswers,
        ElicitationInterrupt,
    )
    from langgraph_mcp.resume import PendingMcpInterrupt, pending_interrupts, resume_command
    from langgraph_mcp.servers import McpServers

# Imported lazily: `python -m langgraph_mcp.examples.demo_server` must start fast, without LangGraph.
_EXPORTS: dict[str, str] = {
    "CredentialError": "langgraph_mcp.errors",
    "PromptError": "langgraph_mcp.errors",
    "ResourceError": "langgraph_mcp.errors",
    "McpToolCallRequest": "langgraph_mcp.interceptors",
    "ToolCallHandler": "langgraph_mcp.interceptors",
    "ToolCallInterceptor": "langgraph_mcp.interceptors",
    "ApprovalPolicy": "langgraph_mcp.approval.policy",
    "Verdict": "langgraph_mcp.approval.policy",
    "create_approval_gate": "langgraph_mcp.approval.gate",
    "route_through_gate": "langgraph_mcp.approval.gate",
    "ToolCallsDone": "langgraph_mcp.node",
    "PendingMcpInterrupt": "langgraph_mcp.resume",
    "pending_interrupts": "langgraph_mcp.resume",
    "resume_command": "langgraph_mcp.resume",
    "APPROVAL_INTERRUPT_TYPE": "langgraph_mcp.payloads",
    "AnswerError": "langgraph_mcp.errors",
    "CallInterruptedError": "langgraph_mcp.errors",
    "CallNotSentError": "langgraph_mcp.errors",
    "InvalidResponseError": "langgraph_mcp.errors",
    "ResultTooLargeError": "langgraph_mcp.errors",
    "ServerError": "langgraph_mcp.errors",
    "ServerUnavailableError": "langgraph_mcp.errors",
    "ApprovalInterrupt": "langgraph_mcp.payloads",
    "ConfigError": "langgraph_mcp.errors",
    "Decision": "langgraph_mcp.payloads",
    "DecisionError": "langgraph_mcp.errors",
    "ELICITATION_INTERRUPT_TYPE": "langgraph_mcp.payloads",
    "ElicitationAnswer": "langgraph_mcp.payloads",
    "ElicitationAnswers": "langgraph_mcp.payloads",
    "ElicitationInterrupt": "langgraph_mcp.payloads",
    "HttpServer": "langgraph_mcp.config",
    "InProcessServer": "langgraph_mcp.config",
    "LangGraphMcpError": "langgraph_mcp.errors",
    "McpServers": "langgraph_mcp.servers",
    "McpServersConfig": "langgraph_mcp.config",
    "McpTool": "langgraph_mcp.catalog",
    "McpToolNode": "langgraph_mcp.node",
    "OutputRouting": "langgraph_mcp.config",
    "ResumeError": "langgraph_mcp.errors",
    "ServerConnectionError": "langgraph_mcp.errors",
    "ServerDiscoveryError": "langgraph_mcp.errors",
    "SseServer": "langgraph_mcp.config",
    "StdioServer": "langgraph_mcp.config",
    "ToolCallRouter": "langgraph_mcp.node",
    "ToolCallTimeoutError": "langgraph_mcp.errors",
    "RequestTimeoutError": "langgraph_mcp.errors",
    "ToolNameCollisionError": "langgraph_mcp.errors",
    "ToolNotFoundError": "langgraph_mcp.errors",
    "ToolOwnerUnknownError": "langgraph_mcp.errors",
    "ElicitationUnavailableError": "langgraph_mcp.errors",
    "TooManyRoundsError": "langgraph_mcp.errors",
    "UnsupportedRequestError": "langgraph_mcp.errors",
    "NoCheckpointerError": "langgraph_mcp.errors",
    "IncompatibleDependencyError": "langgraph_mcp.errors",
    "ResumeTypeError": "langgraph_mcp.errors",
    "SchemaTooComplexError": "langgraph_mcp.errors",
    "AnswersFileError": "langgraph_mcp.errors",
    "CliError": "langgraph_mcp.errors",
    "EventLoopError": "langgraph_mcp.errors",
    "PolicyError": "langgraph_mcp.errors",
    "route_tool_calls": "langgraph_mcp.node",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "APPROVAL_INTERRUPT_TYPE",
    "ELICITATION_INTERRUPT_TYPE",
    "AnswerError",
    "AnswersFileError",
    "ApprovalInterrupt",
    "ApprovalPolicy",
    "CallInterruptedError",
    "CallNotSentError",
    "CliError",
    "ConfigError",
    "CredentialError",
    "Decision",
    "DecisionError",
    "ElicitationAnswer",
    "ElicitationAnswers",
    "ElicitationInterrupt",
    "ElicitationUnavailableError",
    "EventLoopError",
    "HttpServer",
    "InProcessServer",
    "IncompatibleDependencyError",
    "InvalidResponseError",
    "LangGraphMcpError",
    "McpServers",
    "McpServersConfig",
    "McpTool",
    "McpToolCallRequest",
    "McpToolNode",
    "NoCheckpointerError",
    "OutputRouting",
    "PendingMcpInterrupt",
    "PolicyError",
    "PromptError",
    "RequestTimeoutError",
    "ResourceError",
    "ResultTooLargeError",
    "ResumeError",
    "ResumeTypeError",
    "SchemaTooComplexError",
    "ServerConnectionError",
    "ServerDiscoveryError",
    "ServerError",
    "ServerUnavailableError",
    "SseServer",
    "StdioServer",
    "TooManyRoundsError",
    "ToolCallHandler",
    "ToolCallInterceptor",
    "ToolCallRouter",
    "ToolCallTimeoutError",
    "ToolCallsDone",
    "ToolNameCollisionError",
    "ToolNotFoundError",
    "ToolOwnerUnknownError",
    "UnsupportedRequestError",
    "Verdict",
    "create_approval_gate",
    "pending_interrupts",
    "resume_command",
    "route_through_gate",
    "route_tool_calls",
]
