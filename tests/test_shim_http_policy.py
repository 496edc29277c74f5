"""The upstream endpoint policy and the loopback Host/Origin checks (SPEC 13.1, 13.2)."""

from __future__ import annotations

import pytest

from mcpeval_nb.errors import UsageError
from mcpeval_nb.transport.loopback import is_loopback_host_header, is_loopback_origin
from mcpeval_nb.transport.policy import (
    CREDENTIAL_FREE_MESSAGE,
    REMOTE_FLAG_MESSAGE,
    REMOTE_HTTPS_MESSAGE,
    Endpoint,
    check_endpoint,
    check_listen_address,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8080/mcp", Endpoint("http", "127.0.0.1", 8080, "/mcp", True)),
        ("http://localhost/", Endpoint("http", "localhost", 80, "/", True)),
        ("HTTP://LOCALHOST:9", Endpoint("http", "localhost", 9, "/", True)),
        ("https://[::1]:8443/a/b", Endpoint("https", "::1", 8443, "/a/b", True)),
        ("http://127.9.8.7/x", Endpoint("http", "127.9.8.7", 80, "/x", True)),
        ("http://0x7f.1:81/", Endpoint("http", "127.0.0.1", 81, "/", True)),
        ("http://2130706433/", Endpoint("http", "127.0.0.1", 80, "/", True)),
        ("http://127.0.0.1/a/./b/../c", Endpoint("http", "127.0.0.1", 80, "/a/c", True)),
    ],
)
def test_loopback_endpoints_are_accepted_in_canonical_form(url: str, expected: Endpoint) -> None:
    assert check_endpoint(url, allow_remote_http=False) == expected


@pytest.mark.parametrize(
    "url",
    [
        "http://user:CANARY-pw@127.0.0.1/mcp",
        "http://user@127.0.0.1/mcp",
        "http://127.0.0.1/mcp?token=CANARY",
        "http://127.0.0.1/mcp?",
        "http://127.0.0.1/mcp#frag",
        "ftp://127.0.0.1/",
        "file:///etc/passwd",
        "127.0.0.1:8080",
        "http://",
        "http://:80/",
        "http://127.0.0.1:99999/",
        "http://[::1/",
        "http://256.0.0.1.5/",
        "",
    ],
)
def test_credentials_queries_fragments_and_non_http_urls_are_refused(url: str) -> None:
    with pytest.raises(UsageError) as info:
        check_endpoint(url, allow_remote_http=True)
    assert str(info.value) == CREDENTIAL_FREE_MESSAGE
    assert "CANARY" not in str(info.value)


@pytest.mark.parametrize("url", ["https://example.com/mcp", "http://10.0.0.1/", "http://[::2]/",
                                 "http://localhost.example/", "http://[::ffff:127.0.0.1]/"])
def test_remote_hosts_need_the_allow_remote_http_flag(url: str) -> None:
    with pytest.raises(UsageError, match=f"^{REMOTE_FLAG_MESSAGE}$"):
        check_endpoint(url, allow_remote_http=False)


def test_remote_hosts_with_the_flag_must_use_https() -> None:
    with pytest.raises(UsageError, match=f"^{REMOTE_HTTPS_MESSAGE}$"):
        check_endpoint("http://example.com/mcp", allow_remote_http=True)
    endpoint = check_endpoint("https://Example.COM/mcp", allow_remote_http=True)
    assert endpoint == Endpoint("https", "example.com", 443, "/mcp", False)
    assert endpoint.url == "https://example.com/mcp"


def test_endpoint_authority_brackets_ipv6_and_omits_default_ports() -> None:
    assert check_endpoint("http://[::1]:80/", allow_remote_http=False).authority == "[::1]"
    assert check_endpoint("http://[::1]:81/", allow_remote_http=False).authority == "[::1]:81"
    assert check_endpoint("http://localhost:8080/mcp").url == "http://localhost:8080/mcp"


@pytest.mark.parametrize("value", ["127.0.0.1", "127.0.0.1:8080", "localhost", "LOCALHOST:1",
                                   "[::1]:3000", " 127.0.0.2 "])
def test_loopback_host_headers_pass(value: str) -> None:
    assert is_loopback_host_header(value)


@pytest.mark.parametrize("value", ["", "example.com", "127.0.0.1/x", "evil@127.0.0.1", "127.0.0.1?",
                                   "127.0.0.1#", "127.0.0.1\\", "10.0.0.1:80", "[::2]", "localhost.evil.com",
                                   "127.0.0.1:notaport"])
def test_non_loopback_host_headers_fail(value: str) -> None:
    assert not is_loopback_host_header(value)


@pytest.mark.parametrize("value", ["http://localhost:3000", "https://127.0.0.1", "http://[::1]:8080",
                                   "HTTP://LocalHost"])
def test_loopback_origins_pass(value: str) -> None:
    assert is_loopback_origin(value)


@pytest.mark.parametrize("value", ["null", "", "http://example.com", "https://evil.localhost.example",
                                   "ws://127.0.0.1", "file://localhost/", "chrome-extension://abc"])
def test_non_loopback_origins_fail(value: str) -> None:
    assert not is_loopback_origin(value)


def test_listen_addresses_must_be_loopback_socket_addresses() -> None:
    assert check_listen_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert check_listen_address("[::1]:8080") == ("::1", 8080)
    with pytest.raises(UsageError, match="loopback"):
        check_listen_address("0.0.0.0:8080")
    for bad in ("localhost:8080", "127.0.0.1", "127.0.0.1:x", "::1:80", "127.0.0.1:70000"):
        with pytest.raises(UsageError, match="socket address"):
            check_listen_address(bad)
