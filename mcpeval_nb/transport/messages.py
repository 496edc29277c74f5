"""The values the session layer hands to probe kinds: targets, responses, tool outcomes, catalogs.

Everything here lives in memory only.  ``RpcError.message``, ``Response.result`` and the tool payloads
are raw server text: probe kinds may inspect them to reach a verdict, but never persist or print them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "METHOD_UNAVAILABLE",
    "Catalog",
    "HttpTarget",
    "PendingCall",
    "Response",
    "RpcError",
    "ServerRequestHandler",
    "StdioTarget",
    "Target",
    "ToolOutcome",
    "decline",
]

#: The code a client answers to a server-to-client request it does not serve (SPEC 14).
METHOD_UNAVAILABLE = -32601
#: ``tools/call`` results flagged ``isError: true`` are classified with this code (SPEC 8.3).
TOOL_ERROR_CODE = -32000


@dataclass(frozen=True)
class StdioTarget:
    """An MCP server started as a child process.

    Attributes:
        argv: the command and its arguments (no shell).
        env: variables laid over the inherited environment (which never passes on
            ``MCPEVAL_HTTP_AUTHORIZATION`` or ``MCPEVAL_SESSION``: ``transport.environ``).
    """

    argv: tuple[str, ...]
    env: Mapping[str, str] | None = None


@dataclass(frozen=True)
class HttpTarget:
    """A Streamable HTTP MCP endpoint, checked by ``transport.policy.check_endpoint`` on connect.

    Attributes:
        url: the endpoint URL: loopback, or HTTPS when ``allow_remote_http``.
        allow_remote_http: the operator's ``--allow-remote-http``.
    """

    url: str
    allow_remote_http: bool = False

    def __repr__(self) -> str:
        return f"HttpTarget(url=<hidden>, allow_remote_http={self.allow_remote_http})"


Target = StdioTarget | HttpTarget


@dataclass(frozen=True)
class RpcError:
    """A JSON-RPC error object (in memory only: ``message`` and ``data`` are raw server text).

    Attributes:
        code: the integer error code.
        message: the error message ("" when absent or not a string).
        data: the ``data`` member, or None.
        payload: the whole error object as received (extra members such as ``retryable`` included).
    """

    code: int
    message: str
    data: Any = None
    payload: dict[str, Any] = field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        return f"RpcError(code={self.code})"

    def to_dict(self) -> dict[str, Any]:
        """The error object as received (or rebuilt from ``code``/``message``/``data``).

        Returns:
            The JSON-RPC error object; ``retryable`` and other members are kept when the server sent them.
        """
        if self.payload:
            return dict(self.payload)
        built: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            built["data"] = self.data
        return built


@dataclass(frozen=True)
class Response:
    """A JSON-RPC response: exactly one of ``result`` and ``error`` is set.

    Attributes:
        result: the ``result`` member (any JSON value; None when the response is an error).
        error: the error, or None on success.
    """

    result: Any = None
    error: RpcError | None = None

    @property
    def ok(self) -> bool:
        """True when the response carries a result."""
        return self.error is None

    def __repr__(self) -> str:
        return "Response(result=...)" if self.error is None else f"Response(error={self.error!r})"


def decline(_method: str, _params: Any) -> Response:
    """The default server-to-client request handler: error -32601 ``method unavailable`` (SPEC 14).

    Returns:
        An error response.
    """
    return Response(error=RpcError(METHOD_UNAVAILABLE, "method unavailable"))


#: Answers one server-to-client request: ``(method, params) -> Response``.
ServerRequestHandler = Callable[[str, Any], Response]


@dataclass(frozen=True)
class ToolOutcome:
    """The classification of one ``tools/call`` response (SPEC 8.3).

    Attributes:
        kind: ``success``, ``tool-error`` (``result.isError`` is true) or ``rpc-error``.
        result: the result object (on success and on tool-error), else None.
        code: -32000 for tool errors, the JSON-RPC code for rpc errors, None on success.
        payload: the error object: ``{"code": "tool-error", "message": ...}`` for tool errors, the
            JSON-RPC error object for rpc errors (``retryable`` is read from it), None on success.
        latency_ms: milliseconds from sending the request to reading its response.
        server_requests: server-to-client requests answered during the call.
    """

    kind: Literal["success", "tool-error", "rpc-error"]
    result: Any
    code: int | None
    payload: dict[str, Any] | None
    latency_ms: int
    server_requests: int = 0

    @property
    def ok(self) -> bool:
        """True on success."""
        return self.kind == "success"

    def __repr__(self) -> str:
        return f"ToolOutcome(kind={self.kind!r}, code={self.code}, latency_ms={self.latency_ms})"


@dataclass(frozen=True)
class Catalog:
    """The tools a server listed, walked over at most ``max_pages`` pages.

    Attributes:
        tools: the raw listed entries, the first listing of each name kept, in listing order.
        pages: the number of ``tools/list`` pages read.
        excluded: names of listed tools left out because their ``x-mcp-header`` declaration breaks the
            2026-07-28 rules (a client of that revision on HTTP MUST exclude them); empty otherwise.
    """

    tools: list[dict[str, Any]] = field(default_factory=list)
    pages: int = 0
    excluded: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        """The listed tool names, in listing order."""
        return [str(tool["name"]) for tool in self.tools]

    def get(self, name: str) -> dict[str, Any] | None:
        """The listed entry of tool ``name``, or None."""
        return next((tool for tool in self.tools if tool["name"] == name), None)

    def __repr__(self) -> str:
        return f"Catalog(tools={len(self.tools)}, pages={self.pages})"


@dataclass(frozen=True)
class PendingCall:
    """A ``tools/call`` sent by ``McpSession.start_call`` whose response has not been read yet.

    Attributes:
        request_id: the JSON-RPC id of the request.
        started: the ``time.monotonic()`` instant the request was sent.
    """

    request_id: int
    started: float
