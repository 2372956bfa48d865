"""What identifies a page and what identifies a site, for every stage and adapter.

A page is its canonical URL. A site is the registrable domain of its host (the label just
below the public suffix, from the Public Suffix List): `mausam.imd.gov.in` and `imd.gov.in`
are one site, `alice.github.io` and `bob.github.io` are two.
"""

from __future__ import annotations

import re
import string
from urllib.parse import urlsplit, urlunsplit

from tld import get_tld

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.memo import cached_if_short

DEFAULT_PORTS = {"http": 80, "https": 443}
# Longer URLs are no source anyway, and are not parsed: `urlsplit` memoises what it parses.
MAX_URL_CHARS = 2048
MAX_HOST_CHARS = 253
# Query parameters that say how a reader arrived, never which page it is.
_TRACKING = CaseBlind(r"utm_\w*|fbclid|gclid|dclid|gbraid|wbraid|msclkid|yclid|igshid|mc_[ce]id"
                       r"|_hs(?:enc|mi)|spm|share_source|ref_src")
_ESCAPE = re.compile(r"%([0-9a-fA-F]{2})")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")


@cached_if_short(maxsize=8192)  # pure, asked for the same URLs by several stages
def canonical_url(url: str) -> str:
    """One key per page, whatever cosmetic spelling reached it: http and https, default
    ports, a trailing dot on the host, case, percent-escapes of plain characters, empty and
    dot path segments, a trailing slash, tracking parameters, parameter order and the
    fragment make no difference. Raises ValueError when the URL cannot be parsed; a URL
    too long to be a source is its own key."""
    if len(url) > MAX_URL_CHARS:
        return url.strip()
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if ":" in host:
        host = f"[{host}]"  # IPv6
    port = parts.port
    if port is not None and port != DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    if parts.username is not None or parts.password is not None:
        host = parts.netloc.rpartition("@")[0] + "@" + host
    query = "&".join(sorted(
        _unescape(pair) for pair in parts.query.split("&")
        if pair and not _TRACKING.fullmatch(pair.partition("=")[0])))
    return urlunsplit(("https" if scheme in DEFAULT_PORTS else scheme, host,
                       _normal_path(parts.path), query, ""))


def _unescape(text: str) -> str:
    """Escapes of unreserved characters decoded (`%71` is `q`), the others in upper case."""
    return _ESCAPE.sub(lambda m: chr(int(m[1], 16)) if chr(int(m[1], 16)) in _UNRESERVED
                       else m[0].upper(), text)


def _normal_path(path: str) -> str:
    """Dot segments resolved, empty segments and the trailing slash dropped."""
    kept: list[str] = []
    for segment in _unescape(path).split("/"):
        if segment == "..":
            if kept:
                kept.pop()
        elif segment not in ("", "."):
            kept.append(segment)
    return "/" + "/".join(kept)


def url_key(url: str) -> str | None:
    """`canonical_url`, or None when the URL cannot even be parsed (it then matches nothing)."""
    try:
        return canonical_url(url)
    except ValueError:
        return None


@cached_if_short(maxsize=8192)
def host_of(url: str) -> str:
    """The URL's host, lower case; "" when it has none or cannot be parsed."""
    try:
        # The host sits in the first few hundred characters of any URL that has one.
        return (urlsplit(url.strip()[:MAX_URL_CHARS]).hostname or "").lower()
    except ValueError:
        return ""


@cached_if_short(maxsize=8192)
def url_scheme(url: str) -> str:
    """The URL's scheme, lower case. Raises ValueError when the URL cannot be parsed."""
    return urlsplit(url).scheme.lower()


def bare_host(url: str) -> str:
    """The host as a reader writes it: without a leading `www.`."""
    return host_of(url).removeprefix("www.")


@cached_if_short(maxsize=8192)
def registrable_domain(host: str) -> str:
    """The site a host belongs to: public suffix plus one label. A host under no known suffix
    (an IP address, `localhost`, a made-up TLD) keeps its last two labels."""
    host = host.lower().strip(".")
    if len(host) > MAX_HOST_CHARS:
        return host  # no DNS name is this long: it matches nothing but itself
    labels = host.split(".")
    if len(labels) <= 2 or all(label.isdigit() for label in labels):
        return host
    found = get_tld(host, fix_protocol=True, fail_silently=True, as_object=True,
                    search_private=True)
    fld = getattr(found, "fld", None)
    return fld if isinstance(fld, str) and fld else ".".join(labels[-2:])


def site_of(url: str) -> str:
    """The registrable domain of the URL's host: what "a distinct source" counts."""
    return registrable_domain(host_of(url))


def host_within(host: str, domains: list[str]) -> bool:
    """Whether `host` is one of `domains` or a subdomain of one."""
    return any(host == d or host.endswith("." + d) for d in domains)
