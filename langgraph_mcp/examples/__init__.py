"""Examples shipped with the package: the bundled MCP server and the demo/Studio graph."""
