"""shim-http's header policy: what is forwarded, what is relayed, what the shim rewrites (docs/capture.md).

Every end-to-end request header the client sent is forwarded, in its order and spelling, except the
hop-by-hop headers (RFC 9110 7.6.1, and any header the ``Connection`` header names) and the ones the shim
owns: ``Host`` (the upstream's), ``Content-Length`` (recomputed), ``Expect`` and ``Accept-Encoding`` (the
shim reads bodies to record them, so it asks for them unencoded).  ``Mcp-Method``, ``Mcp-Name``,
``Mcp-Param-*``, ``MCP-Protocol-Version``, ``Authorization``, ``traceparent``/``tracestate`` pass unchanged.
Every end-to-end response header is relayed likewise, except ``Location`` (redirects are not followed, and
the client is never sent elsewhere).

OAuth discovery runs through the shim (RFC 9728): a ``resource_metadata`` URL on the upstream's origin in a
``WWW-Authenticate`` challenge is rewritten onto the origin the client reached the shim at, and the
protected-resource metadata document relayed from the upstream (``/.well-known/oauth-protected-resource``
paths) names the resource the client reaches through the shim (the shim's origin plus the resource path
the metadata path carries) as its ``resource``; its authorization servers and everything else are
unchanged.  So a client that checks the document's ``resource`` against the URL it connected to (the SDK
does) accepts it, and asks the authorization server for a token for the shim's URL.

No header value is kept beyond the exchange or journaled: the recorder gets only ``HttpFacts`` (the
``Mcp-Method`` and ``Mcp-Name`` values, compared with the body and dropped, and the ``traceparent``, of
which only bounded hex ids are kept).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable

from ..transport.loopback import Request
from ..transport.policy import Endpoint
from .wire import HttpFacts, decode_header_value

__all__ = [
    "METADATA_PREFIX",
    "Rewriter",
    "forward_headers",
    "http_facts",
    "is_metadata_path",
    "relayed_headers",
]

METADATA_PREFIX = "/.well-known/oauth-protected-resource"
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                         "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"})
#: Request headers never forwarded: hop-by-hop, and those the shim owns.
REQUEST_OWNED = _HOP_BY_HOP | {"host", "content-length", "expect", "accept-encoding"}
#: Response headers never relayed: hop-by-hop, the length (recomputed), ``Location``.
RESPONSE_OWNED = _HOP_BY_HOP | {"content-length", "location"}
_CHALLENGE_URL = re.compile(r'(resource_metadata\s*=\s*)("([^"]*)"|[^\s,]+)', re.IGNORECASE)


def _connection_named(headers: list[tuple[str, str]]) -> set[str]:
    return {token.strip().lower() for name, value in headers if name.lower() == "connection"
            for token in value.split(",") if token.strip()}


def forward_headers(request: Request, authorization: str | None) -> list[tuple[str, str]]:
    """The request headers to send upstream, in arrival order (names lowercase, as the listener parsed
    them; HTTP compares names without case).

    Args:
        request: the client's request.
        authorization: the ``MCPEVAL_HTTP_AUTHORIZATION`` fallback for a request without Authorization.
    """
    headers = list(request.headers)
    dropped = REQUEST_OWNED | _connection_named(headers)
    kept = [(name, value) for name, value in headers if name.lower() not in dropped]
    if authorization is not None and not any(name.lower() == "authorization" for name, _ in kept):
        kept.append(("authorization", authorization))
    return kept


def http_facts(request: Request) -> HttpFacts | None:
    """What the recorder may see of a request's headers (None when it carries none of them)."""
    method, name, trace = (request.values(h) for h in ("mcp-method", "mcp-name", "traceparent"))
    if not (method or name or trace):
        return None
    return HttpFacts(method=method[0] if method else None,
                     name=decode_header_value(name[0]) if name else None,
                     traceparent=trace[0] if trace else None)


def is_metadata_path(target: str) -> bool:
    """A protected-resource metadata path (RFC 9728: the prefix, alone or followed by the resource path)."""
    path = target.split("?", 1)[0]
    return path == METADATA_PREFIX or path.startswith(METADATA_PREFIX + "/")


class Rewriter:
    """Moves URLs on the upstream's origin onto the origin the client reached the shim at.

    Args:
        upstream: the upstream endpoint.
        host: the request's ``Host`` header (already checked to be a loopback authority).
    """

    def __init__(self, upstream: Endpoint, host: str) -> None:
        self.upstream = upstream
        self.origin = f"http://{host}"

    def url(self, value: str) -> str:
        """``value`` with the shim's origin when it is on the upstream's origin, else unchanged."""
        try:
            parts = urllib.parse.urlsplit(value)
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower(), 0)
        except ValueError:
            return value
        same = (parts.scheme.lower() == self.upstream.scheme and (parts.hostname or "") == self.upstream.host
                and port == self.upstream.port)
        if not same:
            return value
        return self.origin + urllib.parse.urlunsplit(("", "", parts.path, parts.query, parts.fragment))

    def challenge(self, value: str) -> str:
        """A ``WWW-Authenticate`` value with its ``resource_metadata`` URL moved onto the shim."""
        def move(m: re.Match[str]) -> str:
            quoted = m.group(3)
            url = self.url(quoted if quoted is not None else m.group(2))
            return f'{m.group(1)}"{url}"'
        return _CHALLENGE_URL.sub(move, value)

    def metadata(self, body: bytes, target: str) -> bytes:
        """A protected-resource metadata document naming the resource the client reaches through the shim.

        Args:
            body: the upstream's document.
            target: the metadata path the client asked for: RFC 9728 puts the resource's path after the
                well-known prefix, so the resource becomes the shim's origin plus that path (the origin
                alone for the bare prefix).

        Returns:
            The document with its ``resource`` replaced (everything else unchanged), or ``body`` as it is
            when it is not a JSON object with a string ``resource``.
        """
        try:
            document = json.loads(body)
        except ValueError:
            return body
        if not isinstance(document, dict) or not isinstance(document.get("resource"), str):
            return body
        document["resource"] = self.origin + target.split("?", 1)[0][len(METADATA_PREFIX):]
        return json.dumps(document, separators=(",", ":")).encode()


def relayed_headers(pairs: list[tuple[str, str]],
                    challenge: Callable[[str], str] | None = None) -> list[tuple[str, str]]:
    """The response headers to relay, in arrival order (``WWW-Authenticate`` through ``challenge``)."""
    dropped = RESPONSE_OWNED | _connection_named(pairs)
    out = []
    for name, value in pairs:
        lower = name.lower()
        if lower in dropped:
            continue
        moved = challenge is not None and lower == "www-authenticate"
        out.append((name, challenge(value) if moved and challenge is not None else value))
    return out
