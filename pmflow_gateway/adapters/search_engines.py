"""The search endpoints the live-search fallback can ask: DuckDuckGo's HTML page, SearxNG JSON.

An engine only builds the request URL and reads result links out of the response; the
fetching (through the SSRF guard) and everything after it belong to the adapter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

from lxml import etree
from lxml import html as lxml_html

from pmflow_gateway.adapters.ssrf import FetchedPage
from pmflow_gateway.schemas.contracts import URL_CHARS


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

    def search_url(self, query: str) -> str: ...

    def parse(self, page: FetchedPage) -> list[SearchHit]: ...

    def rate_limited(self, page: FetchedPage) -> bool:
        """Whether `page` is the engine telling us to slow down rather than a result page."""
        ...


class DuckDuckGoHtml:
    """`html.duckduckgo.com/html/`: results are `a.result__a`, wrapped in a `uddg` redirect."""

    def __init__(self, endpoint: str = "https://html.duckduckgo.com/html/",
                 region: str | None = None) -> None:
        self.endpoint = endpoint
        self.region = region  # DuckDuckGo's `kl`, e.g. "cn-zh"; None lets it guess

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
    """A SearxNG instance's JSON API: `{base_url}/search?q=...&format=json`."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    def search_url(self, query: str) -> str:
        return f"{self.base_url}/search?{urlencode({'q': query, 'format': 'json'})}"

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
