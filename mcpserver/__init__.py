"""`paneboard mcp`: the board's operations as the tools of an MCP server (stdio)."""
