"""Demo data never poses as real data: pages on hosts reserved for examples and tests
(example.com/.net/.org, .example, .test, .invalid, .localhost) cannot be a real outlet, so an
answer built from one is flagged and its reply says so in both languages."""

from __future__ import annotations

from urllib.parse import urlsplit

_RESERVED_DOMAINS = ("example.com", "example.net", "example.org")
_RESERVED_SUFFIXES = ("example", "test", "invalid", "localhost")

DEMO_NOTICE = ("【演示数据】本回答引用的是演示页面（示例专用域名）："
               "内容与日期均为虚构，并非真实信息。",
               "[Demo data] This reply cites demo pages on hosts reserved for examples: their "
               "text and dates are invented, not real information.")


def is_demo_url(url: str) -> bool:
    try:
        host = (urlsplit(url.strip()).hostname or "").rstrip(".").lower()
    except ValueError:
        return False
    if not host:
        return False
    if host.rsplit(".", 1)[-1] in _RESERVED_SUFFIXES:
        return True
    return any(host == d or host.endswith("." + d) for d in _RESERVED_DOMAINS)


def demo_notice(*, english: bool) -> str:
    """Both languages, the reply's own first: a notice must be read whoever reads it."""
    zh, en = DEMO_NOTICE
    return f"{en}\n{zh}" if english else f"{zh}\n{en}"
