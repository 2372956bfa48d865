"""The search endpoints the live-search fallback can ask: a SearXNG instance's JSON API, the
Brave Search API, and DuckDuckGo's HTML page (the zero-configuration fallback, not meant for
production: it is a page for people and rate-limits bursts).

An engine only builds the request URL and reads result links out of the response; the
fetching and everything after it belong to the adapter. `engine_fetcher` is how the engine
is reached: through the SSRF guard like any page, except that an endpoint the operator
configured is trusted (their own SearXNG on a private or loopback address), for the engine's
requests only: page fetches still refuse that address.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

from lxml import etree
from lxml import html as lxml_html

from pmflow_gateway.adapters.ssrf import FetchedPage, SafeFetcher
from pmflow_gateway.schemas.contracts import URL_CHARS

DUCKDUCKGO_HTML = "https://html.duckduckgo.com/html/"
BRAVE_WEB_SEARCH = "https://api.search.brave.com/res/v1/web/search"


@dataclass(frozen=True, kw_only=True)
class SearchHit:
    url: str
    title: str
    snippet: str = ""
    rank: int  # 1-based, within the query that found it
    # As the engine reported it, if it did: text, or epoch seconds from some engines.
    published: str | float | None = None


class SearchEngine(Protocol):
    """Turns a query into a URL to fetch, and the fetched page into result links."""

    name: str
    endpoint: str

    def request_headers(self) -> Mapping[str, str]:
        """Headers the engine's requests carry (an API key); sent to its endpoint only."""
        ...

    def search_url(self, query: str) -> str: ...

    def parse(self, page: FetchedPage) -> list[SearchHit]: ...

    def rate_limited(self, page: FetchedPage) -> bool:
        """Whether `page` is the engine telling us to slow down rather than a result page."""
        ...


class DuckDuckGoHtml:
    """`html.duckduckgo.com/html/`: results are `a.result__a`, wrapped in a `uddg` redirect."""

    name = "duckduckgo"

    def __init__(self, endpoint: str = DUCKDUCKGO_HTML, region: str | None = None) -> None:
        self.endpoint = endpoint
        self.region = region  # DuckDuckGo's `kl`, e.g. "cn-zh"; None lets it guess

    def request_headers(self) -> Mapping[str, str]:
        return {}

    def search_url(self, query: str) -> str:
        params = {"q": query} | ({"kl": self.region} if self.region else {})
        return f"{self.endpoint}?{urlencode(params)}"

    def rate_limited(self, page: FetchedPage) -> bool:
        # A client it finds too busy gets a 202 with a challenge page and no results.
        return page.status == 202

    def parse(self, page: FetchedPage) -> list[SearchHit]:
        try:
            tree = lxml_html.fromstring(page.text)
        except (ValueError, etree.ParserError):
            return []
        hits: list[SearchHit] = []
        for link in tree.xpath('//a[contains(concat(" ", normalize-space(@class), " "),'
                               ' " result__a ")]'):
            container = _result_container(link)
            if container is not None and "result--ad" in (container.get("class") or ""):
                continue  # sponsored results lead through an ad click URL
            url = _unwrap_redirect(urljoin(page.final_url, link.get("href") or ""))
            if url is None:
                continue
            snippet_nodes = container.xpath('.//*[contains(@class, "result__snippet")]') \
                if container is not None else []
            hits.append(SearchHit(
                url=url, title=" ".join(link.text_content().split()),
                snippet=" ".join(snippet_nodes[0].text_content().split()) if snippet_nodes else "",
                rank=len(hits) + 1))
        return hits


class SearxngJson:
    """A SearXNG instance's JSON API: `{base}/search?q=...&format=json`. The endpoint is the
    instance's base URL or its `/search` URL; JSON must be among the instance's
    `search.formats` (it answers 403 otherwise)."""

    name = "searxng"

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        base = endpoint.split("?", 1)[0].rstrip("/")
        self.search_endpoint = base if base.endswith("/search") else f"{base}/search"

    def request_headers(self) -> Mapping[str, str]:
        return {"Accept": "application/json"}

    def search_url(self, query: str) -> str:
        return f"{self.search_endpoint}?{urlencode({'q': query, 'format': 'json'})}"

    def rate_limited(self, page: FetchedPage) -> bool:
        return False  # its limiter answers 429, which every fetch already reads as such

    def parse(self, page: FetchedPage) -> list[SearchHit]:
        try:
            results = json.loads(page.text).get("results", [])
        except (ValueError, AttributeError):
            return []
        hits: list[SearchHit] = []
        for result in results if isinstance(results, list) else []:
            if not isinstance(result, dict) or not _is_web_url(str(result.get("url", ""))):
                continue
            hits.append(SearchHit(
                url=str(result["url"]), title=str(result.get("title") or ""),
                snippet=str(result.get("content") or ""), rank=len(hits) + 1,
                published=_date_value(result.get("publishedDate"))))
        return hits


class BraveSearch:
    """The Brave Search API (`/res/v1/web/search`): JSON, its key in `X-Subscription-Token`."""

    name = "brave"

    def __init__(self, api_key: str, endpoint: str = BRAVE_WEB_SEARCH, count: int = 10) -> None:
        self.endpoint = endpoint
        self._api_key = api_key
        self.count = count

    def __repr__(self) -> str:  # never the key
        return f"BraveSearch(endpoint={self.endpoint!r})"

    def request_headers(self) -> Mapping[str, str]:
        return {"X-Subscription-Token": self._api_key, "Accept": "application/json"}

    def search_url(self, query: str) -> str:
        return f"{self.endpoint}?{urlencode({'q': query, 'count': self.count})}"

    def rate_limited(self, page: FetchedPage) -> bool:
        return False  # it answers 429, which every fetch already reads as such

    def parse(self, page: FetchedPage) -> list[SearchHit]:
        try:
            web = json.loads(page.text).get("web") or {}
            results = web.get("results", [])
        except (ValueError, AttributeError):
            return []
        hits: list[SearchHit] = []
        for result in results if isinstance(results, list) else []:
            if not isinstance(result, dict) or not _is_web_url(str(result.get("url", ""))):
                continue
            hits.append(SearchHit(
                url=str(result["url"]), title=_untagged(result.get("title")),
                snippet=_untagged(result.get("description")), rank=len(hits) + 1,
                published=_date_value(result.get("page_age"))))
        return hits


def engine_fetcher(engine: SearchEngine, *, trust_endpoint: bool, max_bytes: int,
                   timeout_s: float) -> SafeFetcher:
    """The fetcher for the engine's own requests. `trust_endpoint`: the operator named this
    endpoint, so its address is let through even when private or loopback (cloud metadata
    never); a redirect elsewhere is checked like any page, and the engine's headers go to
    its endpoint only."""
    trusted = [endpoint_key(engine.endpoint)] if trust_endpoint else []
    return SafeFetcher(allow_hosts=trusted, max_bytes=max_bytes, max_redirects=2,
                       timeout_s=timeout_s, headers=engine.request_headers())


def endpoint_key(url: str) -> str:
    """`host:port` of a URL, as the SSRF guard's allow-list spells it."""
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _untagged(value: object) -> str:
    """Text of an API field that may carry highlighting tags (`<strong>`)."""
    return " ".join(re.sub(r"<[^>]{0,40}>", "", str(value or "")).split())


def _result_container(link: Any) -> Any:
    for ancestor in link.iterancestors():
        classes = (ancestor.get("class") or "").split()
        if "result" in classes or "web-result" in classes:
            return ancestor
    return None


def _unwrap_redirect(href: str) -> str | None:
    """The target of DuckDuckGo's `/l/?uddg=<target>` click-through, or the link itself."""
    parts = urlsplit(href)
    if parts.path.rstrip("/").endswith("/l") and "uddg" in parse_qs(parts.query):
        href = parse_qs(parts.query)["uddg"][0]
    elif parts.path.endswith("/y.js"):
        return None  # an ad click URL
    return href if _is_web_url(href) else None


def _is_web_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and len(url) <= URL_CHARS


def _date_value(value: object) -> str | float | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, str | int | float) and value else None
