"""One live MCP server: the owner task, transports, HTTP, request jobs, timers, legacy routing, logs."""
