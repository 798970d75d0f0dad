"""langgraph-mcp: MCP servers as first-class parts of LangGraph graphs, with humans in control."""

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
    ConfigError,
    DecisionError,
    LangGraphMcpError,
    ResumeError,
    ServerConnectionError,
    ServerDiscoveryError,
    ToolCallTimeoutError,
    ToolNameCollisionError,
    ToolNotFoundError,
)
from langgraph_mcp.node import McpToolNode, ToolCallRouter, route_tool_calls
from langgraph_mcp.payloads import (
    APPROVAL_INTERRUPT_TYPE,
    ELICITATION_INTERRUPT_TYPE,
    ApprovalInterrupt,
    Decision,
    ElicitationAnswer,
    ElicitationAnswers,
    ElicitationInterrupt,
)
from langgraph_mcp.servers import McpServers

__all__ = [
    "APPROVAL_INTERRUPT_TYPE",
    "ELICITATION_INTERRUPT_TYPE",
    "AnswerError",
    "ApprovalInterrupt",
    "ConfigError",
    "Decision",
    "DecisionError",
    "ElicitationAnswer",
    "ElicitationAnswers",
    "ElicitationInterrupt",
    "HttpServer",
    "InProcessServer",
    "LangGraphMcpError",
    "McpServers",
    "McpServersConfig",
    "McpTool",
    "McpToolNode",
    "OutputRouting",
    "ResumeError",
    "ServerConnectionError",
    "ServerDiscoveryError",
    "SseServer",
    "StdioServer",
    "ToolCallRouter",
    "ToolCallTimeoutError",
    "ToolNameCollisionError",
    "ToolNotFoundError",
    "route_tool_calls",
]
