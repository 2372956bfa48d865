"""The SSRF guard's refusal matrix: every spelling of a non-public target is refused, by name.

These never connect: literal hosts are refused before any DNS or TCP, and names go through a
scripted resolver.
"""

from __future__ import annotations

import ipaddress
import re

import httpcore
import pytest

from pmflow_gateway.adapters.pinned_transport import PinnedNetworkBackend
from pmflow_gateway.adapters.ssrf import FetchRefused, SafeFetcher
from pmflow_gateway.contract.addresses import address_refusal, parse_numeric_host


async def resolver_must_not_run(host: str, port: int) -> list[str]:
    raise AssertionError(f"a literal host must not be resolved ({host})")


REFUSED_LITERALS = [
    ("ftp://example.com/file", "scheme 'ftp' refused"),
    ("file:///etc/passwd", "scheme 'file' refused"),
    ("gopher://example.com:70/", "scheme 'gopher' refused"),
    ("http://127.0.0.1/", "loopback address 127.0.0.1"),
    ("http://127.1/", "loopback address 127.0.0.1"),
    ("http://2130706433/", "loopback address 127.0.0.1"),
    ("http://0177.0.0.1/", "loopback address 127.0.0.1"),
    ("http://0x7f.0.0.1/", "loopback address 127.0.0.1"),
    ("http://0x7f000001/", "loopback address 127.0.0.1"),
    ("http://%31%32%37.0.0.1/", "loopback address 127.0.0.1"),
    ("http://127.0.0.1./", "loopback address 127.0.0.1"),
    ("http://[::1]/", "loopback address ::1"),
    ("http://[::ffff:127.0.0.1]/", "IPv6-embedded loopback"),
    ("http://[::ffff:7f00:1]/", "IPv6-embedded loopback"),
    ("http://[64:ff9b::7f00:1]/", "IPv6-embedded loopback"),
    ("http://[::ffff:0:7f00:1]/", "IPv6-embedded loopback"),
    ("http://[::ffff:0:a00:1]/", "IPv6-embedded private"),
    ("http://[64:ff9b:1::7f00:1]/", "NAT64 local-use"),
    ("http://[64:ff9b:1::808:808]/", "NAT64 local-use"),
    ("http://[2002:7f00:1::]/", "IPv6-embedded loopback"),
    ("http://10.0.0.1/", "private address 10.0.0.1"),
    ("http://012.0.0.1/", "private address 10.0.0.1"),
    ("http://172.16.5.4/", "private address 172.16.5.4"),
    ("http://172.31.255.255/", "private address 172.31.255.255"),
    ("http://192.168.1.1/", "private address 192.168.1.1"),
    ("http://3232235777/", "private address 192.168.1.1"),
    ("http://[::ffff:192.168.1.1]/", "IPv6-embedded private"),
    ("http://169.254.1.1/", "link-local address 169.254.1.1"),
    ("http://[fe80::1]/", "link-local address fe80::1"),
    ("http://[fe80::1%25eth0]/", "link-local address fe80::1"),
    ("http://100.64.0.1/", "CGNAT address 100.64.0.1"),
    ("http://100.127.255.254/", "CGNAT address 100.127.255.254"),
    ("http://[fd12:3456::1]/", "unique-local (ULA) address fd12:3456::1"),
    ("http://[fc00::1]/", "unique-local (ULA) address fc00::1"),
    ("http://224.0.0.1/", "multicast address 224.0.0.1"),
    ("http://[ff02::1]/", "multicast address ff02::1"),
    ("http://0.0.0.0/", "unspecified address 0.0.0.0"),
    ("http://0/", "unspecified address 0.0.0.0"),
    ("http://[::]/", "unspecified address ::"),
    ("http://255.255.255.255/", "broadcast address 255.255.255.255"),
    ("http://240.0.0.1/", "reserved address 240.0.0.1"),
    ("http://192.0.2.10/", "non-global address 192.0.2.10"),
    ("http://169.254.169.254/latest/meta-data/", "cloud metadata address 169.254.169.254"),
    ("http://[fd00:ec2::254]/", "cloud metadata address fd00:ec2::254"),
    ("http://[::ffff:169.254.169.254]/", "IPv6-embedded cloud metadata"),
    ("http://2852039166/", "cloud metadata address 169.254.169.254"),
    ("http://metadata.google.internal/computeMetadata/v1/", "cloud metadata host"),
    ("http://good.com@127.0.0.1/", "userinfo in URL refused (the real host is 127.0.0.1)"),
    ("http://user:pw@example.com/", "userinfo in URL refused"),
    ("http:///nohost", "has no host"),
]


@pytest.mark.parametrize(("url", "reason"), REFUSED_LITERALS)
async def test_ssrf_refuses_with_a_clear_reason(url: str, reason: str) -> None:
    fetcher = SafeFetcher(resolver=resolver_must_not_run)
    with pytest.raises(FetchRefused) as refused:
        await fetcher.fetch(url)
    assert reason in refused.value.reason


async def test_ssrf_refuses_a_name_that_resolves_to_loopback() -> None:
    async def loopback(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    with pytest.raises(FetchRefused, match=r"loopback address \S+ refused for host lo\.example"):
        await SafeFetcher(resolver=loopback).fetch("http://lo.example:9/")


@pytest.mark.parametrize(("url", "reason"), [
    ("http://localhost:9/", "loopback name localhost"),
    ("http://app.localhost/", "loopback name app.localhost"),
    ("http://printer.local/", "local-network name printer.local"),
    ("http://db.corp.internal/", "local-network name db.corp.internal"),
    ("http://nas.home.arpa/", "local-network name nas.home.arpa"),
    ("http://intranet/", "single-label host 'intranet'"),
])
async def test_ssrf_refuses_local_only_names_before_any_dns(url: str, reason: str) -> None:
    with pytest.raises(FetchRefused, match=re.escape(reason)):
        await SafeFetcher(resolver=resolver_must_not_run).fetch(url)


async def test_ssrf_refuses_a_name_when_any_answer_is_refused() -> None:
    async def mixed(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "10.1.2.3"]

    refusal = "private address 10.1.2.3 refused for host mixed.example"
    with pytest.raises(FetchRefused, match=re.escape(refusal)):
        await SafeFetcher(resolver=mixed).fetch("https://mixed.example/")


async def test_ssrf_refuses_a_name_that_does_not_resolve() -> None:
    async def nxdomain(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(FetchRefused, match="does not resolve"):
        await SafeFetcher(resolver=nxdomain).fetch("https://nowhere.example/")


async def test_ssrf_lets_public_addresses_through_the_check() -> None:
    async def public(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]

    fetcher = SafeFetcher(resolver=public)
    backend = PinnedNetworkBackend()
    checked = await fetcher.check("https://example.com/page", backend)
    assert checked.host == "example.com"
    assert (await fetcher.check("http://172.32.0.1/")).host == "172.32.0.1"
    assert (await fetcher.check("http://8.8.8.8/")).host == "8.8.8.8"
    assert (await fetcher.check("https://例子.中国/")).raw_host == b"xn--fsqu00a.xn--fiqs8s"


async def test_ssrf_refuses_a_resolver_answer_that_is_not_an_address() -> None:
    async def garbage(host: str, port: int) -> list[str]:
        return ["not-an-ip"]

    with pytest.raises(FetchRefused, match="not an address"):
        await SafeFetcher(resolver=garbage).fetch("https://odd.example/")


async def test_ssrf_allow_list_lets_named_hosts_through_but_never_metadata() -> None:
    fetcher = SafeFetcher(allow_hosts=["localhost", "127.0.0.1:8080", "169.254.169.254",
                                       "[::1]:8443"])
    assert (await fetcher.check("http://localhost/")).host == "localhost"
    assert (await fetcher.check("https://localhost/")).host == "localhost"
    assert (await fetcher.check("https://[::1]:8443/")).port == 8443
    with pytest.raises(FetchRefused, match="loopback"):
        await fetcher.check("http://localhost:1234/")  # a bare host: its default ports only
    assert (await fetcher.check("http://127.0.0.1:8080/")).port == 8080
    with pytest.raises(FetchRefused, match="loopback"):
        await fetcher.check("http://127.0.0.1:8081/")  # the entry names one port only
    with pytest.raises(FetchRefused, match="cloud metadata"):
        await fetcher.check("http://169.254.169.254/")


async def test_ssrf_backend_never_connects_to_an_unchecked_host() -> None:
    backend = PinnedNetworkBackend()
    backend.pin("checked.example", 80, ["127.0.0.1"])
    unchecked = re.escape("no checked address for other.example:80")
    with pytest.raises(httpcore.ConnectError, match=unchecked):
        await backend.connect_tcp("other.example", 80)
    with pytest.raises(httpcore.ConnectError, match="no checked address"):
        await backend.connect_tcp("checked.example", 8080)


@pytest.mark.parametrize(
    ("host", "address"),
    [("2130706433", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"), ("0x7f.0.0.1", "127.0.0.1"),
     ("127.1", "127.0.0.1"), ("10.1", "10.0.0.1"), ("0x0a.0x01.0x02.0x03", "10.1.2.3"),
     ("[::ffff:127.0.0.1]", "::ffff:7f00:1"), ("example.com", None), ("1.2.3.4.5", None),
     ("256.1.1.1", None), ("08.1.1.1", None), ("0x1g.0.0.1", None)],
)
def test_ssrf_reads_numeric_hosts_the_way_inet_aton_does(host: str, address: str | None) -> None:
    # Compared as addresses: Python 3.13 prints an IPv4-mapped IPv6 address in dotted form.
    expected = ipaddress.ip_address(address) if address else None
    assert parse_numeric_host(host) == expected


def test_ssrf_public_addresses_have_no_refusal() -> None:
    for text in ("8.8.8.8", "1.1.1.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"):
        assert address_refusal(ipaddress.ip_address(text)) is None
