"""PMFlow's own MCP server: `search` and `fetch` over a local, dated corpus.

Run it with `python -m pmflow_gateway.mcp_server [--transport stdio|http] [--port N]
[--delay-ms N]`. It stands in for a real search MCP server in tests, demos and benchmarks.
Kept import-light: the adapter imports `terms` from here without pulling in the SDK.
"""
