"""From whatever an MCP tool returned to hits: structured content, JSON text, or plain text.

MCP servers agree on the envelope, not on the result shape: our server and many others
return `{"results": [{title, url, snippet, ...}]}`, Microsoft Learn returns JSON text with
`contentUrl`, duckduckgo-mcp-server returns numbered plain text with `URL:` lines, and
mcp-server-fetch returns a page as markdown. Everything lands in `Hit`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from mcp.types import CallToolResult, TextContent

from pmflow_gateway.adapters.published import date_written_in, page_zone, plausible_date
from pmflow_gateway.contract.terms import terms
from pmflow_gateway.contract.urls import host_of
from pmflow_gateway.schemas.contracts import URL_CHARS

URL_KEYS = ("url", "link", "href", "contentUrl", "content_url", "source_url", "uri")
TITLE_KEYS = ("title", "name", "headline")
SNIPPET_KEYS = ("snippet", "content", "description", "summary", "text", "body", "abstract")
DATE_KEYS = ("published_at", "publishedAt", "published", "datePublished", "date",
             "updated_at", "updatedAt", "lastModified", "last_modified")
SITE_KEYS = ("site", "site_name", "siteName", "source", "domain")
LIST_KEYS = ("results", "result", "items", "hits", "documents", "data", "organic_results")
SNIPPET_CHARS = 400
PAGE_PASSAGE_CHARS = 1500  # a fetched page's evidence: its lead and its best paragraphs
LEAD_CHARS = 300
MAX_HITS = 50
# A fetched page is searched for its best paragraphs this far: enough for any article.
PAGE_CHARS = 200_000

_URL = re.compile(r"https?://[^\s<>\"'）)\]]+")
_ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_DATE_LABEL = re.compile(
    r"(?:published|updated|posted|last modified|date|发布|更新|时间)[^0-9\n]{0,12}", re.I)
_LIST_MARK = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")
_FIELD_LABEL = re.compile(r"^\s*(?:title|url|link|summary|snippet|description)\s*:\s*", re.I)
# A fetch tool's own header lines ("Published: …", "Site: …"): metadata, not the page's text.
_META_LINE = re.compile(r"^(?:published|updated|site|source|url|author|date"
                        r"|发布时间|更新时间|发布日期|来源|作者|日期)\s*[:：]\s*\S.{0,120}$", re.I)


@dataclass(frozen=True, kw_only=True)
class Hit:
    title: str
    url: str
    snippet: str
    published_at: datetime | None = None
    site: str | None = None
    source_type: str = "mcp_search"
    """"mcp_search" for a search result, "url" for a page the server fetched."""


def tool_error_text(result: CallToolResult) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))[:300]


def hits_from_search(result: CallToolResult, *, now: datetime, limit: int = MAX_HITS,
                     ) -> list[Hit]:
    """The first `limit` hits with an http(s) URL, in the server's order; anything else is
    dropped, and nothing past the limit is read."""
    records = _records(result.structured_content) if result.structured_content else []
    if not records:
        for block in result.content:
            if isinstance(block, TextContent):
                records.extend(_records_from_text(block.text))
    hits: list[Hit] = []
    for record in records:
        if (hit := _hit(record, now)) is not None:
            hits.append(hit)
            if len(hits) == limit:
                break
    return hits


def hit_from_page(url: str, result: CallToolResult, *, query: str, now: datetime) -> Hit | None:
    """A fetched page: title from its first heading, date from a labelled date in its text,
    snippet = its lead and the paragraphs sharing most terms with the query (`passage`)."""
    text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))[:PAGE_CHARS]
    text = re.sub(r"^Contents of \S+:\n", "", text)  # mcp-server-fetch's preamble
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines or urlsplit(url).scheme not in ("http", "https") or len(url) > URL_CHARS:
        return None
    title = next((ln.lstrip("# ") for ln in lines if ln.startswith("#")), lines[0])[:200]
    paragraphs = [ln for ln in lines if not ln.startswith("#") and not _META_LINE.match(ln)]
    return Hit(title=title, url=url, snippet=passage(paragraphs or lines, query),
               published_at=date_in_text(text, now, labelled_only=False),
               site=host_of(url) or None, source_type="url")


def passage(paragraphs: list[str], query: str, limit: int = PAGE_PASSAGE_CHARS) -> str:
    """What of a page is evidence: its lead (which says what the page is about) and then the
    paragraphs that share most terms with the query, in page order, within `limit`; one
    paragraph a line, so joined paragraphs never read as one sentence."""
    if not paragraphs:
        return ""
    wanted = terms(query)
    lead = paragraphs[0][:LEAD_CHARS] if len(paragraphs[0]) > LEAD_CHARS else paragraphs[0]
    ranked = sorted(range(1, len(paragraphs)),
                    key=lambda i: (-len(wanted & terms(paragraphs[i])), i))
    chosen = {0}
    used = len(lead)
    for i in ranked:
        size = len(paragraphs[i][:limit])
        if used + size > limit:
            continue
        chosen.add(i)
        used += size
    if len(paragraphs[0]) > LEAD_CHARS and used + len(paragraphs[0]) - len(lead) <= limit:
        lead = paragraphs[0]
    return "\n".join(lead if i == 0 else paragraphs[i] for i in sorted(chosen))[:limit]


def date_in_text(text: str, now: datetime, *, labelled_only: bool = True) -> datetime | None:
    """A publication date written in the text: its dateline or labelled date at the top
    ("KINGSTON, Ont., Dec. 2 —", "Published: ...", "发布于 ..."), else a labelled timestamp
    anywhere, else (pages only) the first date that is not in the future."""
    if (when := date_written_in(text, now, zone=page_zone(None, text))) is not None:
        return when
    for match in _DATE_LABEL.finditer(text):
        found = _ISO.match(text, match.end())
        if found and (when := plausible_date(found.group(), now)):
            return when
    if labelled_only:
        return None
    for found in _ISO.finditer(text):
        if when := plausible_date(found.group(), now):
            return when
    return None


def _records(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return [r for r in value if isinstance(r, dict)]
    if not isinstance(value, dict):
        return []
    if _first(value, URL_KEYS):
        return [value]
    for key in LIST_KEYS:
        if key in value:
            return _records(value[key])
    return []


def _records_from_text(text: str) -> list[dict[str, Any]]:
    try:
        records = _records(json.loads(text))
    except ValueError:
        records = []
    return records or _records_from_plain_text(text)


def _records_from_plain_text(text: str) -> list[dict[str, Any]]:
    """One record per block (blank-line or numbered-item separated) that holds a URL: its
    first other line is the title, the rest the snippet."""
    blocks = re.split(r"\n\s*\n|\n(?=\s*\d+[.)]\s)", text)
    records = []
    for block in blocks:
        urls = _URL.findall(block)
        if not urls:
            continue
        lines = [_FIELD_LABEL.sub("", _LIST_MARK.sub("", ln)).strip() for ln in block.splitlines()]
        others = [ln for ln in lines if ln and not _URL.fullmatch(ln)]
        title = others[0] if others else urls[0]
        records.append({"url": urls[0].rstrip(".,;"), "title": title,
                        "snippet": " ".join(others[1:])})
    return records


def _hit(record: dict[str, Any], now: datetime) -> Hit | None:
    url = _first(record, URL_KEYS)
    if not isinstance(url, str) or urlsplit(url.strip()).scheme.lower() not in ("http", "https"):
        return None
    url = url.strip()
    if len(url) > URL_CHARS:  # no event can carry it: dropped like any unusable hit
        return None
    title = str(_first(record, TITLE_KEYS) or "").strip()
    snippet = " ".join(str(_first(record, SNIPPET_KEYS) or "").split())[:SNIPPET_CHARS]
    published = plausible_date(_first(record, DATE_KEYS), now) or date_in_text(snippet, now)
    site = _first(record, SITE_KEYS)
    return Hit(title=title or snippet[:80] or url, url=url, snippet=snippet or title,
               published_at=published, site=site if isinstance(site, str) and site else None)


def _first(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((record[k] for k in keys if record.get(k) not in (None, "")), None)
