"""`python -m pmflow_gateway.mcp_server [--transport stdio|http] [--port N] [--delay-ms N]
[--corpus FILE]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pmflow_gateway.mcp_server.corpus import load_pages
from pmflow_gateway.mcp_server.server import build_server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="PMFlow's corpus MCP server")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (path /mcp)")
    parser.add_argument("--delay-ms", type=int, default=0, help="Latency added to every call")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="JSON file of pages (default: the packaged demo corpus)")
    args = parser.parse_args(argv)
    try:
        pages = load_pages(args.corpus)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parser.exit(2, f"cannot read corpus {args.corpus}: {exc!r}\n")
    server = build_server(pages=pages, delay_ms=args.delay_ms)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
