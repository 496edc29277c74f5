"""Upstream endpoint policy and listen addresses (SPEC 13.1, 13.2).

``check_endpoint`` decides whether an HTTP(S) URL may be contacted (shim-http ``--upstream``, probe
``--url``): credential-free, no query or fragment, loopback unless ``--allow-remote-http`` and then HTTPS
only.  The host is parsed the WHATWG way (what the Rust ``url`` crate does for special schemes: lenient
IPv4 numbers, bracketed IPv6, IDNA) and returned in canonical form, so the address judged is the address
connected to.  The Host/Origin/Content-Type checks every loopback listener applies live in
``transport.loopback`` (they judge hosts with ``url_host`` and ``is_loopback_host``).  Error messages
never repeat the URL.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from dataclasses import dataclass

from ..errors import UsageError
from ..privacy.urls import ends_in_number, split_authority, whatwg_ipv4

__all__ = [
    "CREDENTIAL_FREE_MESSAGE",
    "REMOTE_FLAG_MESSAGE",
    "REMOTE_HTTPS_MESSAGE",
    "Endpoint",
    "check_endpoint",
    "check_listen_address",
    "is_loopback_host",
    "url_host",
]

CREDENTIAL_FREE_MESSAGE = "HTTP endpoint must be a credential-free HTTP(S) URL without query or fragment"
REMOTE_FLAG_MESSAGE = "remote HTTP endpoints require --allow-remote-http"
REMOTE_HTTPS_MESSAGE = "remote HTTP endpoints require HTTPS"

_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+\-.]*):")
_FORBIDDEN_HOST = set("\x00\t\n\r #/:<>?@[\\]^|%")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


@dataclass(frozen=True)
class Endpoint:
    """A checked upstream endpoint.

    Attributes:
        scheme: ``http`` or ``https``.
        host: canonical host: a lowercase domain, a dotted IPv4 address or an IPv6 address (no brackets).
        port: the explicit port or the scheme's default.
        path: the request path (``/`` at least), percent-encoded.
        is_loopback: the host is ``localhost``, an IPv4 address in 127.0.0.0/8 or ``::1``.
    """

    scheme: str
    host: str
    port: int
    path: str
    is_loopback: bool

    @property
    def authority(self) -> str:
        """``host[:port]`` as sent in a Host header (IPv6 bracketed, default port omitted)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        """The canonical URL text."""
        return f"{self.scheme}://{self.authority}{self.path}"


@dataclass(frozen=True)
class _Parsed:
    scheme: str
    has_userinfo: bool
    host: str
    port: int | None
    path: str
    has_query_or_fragment: bool


def _canonical_host(raw: str) -> str | None:
    if raw.startswith("["):
        if not raw.endswith("]"):
            return None
        try:
            return str(ipaddress.IPv6Address(raw[1:-1]))
        except ValueError:
            return None
    host = urllib.parse.unquote(raw)
    try:
        host = host.lower() if host.isascii() else host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None
    if not host or any(c in _FORBIDDEN_HOST or ord(c) < 0x20 or c == "\x7f" for c in host):
        return None
    return whatwg_ipv4(host) if ends_in_number(host) else host


def _split_authority(authority: str) -> tuple[bool, str, int | None] | None:
    split = split_authority(authority)
    if split is None:
        return None
    has_userinfo, host, port = split
    canonical = _canonical_host(host)
    return None if canonical is None else (has_userinfo, canonical, port)


def _normalize_path(path: str) -> str:
    segments: list[str] = []
    parts = path.replace("\\", "/").split("/")[1:] if path else [""]
    for i, seg in enumerate(parts):
        last = i == len(parts) - 1
        if seg.lower() in (".", "%2e"):
            if last:
                segments.append("")
        elif seg.lower() in ("..", ".%2e", "%2e.", "%2e%2e"):
            if segments:
                segments.pop()
            if last:
                segments.append("")
        else:
            segments.append(seg)
    return urllib.parse.quote("/" + "/".join(segments), safe=_PATH_SAFE)


def _parse(url: str) -> _Parsed | None:
    text = url.strip("".join(chr(c) for c in range(0x21)))
    text = text.replace("\t", "").replace("\n", "").replace("\r", "")
    match = _SCHEME_RE.match(text)
    if match is None:
        return None
    scheme, rest = match.group(1).lower(), text[match.end():]
    if scheme not in _DEFAULT_PORTS:
        return None
    start = len(rest) - len(rest.lstrip("/\\"))
    end = next((j for j in range(start, len(rest)) if rest[j] in "/\\?#"), len(rest))
    split = _split_authority(rest[start:end])
    if split is None:
        return None
    tail = rest[end:]
    cut = min((i for i in (tail.find("?"), tail.find("#")) if i >= 0), default=len(tail))
    return _Parsed(scheme, split[0], split[1], split[2], _normalize_path(tail[:cut]), cut < len(tail))


def is_loopback_host(host: str) -> bool:
    """True for a canonical host that is ``localhost``, in 127.0.0.0/8, or ``::1``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback and (":" not in host or host == "::1")
    except ValueError:
        return False


def check_endpoint(url: str, *, allow_remote_http: bool = False) -> Endpoint:
    """Check an upstream URL against the endpoint policy (SPEC 13.2).

    Args:
        url: the user's URL (never echoed in errors).
        allow_remote_http: ``--allow-remote-http`` was given: a non-loopback HTTPS host is allowed.

    Returns:
        The endpoint with its canonical host, port and path.

    Raises:
        UsageError: not a credential-free http(s) URL without query or fragment; a remote host without
            ``--allow-remote-http``; a remote host over plain HTTP.
    """
    parsed = _parse(url)
    if parsed is None or parsed.has_userinfo or parsed.has_query_or_fragment:
        raise UsageError(CREDENTIAL_FREE_MESSAGE)
    loopback = is_loopback_host(parsed.host)
    if not loopback:
        if not allow_remote_http:
            raise UsageError(REMOTE_FLAG_MESSAGE)
        if parsed.scheme != "https":
            raise UsageError(REMOTE_HTTPS_MESSAGE)
    port = parsed.port if parsed.port is not None else _DEFAULT_PORTS[parsed.scheme]
    return Endpoint(parsed.scheme, parsed.host, port, parsed.path, loopback)


def url_host(url: str) -> str | None:
    """The canonical host of an ``http(s)`` URL (WHATWG parsing, userinfo allowed), or None when the text
    is not one; ``transport.loopback`` judges Origin and Host headers with it."""
    parsed = _parse(url)
    return None if parsed is None else parsed.host


def check_listen_address(addr: str, *, what: str = "shim-http",
                         loopback_message: str | None = None) -> tuple[str, int]:
    """Parse a ``--listen`` socket address that must be a loopback IP with a port.

    Args:
        addr: ``127.0.0.1:PORT`` or ``[::1]:PORT`` (port 0 lets the OS choose).
        what: the component named in the error messages.
        loopback_message: the message for a non-loopback address (default ``<what> must listen on a
            loopback address``).

    Returns:
        ``(ip, port)`` with the IPv6 address unbracketed.

    Raises:
        UsageError: not an IP socket address, or not a loopback one.
    """
    host, sep, port_text = addr.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        host = ""
    try:
        ip = ipaddress.ip_address(host) if sep else None
    except ValueError:
        ip = None
    if ip is None or not (port_text.isascii() and port_text.isdigit()) or int(port_text) > 65535:
        raise UsageError(f"--listen must be a socket address such as 127.0.0.1:8080 for {what}")
    if not ip.is_loopback:
        raise UsageError(loopback_message or f"{what} must listen on a loopback address")
    return str(ip), int(port_text)
