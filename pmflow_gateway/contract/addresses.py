"""Which hosts a reply may send a reader to, and the gateway may connect to: public ones.

One rule for every URL from outside: the SSRF guard applies it before it resolves or
connects, and every URL an MCP server returns meets it before it can become evidence. It
reads the URL alone, never DNS: private, loopback, link-local, CGNAT, ULA, multicast,
reserved and cloud-metadata addresses are refused in any spelling `inet_aton` accepts
(decimal, octal, hex, short forms) and inside IPv6 (mapped, NAT64, 6to4, Teredo), and so are
names that only mean something on a local network (`localhost`, `*.local`, `*.internal`,
single labels). An allow-list of `host:port` entries (tests only) lets private and local
hosts through, but never a metadata service or an unspecified address.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance metadata services: refused even for allow-listed hosts, because reaching one
# hands out cloud credentials and no test ever needs it.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
METADATA_HOSTNAMES = frozenset(
    {"metadata.google.internal", "metadata.goog", "metadata", "instance-data",
     "instance-data.ec2.internal"}
)
# Names that resolve only on a local network or this machine (RFC 6761, 6762, 8375, and
# ICANN's private-use .internal), and the suffixes home routers hand out.
LOCAL_SUFFIXES = (".local", ".localhost", ".internal", ".home.arpa", ".localdomain", ".lan")

# Order matters: the first matching range names the refusal.
REFUSED_NETWORKS: tuple[tuple[str, ipaddress.IPv4Network | ipaddress.IPv6Network], ...] = tuple(
    (label, ipaddress.ip_network(net))
    for label, net in (
        ("unspecified", "0.0.0.0/8"),
        ("unspecified", "::/128"),
        ("loopback", "127.0.0.0/8"),
        ("loopback", "::1/128"),
        ("private", "10.0.0.0/8"),
        ("private", "172.16.0.0/12"),
        ("private", "192.168.0.0/16"),
        ("link-local", "169.254.0.0/16"),
        ("link-local", "fe80::/10"),
        ("CGNAT", "100.64.0.0/10"),
        ("unique-local (ULA)", "fc00::/7"),
        # A site's own NAT64 translator: where the IPv4 address sits depends on its prefix
        # length, so every address of the range is refused.
        ("NAT64 local-use", "64:ff9b:1::/48"),
        ("site-local", "fec0::/10"),
        ("multicast", "224.0.0.0/4"),
        ("multicast", "ff00::/8"),
        ("broadcast", "255.255.255.255/32"),
        ("reserved", "240.0.0.0/4"),
    )
)
# Refusals no allow-list lifts.
_ABSOLUTE = ("cloud metadata", "IPv6-embedded cloud metadata", "unspecified")


_HEX_PART = re.compile(r"0x[0-9a-f]*")
_OCTAL_PART = re.compile(r"0[0-7]+")
_DECIMAL_PART = re.compile(r"0|[1-9][0-9]*")


def parse_numeric_host(host: str) -> IPAddress | None:
    """The address a literal host means to the C resolver, in any spelling; None for names.

    `inet_aton` accepts 1-4 parts, each decimal, octal (leading 0) or hex (0x), the last part
    filling the remaining bytes: 2130706433, 0177.0.0.1, 0x7f.0.0.1 and 127.1 are all
    127.0.0.1. Parsing them here means no spelling reaches the network unchecked.
    """
    candidate = unquote(host).strip("[]").rstrip(".").lower()
    if ":" in candidate:
        try:
            return ipaddress.IPv6Address(candidate.split("%", 1)[0])
        except ValueError:
            return None
    parts = candidate.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        if _HEX_PART.fullmatch(part):
            values.append(int(part[2:] or "0", 16))
        elif _OCTAL_PART.fullmatch(part):
            values.append(int(part, 8))
        elif _DECIMAL_PART.fullmatch(part):
            values.append(int(part))
        else:
            return None
    *leading, last = values
    if any(v > 255 for v in leading) or last >= 256 ** (4 - len(leading)):
        return None
    number = last
    for index, value in enumerate(leading):
        number += value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # IPv4-translated (SIIT)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one tunnels to (mapped, NAT64, 6to4, Teredo, compatible)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    packed = address.packed
    if packed[:12] == bytes(12) and int(address) > 1:  # ::a.b.c.d (deprecated compatible)
        return ipaddress.IPv4Address(packed[12:])
    if address in _NAT64 or address in _TRANSLATED:
        return ipaddress.IPv4Address(packed[12:])
    return None


def address_refusal(address: IPAddress) -> str | None:
    """Why this address must not be reached (e.g. "loopback"), or None when it is public."""
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    if isinstance(address, ipaddress.IPv6Address):
        tunnelled = embedded_ipv4(address)
        if tunnelled is not None:
            inner = address_refusal(tunnelled)
            return f"IPv6-embedded {inner}" if inner else None
    for label, network in REFUSED_NETWORKS:
        if address.version == network.version and address in network:
            return label
    if not address.is_global:  # documentation, benchmarking and other special ranges
        return "non-global"
    return None


def is_absolute(refusal: str) -> bool:
    """Whether a refusal stands even for an allow-listed host."""
    return refusal.startswith(_ABSOLUTE)


def host_refusal(host: str, *, allowed: bool = False) -> str | None:
    """Why a URL with this host must not be fetched or cited, from its spelling alone; None
    when it may. `allowed` (its `host:port` is allow-listed) leaves only the refusals no
    allow-list lifts."""
    name = unquote(host).strip("[]").rstrip(".").lower()
    if name in METADATA_HOSTNAMES:
        return f"cloud metadata host {name}"
    literal = parse_numeric_host(name)
    if literal is not None:
        label = address_refusal(literal)
        refusal = f"{label} address {literal}" if label else None
    elif name == "localhost" or name.endswith(".localhost"):
        refusal = f"loopback name {name}"
    elif name.endswith(LOCAL_SUFFIXES):
        refusal = f"local-network name {name}"
    elif "." not in name:
        refusal = f"single-label host {name!r}"
    else:
        refusal = None
    if refusal is None or (allowed and not is_absolute(refusal)):
        return None
    return refusal


def allow_keys(entries: Iterable[str]) -> frozenset[str]:
    """Allow-list entries as `host:port` keys: the port is part of it, so letting a local
    test site through never opens the other services of that host; a bare host means its
    default ports only (80 and 443), as in a URL. IPv6 hosts with a port are `[::1]:8080`."""
    return frozenset(key for entry in entries if entry.strip() for key in _keys(entry))


def _keys(entry: str) -> tuple[str, ...]:
    entry = entry.strip().lower()
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest.removeprefix(":")
    elif entry.count(":") == 1:
        host, _, port = entry.partition(":")
    else:
        host, port = entry, ""
    host = host.rstrip(".")
    return (f"{host}:{port}",) if port else (f"{host}:80", f"{host}:443")


def url_refusal(url: str, allow: frozenset[str] = frozenset()) -> str | None:
    """Why a URL may not become evidence on address grounds (see `host_refusal`); None
    when it may. A URL that cannot be parsed has no host worth trusting."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return f"unparseable URL {url[:80]!r}"
    if not host:
        return f"no host in {url[:80]!r}"
    port = port or (443 if parts.scheme.lower() == "https" else 80)
    return host_refusal(host, allowed=f"{host.rstrip('.')}:{port}" in allow)
