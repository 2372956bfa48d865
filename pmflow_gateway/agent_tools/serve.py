"""`pmflow-gateway mcp`: build the tools' dependencies and serve them over stdio or HTTP."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI builds its parser without loading pydantic (fast `--help`)
    from mcp.server.mcpserver import MCPServer

    from pmflow_gateway.agent_tools.access import TenantTokens
    from pmflow_gateway.settings import Settings


async def serve(args: argparse.Namespace, settings: Settings,
                tokens: TenantTokens | None) -> None:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP)."""
    from pmflow_gateway.agent_tools.askers import Asker, EmbeddedAsker, KafkaAsker
    from pmflow_gateway.agent_tools.server import build_agent_server
    from pmflow_gateway.agent_tools.stdio import well_formed_stdin
    from pmflow_gateway.bootstrap import build_deps
    from pmflow_gateway.schemas import Topics

    deps = await build_deps(settings)
    asker: Asker
    if args.kafka:
        kafka = KafkaAsker(args.kafka, Topics(prefix=settings.topic_prefix))
        asker = kafka
        try:
            await kafka.start()
        except Exception:
            await kafka.aclose()
            await deps.aclose()
            raise
    else:
        asker = EmbeddedAsker(deps)
    server = build_agent_server(asker, deps.store, tokens=tokens,
                                local_tenant=settings.agent_tenant,
                                remember=settings.agent_memory_writes)
    where = f"http://{args.host}:{args.http}/mcp" if args.http else "stdio"
    mode = (f"through Kafka at {args.kafka}" if args.kafka
            else "in process from the demo corpus" if settings.demo else "in process")
    print(f"pmflow-gateway mcp: serving on {where}, answering {mode}", file=sys.stderr)
    try:
        if tokens is not None:
            await _serve_http(server, tokens, args, settings)
        else:
            with well_formed_stdin():
                await server.run_stdio_async()
    finally:
        await asker.aclose()
        if args.kafka:
            await deps.aclose()


async def _serve_http(server: MCPServer, tokens: TenantTokens, args: argparse.Namespace,
                      settings: Settings) -> None:
    """Streamable HTTP for tenants holding tokens, with the rebinding guard on whatever the
    bind address, and sessions bounded per tenant."""
    import uvicorn

    from pmflow_gateway.agent_tools.access import SessionBudget, rebinding_guard

    per_tenant, idle_s = settings.agent_sessions_per_tenant, settings.agent_session_idle_s
    app = server.streamable_http_app(
        session_idle_timeout=idle_s, max_sessions=per_tenant * len(tokens.tenants),
        transport_security=rebinding_guard(args.host, settings.agent_allowed_hosts),
        host=args.host)
    budget = SessionBudget(app, tokens=tokens, per_tenant=per_tenant, idle_s=idle_s)
    config = uvicorn.Config(budget, host=args.host, port=args.http, log_level="warning")
    await uvicorn.Server(config).serve()


def add_mcp_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = sub.add_parser("mcp", help="serve external_search and route_prior as MCP tools")
    mcp.add_argument("--http", type=int, metavar="PORT",
                     help="streamable HTTP on PORT (path /mcp) instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1",
                     help="HTTP address to bind (the Host header must still be one of "
                          "PMFLOW_AGENT_ALLOWED_HOSTS, by default this machine's names)")
    mcp.add_argument("--kafka", metavar="BOOTSTRAP",
                     help="answer through the running workers instead of in process")
    mcp.add_argument("--demo", action="store_true",
                     help="answer in process from the packaged demo corpus only (invented "
                          "pages; every result says demo: true; same as PMFLOW_DEMO=1)")
    mcp.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    import asyncio

    if args.kafka and args.demo:
        # The workers choose their providers: a demo flag here would change nothing they do.
        print("error: --demo answers in process; in Kafka mode start the workers with "
              "`pmflow-gateway run --demo` instead", file=sys.stderr)
        return 2
    from pmflow_gateway.agent_tools.access import AccessConfigError, TenantTokens

    tokens = None
    if args.http:
        if settings.agent_tokens_file is None:
            print("error: --http needs PMFLOW_AGENT_TOKENS_FILE, the bearer tokens of the "
                  "tenants it serves (see the README)", file=sys.stderr)
            return 2
        try:
            tokens = TenantTokens.load(settings.agent_tokens_file)
        except AccessConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    from pmflow_gateway.tracing import configure_tracing, shutdown_tracing

    # As `run` does: a tool call is one trace with the stages it runs, in process or (through
    # the `traceparent` of what it publishes) in the workers.
    configure_tracing()
    try:
        asyncio.run(serve(args, settings, tokens))
    except KeyboardInterrupt:
        return 0
    except OSError as exc:  # a port in use, a broker that is not there
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        shutdown_tracing()
    return 0
