"""I/O implementations of the ports: MCP client, live search, model client, store."""
