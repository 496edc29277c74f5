"""URL classification for argument shaping (SPEC 3.3 rule 3): offline Public Suffix List, no content kept."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mcpeval_nb.privacy import classify_url, shape, urls
from tests import waiting


@pytest.mark.parametrize(
    ("url", "token"),
    [
        ("http://www.example.com/x", "url:example.com"),
        ("https://x.customer.example.co.uk/a", "url:example.co.uk"),
        ("http://CANARY.customer.github.io/", "url:customer.github.io"),
        ("https://customer.github.io", "url:customer.github.io"),
        ("HtTpS://WWW.Example.Co.UK/", "url:example.co.uk"),
        ("https://example.com/path?q=CANARY-query#CANARY-frag", "url:example.com"),
        ("http://user:CANARY-password@example.com/", "url:example.com"),
        ("http://192.168.0.1.example.com/", "url:example.com"),
        ("https://münchen.de/", "url:xn--mnchen-3ya.de"),
        ("http://ex%61mple.com/", "url:example.com"),
        ("  http://example.com  ", "url:example.com"),
        ("http:example.com", "url:example.com"),
        ("http:\\\\example.com", "url:example.com"),
    ],
)
def test_domains_reduce_to_their_registrable_domain(url: str, token: str) -> None:
    assert classify_url(url) == token


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/",
        "http://10.1.2.3",
        "http://[::1]/",
        "https://[2001:db8::1]:8443/x",
        "http://0x7f.1/",
        "http://127.1/",
        "http://2130706433/",
        "http://0x7f.0.0.1/",
        "http://0177.0.0.1/",
    ],
)
def test_ip_literals_including_lenient_whatwg_ipv4_are_url_ip(url: str) -> None:
    assert classify_url(url) == "url:ip"


@pytest.mark.parametrize("url", ["http://localhost", "http://LOCALHOST:3000/x", "https://LocalHost/"])
def test_localhost_in_any_case_is_url_localhost(url: str) -> None:
    assert classify_url(url) == "url:localhost"


@pytest.mark.parametrize(
    "url",
    [
        "http://canary-internal/",
        "http://a.b.canary-internal/",
        "http://foo.internal/",
        "http://canary.local/",
    ],
)
def test_single_label_hosts_and_unknown_suffixes_are_url_host(url: str) -> None:
    assert classify_url(url) == "url:host"


@pytest.mark.parametrize("url", ["http://co.uk/", "https://github.io", "http://com/"])
def test_a_host_that_is_itself_a_public_suffix_is_url_public_suffix(url: str) -> None:
    assert classify_url(url) == "url:public-suffix"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "javascript:alert(1)",
        "mailto:a@example.com",
        "example.com",
        "www.example.com/x",
        "http://",
        "https:",
        "http://user@",
        "http://[::1",
        "http://example.com:99999/",
        "http://example.com:80abc",
        "http://exa mple.com",
        "http://a\r\nb.com/",
        "http://example.com/\x00",
        "http://1.2.3.4.5/",
        "http://256.1.1.1/",
        "http://09/",
        "http://[fe80::1%25eth0]/",
        "http://exa\u0085mple.com/",
    ],
)
def test_strings_that_are_not_parseable_http_urls_are_not_urls(url: str) -> None:
    assert classify_url(url) is None


@pytest.mark.parametrize(
    ("url", "token"),
    [
        ("https://straße.de/", "url:xn--strae-oqa.de"),
        ("https://STRASSE.de/", "url:strasse.de"),
        ("http://ας.gr/", "url:xn--mxa8a.gr"),
        ("http://ΑΣ.gr/", "url:xn--mxa0b.gr"),
        ("http://ｅｘａｍｐｌｅ．com/", "url:example.com"),
        ("http://ex\u00ad.com/", "url:ex.com"),
        ("http://☃.net/", "url:xn--n3h.net"),
    ],
)
def test_international_hosts_use_non_transitional_uts46_like_whatwg(url: str, token: str) -> None:
    # Python's own "idna" codec is IDNA 2003 (transitional): it would turn straße into strasse.
    assert classify_url(url) == token


@pytest.mark.parametrize(
    "url", ["http://a\u200db.com/", "http://bad%EF%BF%BD.com/", "http://exa\ufffdmple.com/"]
)
def test_hosts_that_uts46_refuses_are_not_urls(url: str) -> None:
    assert classify_url(url) is None


def test_a_failed_url_falls_through_to_its_length_bucket() -> None:
    assert shape("http://256.1.1.1/") == "str<32"
    assert shape("ftp://example.com/CANARY") == "str<32"


def test_classification_needs_no_network_and_writes_no_cache(tmp_path: Path) -> None:
    # The extractor uses tldextract's bundled snapshot: nothing under HOME or the cache dirs appears.
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TLDEXTRACT_CACHE": str(home / "tld"),
        "http_proxy": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
    }
    # urls.py imports only the stdlib and tldextract: load it alone, without the package's heavy imports.
    code = (
        "import importlib.util;"
        f"spec = importlib.util.spec_from_file_location('urls', {str(Path(urls.__file__))!r});"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod);"
        "print(mod.classify_url('https://a.customer.github.io/'))"
    )
    out = waiting.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, stall_s=60, check=True
    )
    assert out.stdout.strip() == "url:customer.github.io"
    assert list(home.rglob("*")) == []
