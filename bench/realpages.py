"""`python -m bench.realpages text|answers`: the gateway on real news pages.

The pages are the 161 saved articles of `../shared/realpages/` (a public extraction
benchmark's fixtures, annotated with their article text). Two measurements:

- `text`: our page-text step (`adapters/page_text.read_page`) against the annotated article
  text, scored as the benchmark scores extractors (4-word shingles, precision and recall
  averaged over pages, F1 of the two), side by side with plain trafilatura in the same run.
- `answers --labels FILE`: labelled questions through the real stage cores with the live
  search as the only provider. A local SearXNG-compatible engine answers the searches (JSON,
  BM25 over each page's title and article text) and a local web server serves every page at
  its own host name; each page is moved in time so that it was published a few hours ago
  (every date written in it shifts by the same number of days). Scored like
  `bench.answers`. The labels name their right page (`page`), which only the report reads.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import hashlib
import json
import math
import re
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bench.answers import Scored, load_labels, route_event, score, summary, table
from bench.support import LocalServer, QuietHandler
from pmflow_gateway.adapters.clock import SystemClock
from pmflow_gateway.adapters.live_search import LiveSearchAdapter
from pmflow_gateway.adapters.page_text import read_page
from pmflow_gateway.adapters.search_engines import SearxngJson
from pmflow_gateway.adapters.store import open_store
from pmflow_gateway.embedded import ask_in_process
from pmflow_gateway.handlers.model_composer import make_composer
from pmflow_gateway.handlers.planners.rules import RulesPlanner
from pmflow_gateway.ports import Deps
from pmflow_gateway.settings import Settings

REALPAGES = Path(__file__).resolve().parent.parent.parent / "shared" / "realpages"
ENGINE_HOST = "search.engine.test"


# ---------------------------------------------------------------- the pages


@dataclass(frozen=True)
class RealPage:
    id: str
    url: str
    html: bytes
    article: str


def load(root: Path = REALPAGES) -> list[RealPage]:
    truth = json.loads((root / "ground-truth.json").read_text("utf-8"))
    return [RealPage(id=key, url=row["url"], article=row.get("articleBody") or "",
                     html=gzip.decompress((root / "html" / f"{key}.html.gz").read_bytes()))
            for key, row in sorted(truth.items())]


# ---------------------------------------------------------------- text quality

_TOKEN = re.compile(r"\w+", re.UNICODE)


def shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    return Counter(tuple(tokens[i:i + n]) for i in range(max(1, len(tokens) - n + 1))
                   if tokens[i:i + n])


def tp_fp_fn(true: str, pred: str) -> tuple[float, float, float]:
    """Shingle counts, normalised so that a long article weighs as much as a short one."""
    want, got = shingles(true), shingles(pred)
    tp = sum(min(want[k], got[k]) for k in want.keys() | got.keys())
    fp = sum(max(0, got[k] - want[k]) for k in got)
    fn = sum(max(0, want[k] - got[k]) for k in want)
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def f1(counts: list[tuple[float, float, float]]) -> dict[str, float]:
    def ratio(a: float, b: float, other: float) -> float:
        if b == other == 0:
            return 1.0
        return a / (a + b) if a + b else 0.0
    precision = statistics.mean(ratio(tp, fp, fn) for tp, fp, fn in counts if tp + fp > 0)
    recall = statistics.mean(ratio(tp, fn, fp) for tp, fp, fn in counts if tp + fn > 0)
    return {"f1": round(2 * precision * recall / (precision + recall), 4),
            "precision": round(precision, 4), "recall": round(recall, 4)}


def text_quality(pages: list[RealPage]) -> dict[str, Any]:
    import trafilatura

    ours, plain = [], []
    for page in pages:
        html = page.html.decode("utf-8", "replace")
        ours.append(tp_fp_fn(page.article, read_page(html).text))
        plain.append(tp_fp_fn(page.article, trafilatura.extract(html, include_comments=False)
                              or ""))
    return {"pages": len(pages), "ours (read_page)": f1(ours),
            f"trafilatura {trafilatura.__version__} (plain extract)": f1(plain)}


# ---------------------------------------------------------------- moved in time

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = (r"(?P<mon>jan(?:uary|\.)?|feb(?:ruary|\.)?|mar(?:ch|\.)?|apr(?:il|\.)?|may"
          r"|june?|july?|aug(?:ust|\.)?|sep(?:t(?:ember|\.)?|\.)?|oct(?:ober|\.)?"
          r"|nov(?:ember|\.)?|dec(?:ember|\.)?)")
_DATES = re.compile(
    r"(?P<iso>(?<!\d)(?P<y1>(?:19|20)\d\d)(?P<s1>[-/])(?P<m1>[01]\d)(?P=s1)(?P<d1>[0-3]\d)(?!\d))"
    rf"|(?P<mdy>(?<![a-z]){_MONTH}\s+(?P<d2>[0-3]?\d)(?:st|nd|rd|th)?,?\s+(?P<y2>(?:19|20)\d\d)"
    r"(?!\d))"
    rf"|(?P<dmy>(?<!\d)(?P<d3>[0-3]?\d)\.?\s+{_MONTH.replace('mon', 'mon3')}\s+"
    r"(?P<y3>(?:19|20)\d\d)(?!\d))"
    r"|(?P<dots>(?<![\d.])(?P<d4>[0-3]?\d)\.(?P<m4>[01]?\d)\.(?P<y4>(?:19|20)\d\d)(?![\d.]))",
    re.IGNORECASE)


def _month(text: str) -> int:
    key = text.lower().rstrip(".")[:3]
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(key))


def _shifted(match: re.Match[str], days: int) -> str:
    """The date moved by `days`, written the way the page wrote it."""
    g = match.groupdict()
    try:
        if g["iso"]:
            old = date(int(g["y1"]), int(g["m1"]), int(g["d1"]))
            new = old + timedelta(days=days)
            s = g["s1"]
            return f"{new.year}{s}{new.month:02d}{s}{new.day:02d}"
        if g["mdy"]:
            old = date(int(g["y2"]), _month(g["mon"]), int(g["d2"]))
            new = old + timedelta(days=days)
            return f"{_month_as(g['mon'], new.month)} {new.day}, {new.year}"
        if g["dmy"]:
            old = date(int(g["y3"]), _month(g["mon3"]), int(g["d3"]))
            new = old + timedelta(days=days)
            return f"{new.day} {_month_as(g['mon3'], new.month)} {new.year}"
        old = date(int(g["y4"]), int(g["m4"]), int(g["d4"]))
        new = old + timedelta(days=days)
        return f"{new.day:02d}.{new.month:02d}.{new.year}"
    except (ValueError, StopIteration):
        return match.group(0)


def _month_as(written: str, month: int) -> str:
    """Month `month` in the style of `written` (full, abbreviated, with a dot, capitalised)."""
    full = _MONTHS[month - 1]
    name = full if len(written.rstrip(".")) > 3 else full[:3]
    name += "." if written.endswith(".") and len(name) == 3 else ""
    return name.capitalize() if written[:1].isupper() else name


def age_hours(page_id: str) -> float:
    """A fixed age between 3 and 30 hours, different for each page."""
    return 3 + int(hashlib.sha1(page_id.encode()).hexdigest()[:6], 16) % 27


def original_date(html: str) -> datetime | None:
    from htmldate import find_date

    found = find_date(html, original_date=True, outputformat="%Y-%m-%dT%H:%M:%S")
    return datetime.fromisoformat(found).replace(tzinfo=UTC) if found else None


@dataclass(frozen=True)
class Served:
    page: RealPage
    host: str
    path: str
    html: bytes
    published: datetime | None
    title: str


def moved(page: RealPage, now: datetime, port: int) -> Served:
    text = page.html.decode("utf-8", "surrogateescape")
    parts = urlsplit(page.url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    was = original_date(text)
    published = None
    if was is not None:
        target = now - timedelta(hours=age_hours(page.id))
        days = (target.date() - was.date()).days
        if was + timedelta(days=days) > target:
            days -= 1
        text = _DATES.sub(lambda m: _shifted(m, days), text)
        path = _DATES.sub(lambda m: _shifted(m, days), path)  # /2019/11/18/ in the URL too
        published = was + timedelta(days=days)
    title = read_page(text).title or parts.path
    return Served(page=page, host=f"{parts.hostname}:{port}", path=path,
                  html=text.encode("utf-8", "surrogateescape"), published=published,
                  title=title)


def served_url(served: Served) -> str:
    return f"http://{served.host}{served.path}"


# ---------------------------------------------------------------- search engine

_WORD = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]")
_STOP = frozenset(["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have",
                   "how", "in", "is", "it", "its", "of", "on", "or", "the", "to", "was", "what",
                   "when", "where", "which", "who", "why", "will", "with", "did", "does", "do"])


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


class Engine:
    """BM25 over title (twice) and article text, like a search engine's index."""

    def __init__(self, pages: list[Served]) -> None:
        self.pages = pages
        self.docs = [Counter(_words(f"{p.title} {p.title} {p.page.article}")) for p in pages]
        self.avg = statistics.mean(sum(d.values()) for d in self.docs)
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}

    def search(self, query: str, limit: int = 8) -> list[Served]:
        words = set(_words(query))
        scored = []
        for page, doc in zip(self.pages, self.docs, strict=True):
            size = sum(doc.values())
            score = sum(self.idf.get(w, 0) * doc[w] * 2.2
                        / (doc[w] + 1.2 * (0.25 + 0.75 * size / self.avg))
                        for w in words if doc[w])
            if score > 0:
                scored.append((score, page))
        scored.sort(key=lambda row: -row[0])
        return [page for _, page in scored[:limit]]

    def results(self, query: str) -> dict[str, Any]:
        return {"query": query, "results": [
            {"url": served_url(p), "title": p.title,
             "content": " ".join(p.page.article.split())[:240],
             "publishedDate": p.published.isoformat() if p.published else None,
             "engine": "local"} for p in self.search(query)]}


class RealSite(LocalServer):
    """Every page at its own host name, and the engine at `ENGINE_HOST`, on one port."""

    def __init__(self, pages: list[RealPage]) -> None:
        self.requests: list[str] = []
        super().__init__(self._handler())
        now = datetime.now(UTC)
        self.served = [moved(p, now, self.port) for p in pages]
        self.by_address = {(s.host, s.path): s for s in self.served}
        self.engine = Engine(self.served)

    def allow_hosts(self) -> list[str]:
        return sorted({s.host for s in self.served} | {f"{ENGINE_HOST}:{self.port}"})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                host = self.headers.get("Host", "")
                site.requests.append(f"{host}{self.path}")
                if host.startswith(ENGINE_HOST):
                    query = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
                    self._send(200, "application/json",
                               json.dumps(site.engine.results(query)).encode())
                    return
                served = site.by_address.get((host, self.path))
                if served is None:
                    self._send(404, "text/plain", b"no such page")
                else:
                    self._send(200, "text/html", served.html)

            def _send(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


async def _local(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


async def run(labels: list[dict[str, Any]], pages: list[RealPage]) -> list[Scored]:
    with tempfile.TemporaryDirectory(prefix="pmflow-realpages-") as data_dir, \
            RealSite(pages) as site:
        store = await open_store(Settings(data_dir=Path(data_dir), database_url=None))
        adapter = LiveSearchAdapter(engine=SearxngJson(f"http://{ENGINE_HOST}:{site.port}"),
                                    allow_hosts=site.allow_hosts(), resolver=_local)
        deps = Deps(clock=SystemClock(), planner=RulesPlanner(), adapters=[adapter],
                    store=store, composer=make_composer(None), closers=[store.aclose])
        try:
            scored = []
            for label in labels:
                outcome = await ask_in_process(route_event(label), deps)
                status = outcome.answer.status.value if outcome.answer else "skipped"
                reply = outcome.reply.text if outcome.reply else ""
                verdict, why = score(label, status, reply)
                scored.append(Scored(label["question"], label["kind"], verdict, status, why,
                                     reply))
            return scored
        finally:
            await deps.aclose()


def _by_kind_lines(scored: list[Scored]) -> Iterator[str]:
    kinds: dict[str, Counter[str]] = {}
    for s in scored:
        kinds.setdefault(s.kind.split("_")[0], Counter())[s.verdict] += 1
    for kind, counts in sorted(kinds.items()):
        yield (f"{kind:14} correct {counts['correct']:3}  wrong {counts['wrong']:3}  "
               f"missed {counts['missed']:3}")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realpages", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["text", "answers"])
    parser.add_argument("--pages", type=Path, default=REALPAGES, help="the realpages folder")
    parser.add_argument("--labels", type=Path, help="label file (JSON lines), for answers")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    if not (args.pages / "ground-truth.json").is_file():
        parser.error(f"no ground-truth.json under {args.pages}")
    pages = load(args.pages)
    if args.what == "text":
        result: dict[str, Any] = text_quality(pages)
        print(json.dumps(result, indent=1))
    else:
        if args.labels is None or not args.labels.is_file():
            parser.error("answers needs --labels FILE")
        scored = asyncio.run(run(load_labels(args.labels), pages))
        print(table(scored))
        print("\n".join(_by_kind_lines(scored)))
        result = summary(scored)
        print(json.dumps(result, ensure_ascii=False))
        result = {"summary": result, "replies": [asdict(s) for s in scored]}
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
