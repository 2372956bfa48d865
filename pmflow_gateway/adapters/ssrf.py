"""The SSRF guard: every page the gateway fetches goes through `SafeFetcher`.

A URL is checked before any byte leaves: http/https only, no userinfo, a host that passes
the shared address rule (`contract.addresses`: literals in any spelling, local-only names),
and every address a name resolves to must be a public one too. The connection then goes to
the address that was checked, never to a second DNS answer: `PinnedTransport` only knows
the pinned addresses (no DNS rebinding).
Redirects are followed by hand and each hop is checked again; bytes, hops and time are capped.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import re
import socket
import ssl
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from pmflow_gateway.adapters.http_spans import TracedTransport
from pmflow_gateway.adapters.pinned_transport import PinnedNetworkBackend, PinnedTransport
from pmflow_gateway.contract.addresses import (
    address_refusal,
    allow_keys,
    host_refusal,
    is_absolute,
    parse_numeric_host,
)

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""`(host, port) -> addresses`: the DNS port, swapped in tests to script answers."""

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
TEXT_TYPES = ("text/", "application/json", "application/xhtml+xml", "application/ld+json")
# The content codings read, as zlib window bits; anything else (or two stacked) is refused.
CODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
USER_AGENT = "Mozilla/5.0 (compatible; pmflow-query-gateway/0.1; +bounded-live-search)"


class FetchError(Exception):
    """A fetch that produced no page; `reason` says why in words fit for an attempt record."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FetchRefused(FetchError):
    """The guard refused the URL (or a redirect hop) before connecting."""


class FetchTimedOut(FetchError):
    """The fetch ran past its total time budget."""


@dataclass(frozen=True, kw_only=True)
class FetchedPage:
    url: str
    final_url: str
    status: int
    content_type: str
    text: str
    headers: dict[str, str] = field(default_factory=dict)
    truncated: bool = False  # the body was cut at `max_bytes`


async def system_resolver(host: str, port: int) -> list[str]:
    """All addresses of `host`, through the event loop's getaddrinfo (never blocking it)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))



class SafeFetcher:
    """GET a public page with every SSRF check; one pinned connection pool per fetch."""

    def __init__(self, *, allow_hosts: Iterable[str] = (), max_bytes: int = 2_000_000,
                 max_redirects: int = 5, timeout_s: float = 8.0,
                 resolver: Resolver = system_resolver,
                 ssl_context: ssl.SSLContext | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        """`headers` go on top of the usual ones (a search engine's API key) to the origin of
        the URL asked for only, never to another host a redirect leads to; they are never
        recorded in spans or attempts."""
        self.allow_hosts = allow_keys(allow_hosts)
        self._extra_headers = dict(headers or {})
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.timeout_s = timeout_s
        self._resolver = resolver
        self._ssl_context = ssl_context  # None: the system's CA bundle (tests pass their own)

    async def fetch(self, url: str, *, timeout_s: float | None = None) -> FetchedPage:
        """The page at `url` after checked redirects; raises `FetchError` subclasses."""
        budget = min(timeout_s, self.timeout_s) if timeout_s is not None else self.timeout_s
        started = time.monotonic()
        try:
            async with asyncio.timeout(budget):
                return await self._fetch_following_redirects(url, started + budget)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise FetchTimedOut(f"fetch of {url} exceeded {budget:.1f}s") from exc
        except httpx.HTTPError as exc:
            raise FetchError(f"fetch of {url} failed: {exc or type(exc).__name__}") from exc

    async def check(self, url: str, backend: PinnedNetworkBackend | None = None) -> httpx.URL:
        """The parsed URL if the guard lets it through (pinning its addresses into `backend`)."""
        parsed = _parse_url(url)
        wire_host = parsed.raw_host.decode("ascii")  # IDNA-encoded: what DNS and TCP see
        host = wire_host.lower().rstrip(".")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        allowed = f"{host}:{port}" in self.allow_hosts
        if refusal := host_refusal(host, allowed=allowed):
            raise FetchRefused(f"{refusal} refused for host {host}")
        literal = parse_numeric_host(parsed.host)
        if literal is not None:
            addresses = [str(literal)]
        else:
            if not re.fullmatch(r"[a-z0-9._-]+", host):
                raise FetchRefused(f"host {parsed.host!r} is not a valid hostname")
            try:
                addresses = await self._resolver(wire_host, port)
            except OSError as exc:
                raise FetchRefused(f"host {host} does not resolve: {exc}") from exc
            if not addresses:
                raise FetchRefused(f"host {host} resolved to no address")
        for text in addresses:
            try:
                address = ipaddress.ip_address(text.split("%", 1)[0])
            except ValueError as exc:
                raise FetchRefused(f"host {host} resolved to {text!r}, not an address") from exc
            reason = address_refusal(address)
            if reason and (is_absolute(reason) or not allowed):
                raise FetchRefused(f"{reason} address {address} refused for host {host}")
        if backend is not None:
            backend.pin(wire_host, port, addresses)
        return parsed

    async def _fetch_following_redirects(self, url: str, deadline: float) -> FetchedPage:
        backend = PinnedNetworkBackend()
        transport = TracedTransport(
            PinnedTransport(backend, self._ssl_context or shared_ssl_context()))
        # trust_env=False: an environment proxy would connect on our behalf, unchecked.
        async with httpx.AsyncClient(transport=transport, trust_env=False,
                                     follow_redirects=False) as client:
            current = await self.check(url, backend)
            origin = _origin(current)
            for hop in range(self.max_redirects + 1):
                remaining = max(deadline - time.monotonic(), 0.001)
                extra = self._extra_headers if _origin(current) == origin else {}
                request = client.build_request("GET", current,
                                               headers={**_request_headers(), **extra},
                                               timeout=remaining)
                response = await client.send(request, stream=True)
                try:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECT_STATUSES and location:
                        if hop == self.max_redirects:
                            raise FetchRefused(
                                f"more than {self.max_redirects} redirects from {url}")
                        current = await self.check(str(current.join(location)), backend)
                        continue
                    return await self._read_page(url, response)
                finally:
                    await response.aclose()
        raise AssertionError("unreachable: the loop returns or raises")

    async def _read_page(self, url: str, response: httpx.Response) -> FetchedPage:
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type and not content_type.startswith(TEXT_TYPES):
            raise FetchRefused(f"content type {content_type} of {response.url} is not text")
        body = bytearray()
        truncated = False
        async for chunk in _decoded(response, self.max_bytes + 1):
            body += chunk
            if len(body) > self.max_bytes:
                del body[self.max_bytes:]
                truncated = True
                break
        return FetchedPage(
            url=url, final_url=str(response.url), status=response.status_code,
            content_type=content_type, text=decode_body(bytes(body), response.charset_encoding),
            headers=dict(response.headers), truncated=truncated)


async def _decoded(response: httpx.Response, limit: int) -> AsyncIterator[bytes]:
    """The body decoded while it is read, never more than `limit` bytes out (nor in): a few
    hundred bytes of stacked gzip would otherwise inflate to gigabytes in a single chunk."""
    codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if len(codings) > 1:
        raise FetchRefused(f"stacked content encodings ({', '.join(codings)}) refused")
    if codings and codings[0] not in CODINGS:
        raise FetchRefused(f"content encoding {codings[0]!r} refused")
    inflater = zlib.decompressobj(CODINGS[codings[0]]) if codings else None
    out = read = 0
    async for raw in response.aiter_raw():
        read += len(raw)
        if inflater is None:
            out += len(raw)
            yield raw
        else:
            try:
                chunk = inflater.decompress(raw, max(limit - out, 1))
            except zlib.error as exc:
                raise FetchError(f"body of {response.url} does not decode: {exc}") from exc
            out += len(chunk)
            yield chunk
        if out >= limit or read >= limit:
            return


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every fetch: loading the CA bundle costs tens of ms."""
    return httpx.create_ssl_context()


def _parse_url(url: str) -> httpx.URL:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchRefused(f"scheme {scheme or '(none)'!r} refused: only http and https")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        # httpx rejects some spellings (0177.0.0.1): still name the address they mean.
        host = urlsplit(url).hostname or ""
        literal = parse_numeric_host(host) if host else None
        reason = address_refusal(literal) if literal is not None else None
        if reason:
            raise FetchRefused(f"{reason} address {literal} refused for host {host}") from exc
        raise FetchRefused(f"invalid URL {url!r}: {exc}") from exc
    if parsed.userinfo:
        # http://good.com@127.0.0.1/ reads like good.com but goes to 127.0.0.1.
        raise FetchRefused(f"userinfo in URL refused (the real host is {parsed.host})")
    if not parsed.host:
        raise FetchRefused(f"URL {url!r} has no host")
    return parsed


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _request_headers() -> dict[str, str]:
    return {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate",
            "Accept": "text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.5",
            "Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}


def decode_body(body: bytes, declared: str | None) -> str:
    """Text of a body: the header's charset, else a <meta charset>, else UTF-8."""
    encoding = declared
    if not encoding:
        match = re.search(rb"""<meta[^>]+charset=["']?([a-zA-Z0-9_-]+)""", body[:4096], re.I)
        encoding = match.group(1).decode("ascii") if match else "utf-8"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")
