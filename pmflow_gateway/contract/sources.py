"""The source contract: which evidence may ground an answer and how a source is shown.

Only external http(s) sources count. A source that names an internal system (a workspace
document, chat history, our own records) or lives on a workspace host never grounds an
answer, and a filter that finds nothing usable keeps nothing: it never falls back to
internal or upstream material.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pmflow_gateway.contract.addresses import host_refusal
from pmflow_gateway.contract.memo import cached_if_short
from pmflow_gateway.contract.text import clean_sentences, strip_invisible
from pmflow_gateway.contract.urls import MAX_URL_CHARS, bare_host, registrable_domain

EXTERNAL_SOURCE_TYPES = frozenset({"url", "mcp_search", "live_search"})
# A source labelled only this is an internal one.
INTERNAL_BARE_LABELS = frozenset({"doc", "docs", "system", "internal", "history", "内部"})
# Workspace hosts: a link there is an internal document even when it travels as a URL.
INTERNAL_DOMAINS = frozenset({"feishu.cn", "feishu.net", "larksuite.com", "larkoffice.com",
                              "feishucdn.com"})
MAX_TITLE_CHARS = 300  # a title longer than this is page text, not a title
_WHITESPACE = re.compile(r"\s")


# Each source is checked by the answer stage's verifier, its sources summary and the renderer.
@cached_if_short(maxsize=2048)
def url_problem(url: str) -> str | None:
    """Why this URL may not be shown as a source, or None when it may."""
    if len(url) > MAX_URL_CHARS:
        return f"malformed url: {url[:80]!r}"
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"unparseable url: {url[:80]!r}"
    if parts.scheme.lower() not in ("http", "https"):
        return f"not http(s): {url[:80]!r}"
    if not parts.hostname or parts.username or parts.password:
        return f"no plain host: {url[:80]!r}"
    if strip_invisible(url) != url or _WHITESPACE.search(url):
        return f"malformed url: {url[:80]!r}"
    if registrable_domain(parts.hostname) in INTERNAL_DOMAINS:
        return f"internal workspace host: {parts.hostname}"
    # Adapters already applied the whole address rule, with the tests' allow-list; what no
    # allow-list lifts is checked again here, where every cited URL passes.
    if refusal := host_refusal(parts.hostname, allowed=True):
        return refusal
    return None


def source_title(title: str, url: str) -> str:
    """A page's title fit for one line of the summary. A title is page text too, so it is
    cleaned like a snippet (no link, marker, tag or planted instruction); the host of the
    page's `url` stands in for it when nothing is left."""
    return " ".join(clean_sentences(title[:MAX_TITLE_CHARS]))[:120] or bare_host(url)
