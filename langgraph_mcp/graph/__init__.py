"""What users wire into a StateGraph: McpToolNode, the routers, the approval gate, message records."""
