"""The readable text of a fetched HTML page, with everything a reader cannot see removed.

Fetched text is data that may try to instruct whoever reads it, and the classic trick is text
a human never sees: `display:none`, `hidden`, `aria-hidden`, zero-size fonts, zero-width
characters. Those go first; then trafilatura finds the main text, with a plain block-by-block
reading as the fallback for pages it rejects (short pages, tables, odd layouts).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from pmflow_gateway.contract.text import strip_invisible

HIDING_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden"
    r"|font-size\s*:\s*0+(?:\.0+)?\s*(?:px|em|rem|pt|%)?\s*(?:;|$)"
    r"|opacity\s*:\s*0+(?:\.0+)?\s*(?:;|$)|(?<![-\w])(?:width|height)\s*:\s*0+(?:px)?\s*(?:;|$)",
    re.IGNORECASE,
)
HIDING_CLASSES = frozenset({"hidden", "d-none", "sr-only", "visually-hidden", "screen-reader-text",
                            "hide", "invisible", "is-hidden"})
NEVER_TEXT = ("script", "style", "noscript", "template", "iframe", "object", "embed", "svg",
              "canvas", "select", "button", "nav", "footer", "aside")
BLOCK_TAGS = ("p", "div", "br", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
              "section", "article", "header", "pre", "blockquote", "dd", "dt", "table", "ul", "ol")
# A page's own style sheets and its title are read only this far: a hostile page can make
# either as long as its byte cap allows.
MAX_STYLE_CHARS = 64_000
MAX_TITLE_CHARS = 300
SIMPLE_SELECTOR = re.compile(r"([.#])([\w-]+)")


@dataclass(frozen=True, kw_only=True)
class PageText:
    title: str
    site_name: str | None
    text: str


def read_page(page_html: str) -> PageText:
    """Title, site name and visible main text of an HTML page (empty text if unreadable)."""
    try:
        tree = lxml_html.document_fromstring(strip_invisible(page_html))
    except (ValueError, etree.ParserError):
        return PageText(title="", site_name=None, text="")
    title = (_meta(tree, "og:title") or _first_text(tree, "title"))[:MAX_TITLE_CHARS]
    site_name = _meta(tree, "og:site_name") or _meta(tree, "application-name") or None
    remove_invisible(tree)
    cleaned_html = lxml_html.tostring(tree, encoding="unicode")
    text = _main_text(cleaned_html, tree)
    return PageText(title=title, site_name=site_name, text=text)


def remove_invisible(tree: Any) -> None:
    """Drop every element a browser would not show, in place."""
    hidden_classes, hidden_ids = _classes_hidden_by_style_blocks(tree)
    doomed = []
    for element in tree.iter():
        if not isinstance(element.tag, str):  # comments, processing instructions
            doomed.append(element)
            continue
        classes = set((element.get("class") or "").lower().split())
        if (element.tag in NEVER_TEXT
                or element.get("hidden") is not None
                or (element.get("aria-hidden") or "").strip().lower() == "true"
                or (element.tag == "input" and (element.get("type") or "").lower() == "hidden")
                or HIDING_STYLE.search(element.get("style") or "")
                or classes & (HIDING_CLASSES | hidden_classes)
                or (element.get("id") or "").lower() in hidden_ids):
            doomed.append(element)
    for element in doomed:
        if element.getparent() is not None:
            element.drop_tree()  # keeps the tail text, which belongs to the parent


def _classes_hidden_by_style_blocks(tree: Any) -> tuple[set[str], set[str]]:
    """`.x{display:none}` and `#y{...}` rules of the page's own <style> blocks."""
    classes: set[str] = set()
    ids: set[str] = set()
    budget = MAX_STYLE_CHARS
    for style in tree.iter("style"):
        sheet = (style.text or "")[:budget]
        budget -= len(sheet)
        for selectors, body in _style_rules(sheet):
            if not HIDING_STYLE.search(body):
                continue
            for selector in selectors.split(","):
                simple = SIMPLE_SELECTOR.fullmatch(selector.strip().lower())
                if simple is not None:
                    (classes if simple[1] == "." else ids).add(simple[2])
    return classes, ids


def _style_rules(sheet: str) -> list[tuple[str, str]]:
    """`selectors { body }` pairs, by splitting at braces: a regex over brace-less text
    would retry from every character."""
    rules = []
    for rule in sheet.split("}")[:-1]:  # the part after the last "}" is no complete rule
        selectors, brace, body = rule.rpartition("{")
        selectors = selectors.rpartition("{")[2]  # nested blocks: the innermost selector
        if brace and selectors.strip():
            rules.append((selectors, body))
    return rules


def _main_text(cleaned_html: str, tree: Any) -> str:
    plain = plain_text(tree)
    extracted = _trafilatura_text(cleaned_html)
    # trafilatura drops boilerplate but sometimes the answer with it (short pages, forecast
    # tables); keep its reading only when it kept a fair share of the visible text.
    if extracted and (len(extracted) >= 200 or len(extracted) >= 0.5 * len(plain)):
        return strip_invisible(extracted)
    return plain


@functools.cache
def _trafilatura() -> Any:
    """trafilatura, or None when it cannot load (lxml 6 without `lxml_html_clean`)."""
    try:
        import trafilatura
    except ImportError:
        return None
    return trafilatura


def _trafilatura_text(cleaned_html: str) -> str:
    trafilatura = _trafilatura()
    if trafilatura is None:
        return ""
    try:
        # fast: no justext/readability second opinions (10x the CPU); plain_text is our
        # fallback anyway.
        text = trafilatura.extract(cleaned_html, fast=True, favor_recall=True,
                                   include_comments=False, include_tables=True,
                                   deduplicate=False)
    except Exception:  # hostile or broken markup must not cost us the plain reading
        return ""
    return (text or "").strip()


def plain_text(tree: Any) -> str:
    """The body's text with one line per block element."""
    body = tree.find("body")
    root = body if body is not None else tree
    for element in root.iter(*BLOCK_TAGS):
        element.tail = "\n" + (element.tail or "")
    lines = (" ".join(line.split()) for line in "".join(root.itertext()).splitlines())
    return "\n".join(line for line in lines if line)


def _meta(tree: Any, key: str) -> str:
    for meta in tree.iter("meta"):
        if (meta.get("property") or meta.get("name") or "").lower() == key:
            return " ".join((meta.get("content") or "").split())
    return ""


def _first_text(tree: Any, tag: str) -> str:
    element = next(tree.iter(tag), None)
    return " ".join(element.text_content().split()) if element is not None else ""
