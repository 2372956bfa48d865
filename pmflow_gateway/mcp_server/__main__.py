"""`python -m pmflow_gateway.mcp_server [--transport stdio|http] [--port N] [--delay-ms N]`."""

from __future__ import annotations

import argparse

from pmflow_gateway.mcp_server.server import build_server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="PMFlow's corpus MCP server")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (path /mcp)")
    parser.add_argument("--delay-ms", type=int, default=0, help="Latency added to every call")
    args = parser.parse_args(argv)
    server = build_server(delay_ms=args.delay_ms)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
