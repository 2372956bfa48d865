"""What identifies a page and what identifies a site, for every stage and adapter.

A page is its canonical URL. A site is the registrable domain of its host (the label just
below the public suffix, from the Public Suffix List): `mausam.imd.gov.in` and `imd.gov.in`
are one site, `alice.github.io` and `bob.github.io` are two.
"""

from __future__ import annotations

import functools
from urllib.parse import urlsplit, urlunsplit

from tld import get_tld


@functools.lru_cache(maxsize=8192)  # pure, asked for the same URLs by several stages
def canonical_url(url: str) -> str:
    """Scheme and host lower-cased, fragment and trailing slash dropped: one page, one key.
    Raises ValueError when the URL cannot be parsed."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def url_key(url: str) -> str | None:
    """`canonical_url`, or None when the URL cannot even be parsed (it then matches nothing)."""
    try:
        return canonical_url(url)
    except ValueError:
        return None


@functools.lru_cache(maxsize=8192)
def host_of(url: str) -> str:
    """The URL's host, lower case; "" when it has none or cannot be parsed."""
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


def bare_host(url: str) -> str:
    """The host as a reader writes it: without a leading `www.`."""
    return host_of(url).removeprefix("www.")


@functools.lru_cache(maxsize=8192)
def registrable_domain(host: str) -> str:
    """The site a host belongs to: public suffix plus one label. A host under no known suffix
    (an IP address, `localhost`, a made-up TLD) keeps its last two labels."""
    host = host.lower().strip(".")
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
