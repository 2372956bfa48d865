"""The SSRF guard on a real local site: redirects re-checked, pinned connections, caps."""

from __future__ import annotations

import gzip
import re
import ssl
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pmflow_gateway.adapters.ssrf import FetchError, FetchRefused, FetchTimedOut, SafeFetcher
from tests.support.web_site import LocalSite

HTML = {"Content-Type": "text/html; charset=utf-8"}


@pytest.fixture
def site() -> Iterator[LocalSite]:
    with LocalSite({"/": (200, HTML, "<p>首页 home</p>")}) as local:
        yield local


def local_fetcher(site: LocalSite, **caps: float) -> SafeFetcher:
    """Lets only the name `localhost` on the site's port through, so 127.0.0.1 itself and the
    host's other ports stay refused."""
    return SafeFetcher(allow_hosts=[f"localhost:{site.port}"], **caps)  # type: ignore[arg-type]


async def test_ssrf_fetches_an_allow_listed_local_site(site: LocalSite) -> None:
    page = await local_fetcher(site).fetch(site.url("/", host="localhost"))
    assert page.status == 200
    assert page.text == "<p>首页 home</p>"
    assert page.content_type == "text/html"


async def test_ssrf_follows_a_relative_redirect_after_checking_it(site: LocalSite) -> None:
    site.routes["/old"] = (301, {"Location": "/"}, "")
    page = await local_fetcher(site).fetch(site.url("/old", host="localhost"))
    assert page.final_url == site.url("/", host="localhost")
    assert site.paths_requested() == ["/old", "/"]


@pytest.mark.parametrize("target", ["http://127.0.0.1:{port}/", "http://169.254.169.254/latest",
                                    "http://[::ffff:127.0.0.1]:{port}/", "http://2130706433/",
                                    "file:///etc/passwd"])
async def test_ssrf_refuses_a_redirect_hop_to_a_refused_target(site: LocalSite,
                                                               target: str) -> None:
    site.routes["/jump"] = (302, {"Location": target.format(port=site.port)}, "")
    with pytest.raises(FetchRefused, match="refused"):
        await local_fetcher(site).fetch(site.url("/jump", host="localhost"))
    assert site.paths_requested() == ["/jump"]  # the hop itself was never requested


async def test_ssrf_caps_redirects(site: LocalSite) -> None:
    site.routes["/a"] = (302, {"Location": "/b"}, "")
    site.routes["/b"] = (302, {"Location": "/a"}, "")
    with pytest.raises(FetchRefused, match="more than 3 redirects"):
        await local_fetcher(site, max_redirects=3).fetch(site.url("/a", host="localhost"))
    assert len(site.requests) == 4


async def test_ssrf_caps_bytes_and_stops_reading_an_endless_body(site: LocalSite) -> None:
    def endless() -> Iterator[bytes]:
        while True:
            yield b"x" * 4096

    site.routes["/endless"] = (200, {"Content-Type": "text/plain"}, endless)
    fetcher = local_fetcher(site, max_bytes=10_000)
    page = await fetcher.fetch(site.url("/endless", host="localhost"))
    assert page.truncated
    assert len(page.text) == 10_000


async def test_ssrf_caps_total_time_on_a_trickling_body(site: LocalSite) -> None:
    def trickle() -> Iterator[bytes]:
        while True:
            time.sleep(0.05)
            yield b"."

    site.routes["/slow"] = (200, {"Content-Type": "text/plain"}, trickle)
    started = time.monotonic()
    with pytest.raises(FetchTimedOut, match=re.escape("exceeded 0.4s")):
        await local_fetcher(site, timeout_s=5).fetch(site.url("/slow", host="localhost"),
                                                     timeout_s=0.4)
    assert time.monotonic() - started < 1.5


async def test_ssrf_refuses_binary_content_before_reading_it(site: LocalSite) -> None:
    site.routes["/file.pdf"] = (200, {"Content-Type": "application/pdf"}, b"%PDF-1.7")
    with pytest.raises(FetchRefused, match="content type application/pdf"):
        await local_fetcher(site).fetch(site.url("/file.pdf", host="localhost"))


async def test_ssrf_connects_to_the_address_it_checked_not_a_second_answer(
    site: LocalSite,
) -> None:
    """A rebinding DNS answers the check with the site's address, then with a refused one.

    `rebind.test` exists in no real DNS, so the fetch can only work if the connection went to
    the checked answer; the resolver is asked exactly once.
    """
    answers = [["127.0.0.1"], ["10.0.0.1"], ["169.254.169.254"]]
    asked: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        asked.append(host)
        return answers.pop(0)

    fetcher = SafeFetcher(allow_hosts=[f"rebind.test:{site.port}"], resolver=rebinding)
    page = await fetcher.fetch(f"http://rebind.test:{site.port}/")
    assert page.text == "<p>首页 home</p>"
    assert asked == ["rebind.test"]
    assert site.requests[-1].host == f"rebind.test:{site.port}"  # Host header kept


async def test_ssrf_refused_redirect_to_a_name_resolving_to_metadata(site: LocalSite) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return {"localhost": ["127.0.0.1"], "evil.example": ["169.254.169.254"]}[host]

    site.routes["/jump"] = (302, {"Location": "http://evil.example/latest/meta-data/"}, "")
    fetcher = SafeFetcher(allow_hosts=[f"localhost:{site.port}"], resolver=resolver)
    refusal = "cloud metadata address 169.254.169.254 refused for host evil.example"
    with pytest.raises(FetchRefused, match=re.escape(refusal)):
        await fetcher.fetch(site.url("/jump", host="localhost"))


def self_signed(name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate for `name`, and a client context trusting only it."""
    crypto = pytest.importorskip("cryptography")
    del crypto
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1)).not_valid_after(now + timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    with tempfile.TemporaryDirectory() as folder:
        cert_file, key_file = Path(folder, "cert.pem"), Path(folder, "key.pem")
        cert_file.write_bytes(pem)
        key_file.write_bytes(key_pem)
        server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cadata=pem.decode())
    return server, client


async def test_ssrf_https_verifies_the_name_while_connecting_to_the_checked_address() -> None:
    """TLS SNI and certificate checks use the URL's name, not the pinned IP."""
    server_tls, client_tls = self_signed("pinned.test")

    async def resolver(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    with LocalSite({"/": (200, HTML, "<p>tls ok</p>")}, tls=server_tls) as tls_site:
        fetcher = SafeFetcher(allow_hosts=[f"pinned.test:{tls_site.port}",
                                           f"other.test:{tls_site.port}"], resolver=resolver,
                              ssl_context=client_tls)
        page = await fetcher.fetch(tls_site.url("/", host="pinned.test"))
        assert page.text == "<p>tls ok</p>"
        with pytest.raises(FetchError, match=r"CERTIFICATE_VERIFY_FAILED.*other\.test"):
            await fetcher.fetch(tls_site.url("/", host="other.test"))


BOMB_INNER = gzip.compress(bytes(200_000_000), compresslevel=9)  # 200 MB of zeros, ~200 KB


@pytest.mark.parametrize(("encoding", "body"), [("gzip, gzip", gzip.compress(BOMB_INNER)),
                                                ("gzip,gzip,gzip", gzip.compress(
                                                    gzip.compress(BOMB_INNER))),
                                                ("br", b"whatever")])
async def test_ssrf_refuses_stacked_or_unknown_encodings_before_inflating(
        site: LocalSite, encoding: str, body: bytes) -> None:
    site.routes["/bomb"] = (200, {**HTML, "Content-Encoding": encoding}, body)
    tracemalloc.start()
    try:
        with pytest.raises(FetchRefused, match="encoding"):
            await local_fetcher(site).fetch(site.url("/bomb", host="localhost"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000


async def test_ssrf_caps_decoded_bytes_while_inflating(site: LocalSite) -> None:
    site.routes["/bomb"] = (200, {**HTML, "Content-Encoding": "gzip"}, BOMB_INNER)
    tracemalloc.start()
    try:
        fetcher = local_fetcher(site, max_bytes=1_000_000)
        page = await fetcher.fetch(site.url("/bomb", host="localhost"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert page.truncated and len(page.text) == 1_000_000
    assert peak < 20_000_000  # was the whole inflated chunk: hundreds of MB


async def test_ssrf_still_reads_an_ordinary_gzip_page(site: LocalSite) -> None:
    site.routes["/gz"] = (200, {**HTML, "Content-Encoding": "gzip"},
                          gzip.compress("<p>压缩的页面</p>".encode()))
    page = await local_fetcher(site).fetch(site.url("/gz", host="localhost"))
    assert page.text == "<p>压缩的页面</p>" and not page.truncated


async def test_ssrf_allow_list_entry_opens_one_port_not_the_whole_host(site: LocalSite) -> None:
    with LocalSite({"/internal-admin": (200, HTML, "<p>admin secrets</p>")}) as admin:
        site.routes["/hop"] = (302, {"Location": admin.url("/internal-admin", host="localhost")},
                               "")
        with pytest.raises(FetchRefused, match="loopback"):
            await local_fetcher(site).fetch(site.url("/hop", host="localhost"))
        assert admin.requests == []
        bare = SafeFetcher(allow_hosts=["localhost"])  # a bare host: its default ports only
        with pytest.raises(FetchRefused, match="loopback"):
            await bare.fetch(admin.url("/internal-admin", host="localhost"))
        assert admin.requests == []
