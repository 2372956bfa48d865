"""Who may use the MCP tools over HTTP, as which tenant, and how many sessions they may hold.

A tenant is never an argument: over HTTP it is the tenant the caller's bearer token was
issued for (a TOML file of tokens, `PMFLOW_AGENT_TOKENS_FILE`), over stdio the local user's
(`PMFLOW_AGENT_TENANT`). A request without a known token opens no session; a tenant holds at
most `per_tenant` sessions, and a session nobody uses for `idle_s` is closed, so no caller
can fill the server or lock another tenant out.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_BINDS = frozenset({"127.0.0.1", "localhost", "::1"})
SESSION_HEADER = b"mcp-session-id"


class AccessConfigError(ValueError):
    """The tokens file cannot be used; raised at start-up."""


class TenantTokens:
    """Bearer tokens and the tenant each was issued for. Only SHA-256 digests are kept, and
    a presented token is compared with every one of them in constant time."""

    def __init__(self, digests: dict[bytes, str]) -> None:
        self._digests = list(digests.items())

    @classmethod
    def load(cls, path: Path) -> TenantTokens:
        """From `[[tokens]]` tables with `tenant` and `token` (or its hex `sha256`)."""
        try:
            document = tomllib.loads(path.read_text("utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise AccessConfigError(f"cannot read tokens file {path}: {exc}") from exc
        digests: dict[bytes, str] = {}
        for index, entry in enumerate(document.get("tokens", []), start=1):
            digests[_digest(entry, index)] = _tenant(entry, index)
        if not digests:
            raise AccessConfigError(f"tokens file {path} has no [[tokens]] entry")
        return cls(digests)

    @property
    def tenants(self) -> set[str]:
        return {tenant for _, tenant in self._digests}

    def tenant_for(self, token: str) -> str | None:
        digest = hashlib.sha256(token.encode("utf-8", "replace")).digest()
        found = None
        for known, tenant in self._digests:  # no early exit: every token costs the same
            if hmac.compare_digest(digest, known):
                found = tenant
        return found

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's `TokenVerifier`: the tenant becomes the token's client id."""
        tenant = self.tenant_for(token)
        if tenant is None:
            return None
        # The token itself is not kept: its digest stands in where the SDK wants one.
        return AccessToken(token=hashlib.sha256(token.encode("utf-8", "replace")).hexdigest(),
                           client_id=tenant, scopes=[])


def _tenant(entry: Any, index: int) -> str:
    tenant = entry.get("tenant") if isinstance(entry, dict) else None
    if not isinstance(tenant, str) or not 0 < len(tenant) <= 200:
        raise AccessConfigError(f"[[tokens]] #{index}: `tenant` must be a name")
    return tenant


def _digest(entry: Any, index: int) -> bytes:
    token, digest = entry.get("token"), entry.get("sha256")
    if isinstance(token, str) and len(token) >= 16 and digest is None:
        return hashlib.sha256(token.encode()).digest()
    if isinstance(digest, str) and token is None:
        try:
            raw = bytes.fromhex(digest)
        except ValueError:
            raw = b""
        if len(raw) == 32:
            return raw
    raise AccessConfigError(f"[[tokens]] #{index}: give `token` (16 characters or more) or "
                            "its hex `sha256`, not both")


def rebinding_guard(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """Host and Origin checks on for every bind address: the allowed Host values are the
    configured ones, else this machine's names and the bind address itself (a wildcard bind
    then answers local callers only until an allowed-hosts list names the public ones)."""
    if allowed_hosts:
        hosts = list(allowed_hosts)
    else:
        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
        if host not in LOOPBACK_BINDS and host not in ("0.0.0.0", "::", ""):
            hosts.append(f"[{host}]:*" if ":" in host else f"{host}:*")
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=hosts, allowed_origins=origins)


@dataclass
class _Session:
    in_flight: int = 0
    last_seen: float = 0.0


@dataclass
class SessionBudget:
    """ASGI middleware in front of the SDK's session manager: a request that would open a
    session gets 429 while its tenant holds `per_tenant` of them. A session counts until it
    has had no request in flight for `idle_s`, the moment the SDK closes it."""

    app: ASGIApp
    tokens: TenantTokens
    per_tenant: int
    idle_s: float
    clock: Callable[[], float] = time.monotonic
    _sessions: dict[str, dict[str, _Session]] = field(default_factory=dict)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tenant = self._tenant(scope) if scope["type"] == "http" else None
        if tenant is None:  # not ours to count: the SDK answers 401 or serves the lifespan
            await self.app(scope, receive, send)
            return
        sessions = self._sessions.setdefault(tenant, {})
        session_id = _header(scope, SESSION_HEADER)
        if session_id is None:
            await self._open(sessions, scope, receive, send)
        elif (session := sessions.get(session_id)) is not None:
            await self._use(session, scope, receive, send)
            if scope.get("method") == "DELETE":
                sessions.pop(session_id, None)
        else:  # unknown or expired: the SDK answers 404
            await self.app(scope, receive, send)

    async def _open(self, sessions: dict[str, _Session], scope: Scope, receive: Receive,
                    send: Send) -> None:
        """A request that may open a session: refused while the tenant holds its share."""
        self._forget_idle(sessions)
        if len(sessions) >= self.per_tenant:
            await _too_many(send, self.per_tenant)
            return
        opened: list[_Session] = []
        try:
            await self.app(scope, receive, self._recording(send, sessions, opened))
        finally:
            for session in opened:
                session.in_flight -= 1
                session.last_seen = self.clock()

    async def _use(self, session: _Session, scope: Scope, receive: Receive,
                   send: Send) -> None:
        session.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            session.in_flight -= 1
            session.last_seen = self.clock()

    def _tenant(self, scope: Scope) -> str | None:
        authorization = _header(scope, b"authorization") or ""
        scheme, _, token = authorization.partition(" ")
        return self.tokens.tenant_for(token.strip()) if scheme.lower() == "bearer" else None

    def _forget_idle(self, sessions: dict[str, _Session]) -> None:
        cutoff = self.clock() - self.idle_s
        for session_id in [sid for sid, s in sessions.items()
                           if s.in_flight == 0 and s.last_seen < cutoff]:
            del sessions[session_id]

    def _recording(self, send: Send, sessions: dict[str, _Session],
                   opened: list[_Session]) -> Send:
        """`send`, noting the session the SDK opens in its response headers (in flight until
        the opening request ends)."""
        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name.lower() == SESSION_HEADER:
                        session = _Session(in_flight=1)
                        sessions[value.decode("latin-1")] = session
                        opened.append(session)
            await send(message)

        return recording


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _too_many(send: Send, limit: int) -> None:
    body = (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"this tenant already '
            b'holds ' + str(limit).encode() + b' sessions; close one or let one expire"}}')
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
