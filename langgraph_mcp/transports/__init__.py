"""Transports: one module per way of reaching a server, each its config model, how it opens a client and what a
decision about its server binds to (see :mod:`langgraph_mcp.transports.base`). The registered ones, in the order a
config entry without a ``transport`` is matched against them:"""

from langgraph_mcp.transports.base import register_transport
from langgraph_mcp.transports.http import HttpServer
from langgraph_mcp.transports.in_process import InProcessServer
from langgraph_mcp.transports.sse import SseServer
from langgraph_mcp.transports.stdio import StdioServer

__all__ = ["HttpServer", "InProcessServer", "SseServer", "StdioServer", "register_transport"]

register_transport(StdioServer)
register_transport(HttpServer)
register_transport(SseServer)
register_transport(InProcessServer)
