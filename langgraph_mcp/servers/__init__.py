"""Many MCP servers, one lifecycle: McpServers, connections per identity, listings, names, sync use."""

from langgraph_mcp.servers.mcp_servers import McpServers

__all__ = ["McpServers"]  # `from langgraph_mcp.servers import McpServers` worked before the layer folders
