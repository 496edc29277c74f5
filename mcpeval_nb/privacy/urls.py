"""URL classification for argument shaping (SPEC 3.3 rule 3).

A WHATWG-style host extraction for ``http``/``https`` (what the Rust ``url`` crate does for special
schemes: leading/trailing C0-or-space trimmed, any run of ``/`` or ``\\`` after the scheme, userinfo
dropped, lenient IPv4 numbers, bracketed IPv6), then the Public Suffix List (ICANN and private sections)
through tldextract's bundled snapshot: no network, no cache writes.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import urllib.parse
from typing import Any

__all__ = ["classify_url", "ends_in_number", "split_authority", "whatwg_ipv4"]

_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+\-.]*):")
_FORBIDDEN_HOST = set("\x00\t\n\r #/:<>?@[\\]^|%")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@functools.lru_cache(maxsize=1)
def _extractor() -> Any:
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def _ipv4_number(part: str) -> int | None:
    if part == "":
        return None
    base = 10
    if part[:2].lower() == "0x":
        part, base = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        part, base = part[1:], 8
    if part == "":
        return 0
    digits = {10: "0123456789", 16: "0123456789abcdefABCDEF", 8: "01234567"}[base]
    if any(c not in digits for c in part):
        return None
    return int(part, base)


def ends_in_number(host: str) -> bool:
    """WHATWG "ends in a number": the last label (a trailing empty one dropped) is a number."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    last = parts[-1]
    if last and all(c in "0123456789" for c in last):
        return True
    return last[:2].lower() == "0x" and _ipv4_number(last) is not None


def whatwg_ipv4(host: str) -> str | None:
    """The canonical dotted form of a WHATWG IPv4 host (``0x7f.1`` -> ``127.0.0.1``), or None.

    None means the host ends in a number but is not a valid IPv4 address: a URL parse failure.
    """
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    if len(parts) > 4:
        return None
    numbers = [_ipv4_number(p) for p in parts]
    nums = [n for n in numbers if n is not None]
    if len(nums) != len(numbers) or any(n > 255 for n in nums[:-1]) or nums[-1] >= 256 ** (5 - len(nums)):
        return None
    value = nums[-1]
    for i, n in enumerate(nums[:-1]):
        value += n << (8 * (3 - i))
    return str(ipaddress.IPv4Address(value))


def _authority(rest: str) -> str:
    i = 0
    while i < len(rest) and rest[i] in "/\\":
        i += 1
    end = len(rest)
    for j in range(i, len(rest)):
        if rest[j] in "/\\?#":
            end = j
            break
    return rest[i:end]


def split_authority(authority: str) -> tuple[bool, str, int | None] | None:
    """Split a URL authority into (has userinfo, raw host, port), or None when it is invalid.

    The host keeps its brackets for IPv6 literals and is not yet canonicalised; the port must be
    ASCII digits up to 65535 (empty means none).
    """
    _userinfo, at, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0:
            return None
        host, tail = hostport[: close + 1], hostport[close + 1:]
    else:
        host, colon, port_text = hostport.partition(":")
        tail = colon + port_text
    port: int | None = None
    if tail:
        if not tail.startswith(":"):
            return None
        digits = tail[1:]
        if digits:
            if not (digits.isascii() and digits.isdigit()) or int(digits) > 65535:
                return None
            port = int(digits)
    return bool(at), host, port


def _idna_to_ascii(host: str) -> str | None:
    """UTS 46 ToASCII as WHATWG runs it: non-transitional mapping (``ß`` and ``ς`` are kept, not turned
    into ``ss``/``σ`` as Python's IDNA 2003 codec does), then Punycode per label."""
    import idna

    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
    except (idna.IDNAError, UnicodeError, ValueError):
        return None
    labels = []
    for label in mapped.split("."):
        if label.isascii():
            labels.append(label)
        elif "\u200c" in label or "\u200d" in label:
            return None  # joiners are valid only in contexts (CheckJoiners) we do not model
        else:
            labels.append("xn--" + label.encode("punycode").decode("ascii"))
    return ".".join(labels).lower()


def _domain_to_ascii(host: str) -> str | None:
    host = urllib.parse.unquote(host)
    ascii_host = host.lower() if host.isascii() else _idna_to_ascii(host)
    if ascii_host is None:
        return None
    if not ascii_host or any(c in _FORBIDDEN_HOST or ord(c) < 0x20 or c == "\x7f" for c in ascii_host):
        return None
    return ascii_host


def classify_url(value: str) -> str | None:
    """Return the ``url:...`` token for an http(s) URL, or None when the string is not one.

    Args:
        value: a string argument value (used in memory only).

    Returns:
        ``url:ip``, ``url:localhost``, ``url:host``, ``url:public-suffix`` or ``url:<registrable
        domain>``; None when the string is not a parseable http(s) URL with a host.
    """
    # Fast refusal first (same result): after the control-character check only spaces can lead, and the
    # scheme must be http or https, so a multi-MiB argument is not scanned by two regexes for nothing.
    if not value.lstrip(" ")[:6].lower().startswith(("http:", "https:")):
        return None
    if _CONTROL_RE.search(value):
        return None
    text = value.strip("".join(chr(c) for c in range(0x21)))
    match = _SCHEME_RE.match(text)
    if match is None or match.group(1).lower() not in ("http", "https"):
        return None
    split = split_authority(_authority(text[match.end():]))
    raw_host = None if split is None else split[1]
    if not raw_host:
        return None
    if raw_host.startswith("["):
        if "%" in raw_host:  # WHATWG has no zone ids; Python's ipaddress would accept fe80::1%eth0
            return None
        try:
            ipaddress.IPv6Address(raw_host[1:-1])
        except ValueError:
            return None
        return "url:ip"
    host = _domain_to_ascii(raw_host)
    if host is None:
        return None
    if ends_in_number(host):
        return "url:ip" if whatwg_ipv4(host) is not None else None
    if host == "localhost":
        return "url:localhost"
    return _registrable(host)


def _registrable(host: str) -> str:
    parts = _extractor()(host)
    if not parts.suffix:
        return "url:host"
    if not parts.domain:
        return "url:public-suffix"
    return "url:" + f"{parts.domain}.{parts.suffix}".lower()
