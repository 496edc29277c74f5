"""The early scheme check in ``classify_url`` (added for the shim's 1 MiB frames) changes no result."""

from __future__ import annotations

import pytest

from mcpeval_nb.privacy.shape import shape
from mcpeval_nb.privacy.urls import classify_url

MIB = 1024 * 1024


@pytest.mark.parametrize(("value", "token"), [
    ("  https://www.example.com/x", "url:example.com"),
    ("HTTPS://WWW.EXAMPLE.COM", "url:example.com"),
    ("Http://localhost:8080/", "url:localhost"),
    ("http:\\\\127.0.0.1", "url:ip"),
    ("https://example.com/" + "p" * MIB, "url:example.com"),
])
def test_urls_are_still_classified(value: str, token: str) -> None:
    assert classify_url(value) == token


@pytest.mark.parametrize("value", ["x" * MIB, "httpx://example.com", "ftp://example.com", " \thttp://a.com",
                                   "http://exa\nmple.com", "h" * MIB + ":", "", "http"])
def test_non_urls_are_still_refused(value: str) -> None:
    assert classify_url(value) is None


def test_a_mebibyte_string_argument_is_length_bucketed() -> None:
    assert shape({"blob": "x" * MIB}) == {"blob": "str>4096"}
