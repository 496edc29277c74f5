"""The JSON-RPC layer of serve and the mock, both protocol eras: one request in, one status and JSON body out.

What answers ``tools/list`` and ``tools/call`` is a ``Backend`` (serve's tool table, ``call.ToolTable``;
the recorded-behaviour mock, ``mock.engine``): this layer owns everything else, once.  Over HTTP
(``headers`` given) the modern era's header checks apply; over stdio (``headers=None``, ``serve.stdio``)
there are no headers to check, and a notification gets no answer at all.

Legacy (2025-06-18, SPEC 13.1 steps 5-7): a body that is not JSON is a 400; a message without ``id`` is
acknowledged with 202 and ``null``; ``initialize``, ``ping``, ``tools/list`` and ``tools/call`` are
answered with 200; any other method is -32601 and a missing method -32600.  A tool's refusal or failure
is -32000 with the tool layer's safe message.

Modern (2026-07-28, stateless): a request whose ``MCP-Protocol-Version`` header names a version that is
not a handshake version (any method), or whose ``params._meta`` names a version (``initialize`` apart),
is served on its own, with no session: first ``_meta`` must carry the version and the client
capabilities (else HTTP 400 with -32602); then ``MCP-Protocol-Version``, ``Mcp-Method`` and, for
``tools/call``, ``Mcp-Name`` must be present, single and equal to the body (else 400 with -32020); then
a version other than 2026-07-28 is 400 with -32022 listing the supported versions and echoing the
requested one.  ``server/discover`` answers the supported versions, capabilities and server info;
every result carries ``resultType: "complete"`` and the server info in
``_meta``; ``server/discover`` and ``tools/list`` carry ``ttlMs`` and ``cacheScope``.  ``ping`` and
``initialize`` are not modern methods (404 with -32601).  The tool set, the spawn gate and the tool call
path are the legacy era's.  A backend refuses a call with ``RpcFailure`` (its code and safe message).

Nothing from the request is echoed except its ``id`` and a method or tool name that passes its grammar;
header values are compared, never repeated.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from typing import Any, Protocol

from .._version import __version__
from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.grammar import valid_method

__all__ = ["CACHE_TTL_MS", "MODERN_VERSION", "PARSE_ERROR", "PROTOCOL_VERSION", "SERVER_NAME",
           "SUPPORTED_VERSIONS", "Backend", "RpcFailure", "handle_body", "handle_message", "server_info"]

PROTOCOL_VERSION = "2025-06-18"
MODERN_VERSION = "2026-07-28"
#: What ``server/discover`` and a -32022 refusal name: the modern revision, then the handshake one.
SUPPORTED_VERSIONS = (MODERN_VERSION, PROTOCOL_VERSION)
_HANDSHAKE_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
SERVER_NAME = "mcpeval-nb"
#: The tool list only changes when serve restarts: clients may keep it five minutes.
CACHE_TTL_MS = 300_000
INVALID_JSON = b'{"error":"invalid JSON body"}'
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META_SERVER = "io.modelcontextprotocol/serverInfo"
_NOT_FOUND = 404
#: A requested version is echoed in a -32022 refusal (the schema requires it) only when it is short,
#: printable ASCII without quotes or backslashes.
_ECHOABLE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,64}")

#: The JSON-RPC answer to a stdio line that is not JSON (HTTP answers 400 instead).
PARSE_ERROR = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}'

Headers = Sequence[tuple[str, str]]


class RpcFailure(Exception):
    """A JSON-RPC error answer to a ``tools/call``: ``code``, the safe ``message`` (``str()``) and
    optional ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.data = code, data


class Backend(Protocol):
    """What answers the tool methods; the protocol layer answers everything else."""

    def server_info(self) -> dict[str, str]:
        """The ``serverInfo`` object (name, version)."""
        ...  # pragma: no cover - protocol

    def list_tools(self) -> list[dict[str, Any]]:
        """The ``tools/list`` entries, in order."""
        ...  # pragma: no cover

    def call_tool(self, name: Any, arguments: Any) -> dict[str, Any]:
        """One ``tools/call``: its result object.

        Raises:
            RpcFailure: the call is answered with a JSON-RPC error.
        """
        ...  # pragma: no cover


def _reply(msg_id: Any, *, result: Any = None, error: tuple[int, str] | None = None,
           data: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        message["error"] = {"code": error[0], "message": error[1]}
        if data is not None:
            message["error"]["data"] = data
    else:
        message["result"] = result
    return dumps(message, sort_keys=False).encode("utf-8")


def server_info() -> dict[str, str]:
    """serve's ``serverInfo``: ``mcpeval-nb`` and the package version."""
    return {"name": SERVER_NAME, "version": __version__}


def _initialize(backend: Backend) -> dict[str, Any]:
    return {"protocolVersion": PROTOCOL_VERSION, "capabilities": {"tools": {}},
            "serverInfo": backend.server_info()}


def _unknown(method: str) -> tuple[int, str]:
    shown = f" {method}" if valid_method(method) else ""
    return -32601, f"unknown method{shown}"


def handle_body(body: bytes, backend: Backend, *, headers: Headers | None = ()) -> tuple[int, bytes]:
    """Answer one JSON-RPC request body.

    Args:
        body: the request body (one message).
        backend: what answers ``tools/list`` and ``tools/call``.
        headers: the request's ``(lowercase name, value)`` header pairs (the modern era's checks), or
            None over stdio (no header checks; see ``handle_message``).

    Returns:
        ``(status, body)``: 400 with ``{"error":"invalid JSON body"}`` (stdio: 200 with a -32700 parse
        error), 202 with ``null`` (a notification), 200 with the JSON-RPC response, or (modern era over
        HTTP) 400/404 with a JSON-RPC error.
    """
    try:
        message = loads(body)
    except (JSONFormatError, UnicodeDecodeError):
        return (400, INVALID_JSON) if headers is not None else (200, PARSE_ERROR)
    return handle_message(message, backend, headers=headers)


def handle_message(message: Any, backend: Backend, *, headers: Headers | None = ()) -> tuple[int, bytes]:
    """Answer one parsed JSON-RPC message (``handle_body`` after parsing)."""
    if not isinstance(message, dict) or message.get("id") is None:
        return 202, b"null"
    msg_id, method = message["id"], message.get("method")
    if not isinstance(method, str):
        return 200, _reply(msg_id, error=(-32600, "invalid request"))
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if _is_modern(method, params, headers or ()):
        return _modern(msg_id, method, params, headers, backend)
    return 200, _legacy(msg_id, method, params, backend)


def _call(msg_id: Any, params: dict[str, Any], backend: Backend, *, modern: bool) -> bytes:
    try:
        result = backend.call_tool(params.get("name"), params.get("arguments"))
    except RpcFailure as exc:
        return _reply(msg_id, error=(exc.code, str(exc)), data=exc.data)
    return _reply(msg_id, result=_complete(result, backend) if modern else result)


def _legacy(msg_id: Any, method: str, params: dict[str, Any], backend: Backend) -> bytes:
    if method == "initialize":
        return _reply(msg_id, result=_initialize(backend))
    if method == "ping":
        return _reply(msg_id, result={})
    if method == "tools/list":
        return _reply(msg_id, result={"tools": backend.list_tools()})
    if method == "tools/call":
        return _call(msg_id, params, backend, modern=False)
    return _reply(msg_id, error=_unknown(method))


# --- the modern era ----------------------------------------------------------------------------------------


def _values(headers: Headers, name: str) -> list[str]:
    return [v for k, v in headers if k == name]


def _is_modern(method: str, params: dict[str, Any], headers: Headers) -> bool:
    """A request of the 2026-07-28 era: its header names a version that is not a handshake version (any
    method: an ``initialize`` stamped so is a modern request, refused as unknown), or its ``_meta``
    names a version (``initialize`` excepted: a legacy client may stamp it)."""
    if any(v not in _HANDSHAKE_VERSIONS for v in _values(headers, "mcp-protocol-version")):
        return True
    meta = params.get("_meta")
    return method != "initialize" and isinstance(meta, dict) and _META_VERSION in meta


def _decoded(value: str) -> str | None:
    if not (value.startswith("=?base64?") and value.endswith("?=") and len(value) >= 11):
        return value
    try:
        raw = base64.b64decode(value[9:-2], validate=True)
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _header_agrees(headers: Headers, name: str, expected: Any) -> bool:
    found = _values(headers, name)
    return len(found) == 1 and isinstance(expected, str) and _decoded(found[0]) == expected


def _header_error(method: str, params: dict[str, Any], headers: Headers, version: Any) -> str | None:
    """Which standard header is missing, repeated or disagrees with the body (None: all agree)."""
    if not _header_agrees(headers, "mcp-protocol-version", version):
        return "MCP-Protocol-Version"
    if not _header_agrees(headers, "mcp-method", method):
        return "Mcp-Method"
    if method == "tools/call" and not _header_agrees(headers, "mcp-name", params.get("name")):
        return "Mcp-Name"
    return None


def _modern(msg_id: Any, method: str, params: dict[str, Any], headers: Headers | None,
            backend: Backend) -> tuple[int, bytes]:
    meta = params.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    version = meta.get(_META_VERSION)
    if not isinstance(version, str) or not isinstance(meta.get(_META_CAPABILITIES), dict):
        return 400, _reply(msg_id, error=(-32602, "request _meta lacks the protocol version or the client "
                                                  "capabilities"))
    wrong = None if headers is None else _header_error(method, params, headers, version)
    if wrong is not None:
        return 400, _reply(msg_id, error=(-32020, f"header mismatch: {wrong} is missing or disagrees "
                                                  "with the request body"))
    if version != MODERN_VERSION:
        data: dict[str, Any] = {"supported": list(SUPPORTED_VERSIONS)}
        if _ECHOABLE.fullmatch(version):
            data["requested"] = version
        return 400, _reply(msg_id, error=(-32022, "unsupported protocol version"), data=data)
    return _answer(msg_id, method, params, backend)


def _complete(result: dict[str, Any], backend: Backend, *, cacheable: bool = False) -> dict[str, Any]:
    meta = result.get("_meta")
    meta = {**meta} if isinstance(meta, dict) else {}
    meta[_META_SERVER] = backend.server_info()
    out = {**result, "resultType": "complete", "_meta": meta}
    if cacheable:
        out.update(ttlMs=CACHE_TTL_MS, cacheScope="public")
    return out


def _answer(msg_id: Any, method: str, params: dict[str, Any], backend: Backend) -> tuple[int, bytes]:
    if method == "server/discover":
        discovered = {"supportedVersions": list(SUPPORTED_VERSIONS), "capabilities": {"tools": {}}}
        return 200, _reply(msg_id, result=_complete(discovered, backend, cacheable=True))
    if method == "tools/list":
        listed = {"tools": backend.list_tools()}
        return 200, _reply(msg_id, result=_complete(listed, backend, cacheable=True))
    if method == "tools/call":
        return 200, _call(msg_id, params, backend, modern=True)
    return _NOT_FOUND, _reply(msg_id, error=_unknown(method))
