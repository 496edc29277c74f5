"""The MCP session layer: handshake, catalog, requests with fixed deadlines, tool-call classification.

``McpSession.connect(target)`` opens a bounded channel (stdio child or Streamable HTTP endpoint) and
every operation after that follows SPEC 8.2 and 14: each request gets a deadline fixed when it is sent
(capped by the shared budget's end) that notifications cannot extend; unsolicited notifications are
buffered up to 128 frames and 4 MiB per request; server-to-client requests are answered by a handler
(default -32601) up to a bound; a response with an unknown id fails fast unless it is the late reply to
an abandoned (timed-out) request, which is discarded once.  Any failure other than a response timeout
closes the session.  Errors are ``TransportError`` with a reason and a fixed message, never contents.

Both protocol eras (``transport.era``): ``initialize`` opens a legacy session; ``discover`` and
``adopt`` a modern (2026-07-28) one, after which every request carries ``_meta`` (protocol version,
client info, client capabilities) and, on HTTP, the ``Mcp-*`` headers; ``tools/call``,
``prompts/get`` and ``resources/read`` are driven through input-required rounds and task polling by
``transport.modern.settle`` under the same deadline and server-request bound.  Which era a connection
speaks is decided by ``transport.negotiate``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any, Protocol

from .._version import __version__
from ..errors import TransportError
from ..limits import (
    DEFAULT_IO_TIMEOUT_S,
    DEFAULT_RESPONSE_TIMEOUT_S,
    MAX_TOOL_PAGES,
)
from . import jsonrpc
from .budget import BUDGET_EXCEEDED, Budget
from .classify import classify_tool_response
from .dispatch import Inbox, SubRequests
from .era import Negotiated, supported_versions
from .eras import CLIENT_NAME, EraMixin
from .headers import ParamHeaders
from .jsonrpc import Incoming
from .messages import (
    Catalog,
    HttpTarget,
    PendingCall,
    Response,
    ServerRequestHandler,
    StdioTarget,
    Target,
    ToolOutcome,
)
from .modern import Observed, settle
from .streams import StreamsMixin

__all__ = ["CLIENT_NAME", "PROTOCOL_VERSION", "Channel", "McpSession"]

PROTOCOL_VERSION = "2025-06-18"
#: The methods a modern server may answer with input-required rounds (and tools/call with a task).
_OPERATIONS = frozenset({"tools/call", "prompts/get", "resources/read"})


class Channel(Protocol):
    """What the session needs from a transport: send, receive with a deadline, close."""

    @property
    def closed(self) -> bool: ...  # pragma: no cover - protocol

    def send(self, message: dict[str, Any], *, deadline: float,
             headers: Mapping[str, str] | None = None) -> None: ...  # pragma: no cover

    def receive(self, deadline: float) -> Incoming | None: ...  # pragma: no cover

    def close(self) -> None: ...  # pragma: no cover

    def listen(self) -> None: ...  # pragma: no cover


class McpSession(EraMixin, StreamsMixin):
    """One MCP connection with hard limits; use ``connect`` to open one.

    Args:
        channel: an open channel (``StdioChannel`` or ``HttpChannel``).
        timeout: the default per-request response deadline in seconds.
        budget: the run's shared budget, charged once per client request (None: unbounded).

    Attributes:
        server_capabilities: the ``capabilities`` object of the initialize result ({} before).
        protocol_version: the protocol version the server answered, or None.
        server_info: the ``serverInfo`` object of the initialize result ({} before); in memory only.
        negotiated: the era and version this connection speaks, once ``initialize`` or ``adopt`` ran.
        instructions: the server's instructions (initialize or discover result), in memory only.
        supported_versions: the versions a discover result named (modern only).
        observed: counters of what a modern connection saw (result types, input rounds, tasks, cache
            hints), for the battery.
        last_http_status: the HTTP status the last awaited response came with (modern HTTP only, else
            None): the revision pins 400 and 404 for its errors.
    """

    def __init__(self, channel: Channel, *, timeout: float, budget: Budget | None = None) -> None:
        self._channel = channel
        self.timeout = timeout
        self._budget = budget
        self._next_id = 1
        self._inbox = Inbox()
        self.server_capabilities: dict[str, Any] = {}
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.negotiated: Negotiated | None = None
        self.instructions: str | None = None
        self.supported_versions: tuple[str, ...] = ()
        self.observed = Observed()
        self._modern: str | None = None
        self._free = False
        self.last_http_status: int | None = None
        self._caps: dict[str, Any] = {}
        self._params: dict[str, ParamHeaders | None] = {}

    @classmethod
    def connect(cls, target: Target, *, timeout: float | None = None,
                budget: Budget | None = None) -> McpSession:
        """Open a channel to ``target`` (no MCP message is exchanged yet).

        Args:
            target: a ``StdioTarget`` (child process) or ``HttpTarget`` (Streamable HTTP endpoint).
            timeout: per-request deadline; defaults to 30 s on stdio and 5 s over HTTP (SPEC 14).
            budget: the run's shared budget.

        Returns:
            The session; use it as a context manager or call ``close()``.

        Raises:
            UsageError: the URL breaks the endpoint policy or ``MCPEVAL_HTTP_AUTHORIZATION`` is invalid.
            TransportError: the command cannot be started, or the budget is already spent.
        """
        if budget is not None and budget.exhausted:
            raise budget.error()
        channel: Channel
        if isinstance(target, StdioTarget):
            from .stdio import StdioChannel

            wait = DEFAULT_RESPONSE_TIMEOUT_S if timeout is None else timeout
            channel = StdioChannel(target.argv, env=target.env, queue_wait=wait)
        elif isinstance(target, HttpTarget):
            from .http import HttpChannel

            wait = DEFAULT_IO_TIMEOUT_S if timeout is None else timeout
            channel = HttpChannel(target.url, allow_remote_http=target.allow_remote_http, timeout=wait)
        else:
            raise TypeError("target must be a StdioTarget or an HttpTarget")
        return cls(channel, timeout=wait, budget=budget)

    # --- handshake and catalog ------------------------------------------------------------------------

    def initialize(self, *, protocol_version: str = PROTOCOL_VERSION,
                   capabilities: dict[str, Any] | None = None, client_info: dict[str, Any] | None = None,
                   send_initialized: bool = True) -> dict[str, Any]:
        """Run the handshake (SPEC 8.2): ``initialize``, then ``notifications/initialized``.

        Args:
            protocol_version: the version offered.
            capabilities: the client capabilities ({} by default).
            client_info: defaults to ``{"name": "mcpeval", "version": <package version>}``.
            send_initialized: send ``notifications/initialized`` after a successful answer.

        Returns:
            The initialize result object (raw; in memory only).

        Raises:
            TransportError: a transport failure, a refused handshake or a result that is not an object
                (``transport-error``).
        """
        params = {"protocolVersion": protocol_version, "capabilities": capabilities or {},
                  "clientInfo": client_info or {"name": CLIENT_NAME, "version": __version__}}
        response = self.request("initialize", params)
        if response.error is not None:
            raise jsonrpc.failure("MCP initialize was refused")
        result = response.result
        if not isinstance(result, dict):
            raise jsonrpc.failure("MCP initialize result is not an object")
        caps, version = result.get("capabilities"), result.get("protocolVersion")
        info, instructions = result.get("serverInfo"), result.get("instructions")
        self.server_capabilities = caps if isinstance(caps, dict) else {}
        self.protocol_version = version if isinstance(version, str) else None
        self.server_info = info if isinstance(info, dict) else {}
        self.instructions = instructions if isinstance(instructions, str) else None
        shaped = supported_versions({"supported": [version]})
        self.negotiated = Negotiated("legacy", shaped[0] if shaped else protocol_version)
        if send_initialized:
            self.notify("notifications/initialized")
        return result

    def list_tools(self, *, max_pages: int = MAX_TOOL_PAGES) -> Catalog:
        """Walk ``tools/list`` (SPEC 8.2): at most ``max_pages`` pages, first listing of a name wins.

        An empty or missing ``nextCursor`` ends the walk; a page after the first that fails ends it too.
        On modern HTTP a tool whose ``x-mcp-header`` declaration is invalid is left out (``excluded``).

        Returns:
            The catalog of raw entries (entries without a string name are skipped).

        Raises:
            TransportError: a transport failure, or a first page that is refused or has no tools array.
        """
        tools: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        pages = 0
        while pages < max_pages:
            response = self.request("tools/list", None if cursor is None else {"cursor": cursor})
            result = response.result if isinstance(response.result, dict) else {}
            entries = result.get("tools")
            if response.error is not None or not isinstance(entries, list):
                if pages == 0:
                    raise jsonrpc.failure("MCP tools/list was refused or malformed")
                break
            pages += 1
            for entry in entries:
                name = entry.get("name") if isinstance(entry, dict) else None
                if isinstance(name, str) and name not in seen:
                    seen.add(name)
                    tools.append(entry)
            cursor = result.get("nextCursor") if isinstance(result.get("nextCursor"), str) else None
            if not cursor:
                break
        excluded: tuple[str, ...] = ()
        if self.modern:
            self.learn_tools(tools)
            tools, excluded = self.exclude_invalid_headers(tools)
        return Catalog(tools=tools, pages=pages, excluded=excluded)

    # --- requests ---------------------------------------------------------------------------------------

    def request(self, method: str, params: Any = None, *, timeout: float | None = None,
                on_server_request: ServerRequestHandler | None = None,
                max_server_requests: int | None = None,
                headers: Mapping[str, str] | None = None, meta: Mapping[str, Any] | None = None) -> Response:
        """Send one request and wait for its response until a deadline fixed now.

        Args:
            method: the JSON-RPC method.
            params: the params member (omitted when None).
            timeout: seconds until the deadline (default: the session's timeout).
            on_server_request: answers server-to-client requests meanwhile (default: -32601).
            max_server_requests: how many server requests may be answered (default 8).
            headers: modern HTTP only: headers laid over the computed ones (the battery's header check
                sends a deliberately wrong one); a modern operation with them is one plain request.
            meta: modern only: ``_meta`` members laid over the computed ones (the battery's version check
                asks at a version the server does not serve).

        Returns:
            The response (result or JSON-RPC error).

        Raises:
            TransportError: ``transport-timeout`` (the session stays usable; a late reply is discarded
                once), ``transport-closed``, ``transport-error`` (a limit or the protocol broken; the session
                is closed) or ``evaluation-budget-exceeded``.
        """
        subs = SubRequests(on_server_request, max_server_requests)
        if self.modern and method in _OPERATIONS and headers is None and meta is None:
            return self._settle(method, params, timeout, subs)[0]
        pending = self._send_request(method, params, timeout, headers=headers, meta=meta)
        response = self._await(pending, self._deadline(pending.started, timeout), subs)
        if self.modern and response.error is None:
            self.observed.note(method, response.result)
        return response

    def _settle(self, method: str, params: Any, timeout: float | None,
                subs: SubRequests) -> tuple[Response, float]:
        """One modern operation (rounds and task polls) under one deadline; (response, start)."""
        started = time.monotonic()
        deadline = self._deadline(started, timeout)
        body = params if isinstance(params, dict) else {}
        response = settle(self._exchange, method, body, deadline=deadline, subs=subs, declared=self._caps,
                          seen=self.observed)
        return response, started

    def _exchange(self, method: str, params: Any, deadline: float, subs: SubRequests) -> Response:
        pending = self._send_request(method, params, None, deadline=deadline)
        return self._await(pending, deadline, subs)

    def notify(self, method: str, params: Any = None) -> None:
        """Send one notification (no response is awaited; not charged to the budget).

        Args:
            method: the notification method.
            params: the params member (omitted when None).

        Raises:
            TransportError: the write failed or missed the session's timeout.
        """
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        with self._guard():
            self._channel.send(message, deadline=self._deadline(time.monotonic(), None))

    def call_tool(self, name: str, arguments: dict[str, Any], *, timeout: float | None = None,
                  on_server_request: ServerRequestHandler | None = None,
                  max_server_requests: int | None = None) -> ToolOutcome:
        """Call a tool and classify the response (SPEC 8.3).

        Args:
            name: the tool name.
            arguments: the arguments object (sent as given; never logged).
            timeout: seconds until the deadline (default: the session's timeout).
            on_server_request: answers server-to-client requests during the call (default: -32601).
            max_server_requests: bound on answered server requests (default 8); one more fails the
                call with ``server issued more sub-requests than the declared bound``.

        Returns:
            The outcome: success, tool-error (``isError: true``) or rpc-error, with its latency.

        Raises:
            TransportError: as ``request``.
        """
        subs = SubRequests(on_server_request, max_server_requests)
        params = {"name": name, "arguments": arguments}
        if self.modern:
            response, started = self._settle("tools/call", params, timeout, subs)
        else:
            pending = self._send_request("tools/call", params, timeout)
            started = pending.started
            response = self._await(pending, self._deadline(pending.started, timeout), subs)
        latency_ms = int((time.monotonic() - started) * 1000)
        return classify_tool_response(response, latency_ms=latency_ms, server_requests=subs.count)

    def ping(self, *, timeout: float | None = None) -> Response:
        """Send ``ping``.

        Args:
            timeout: seconds until the deadline (default: the session's timeout).

        Returns:
            The response (an object result when the server supports ping).

        Raises:
            TransportError: as ``request``.
        """
        return self.request("ping", timeout=timeout)

    # --- internals ----------------------------------------------------------------------------------------

    def _cap(self, deadline: float) -> float:
        return deadline if self._budget is None else min(deadline, self._budget.deadline)

    def _deadline(self, start: float, timeout: float | None) -> float:
        return self._cap(start + (self.timeout if timeout is None else timeout))

    def _send_request(self, method: str, params: Any, timeout: float | None, *,
                      deadline: float | None = None, headers: Mapping[str, str] | None = None,
                      meta: Mapping[str, Any] | None = None) -> PendingCall:
        with self._guard():
            if self._channel.closed:
                raise jsonrpc.closed()
            if self._budget is not None and not self._free:
                self._budget.charge()
            request_id, self._next_id = self._next_id, self._next_id + 1
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if self._modern is not None:
                params = self._with_meta(params, meta)
            if params is not None:
                message["params"] = params
            self._inbox.clear_notifications()
            started = time.monotonic()
            sent = self._headers(message)
            if sent is not None and headers:
                sent.update(headers)
            self._channel.send(message, deadline=self._deadline(started, timeout) if deadline is None
                               else deadline, headers=sent)
            return PendingCall(request_id=request_id, started=started)

    def _await(self, call: PendingCall, deadline: float, subs: SubRequests) -> Response:
        with self._guard():
            while True:
                item = self._channel.receive(deadline)
                if item is None:
                    self._inbox.abandon(call.request_id)
                    raise jsonrpc.timeout()
                response = self._inbox.route(item, call.request_id, subs, self._reply)
                if response is not None:
                    status_of = getattr(self._channel, "status_of", None)
                    self.last_http_status = None if status_of is None else status_of(call.request_id)
                    return response

    def _reply(self, message: dict[str, Any]) -> None:
        self._channel.send(message, deadline=self._deadline(time.monotonic(), None))

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except TransportError as exc:
            fatal = exc.reason in ("transport-error", "transport-closed") and not getattr(
                exc, "keeps_session", False)
            if fatal or self._channel.closed:
                self.close()
            if self._budget is not None and self._budget.exhausted and exc.reason != BUDGET_EXCEEDED:
                raise self._budget.error() from None
            raise

    # --- lifetime ------------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the session (or its channel) is closed."""
        return self._channel.closed

    def close(self) -> None:
        """Cancel I/O, terminate and reap a stdio child, end an HTTP session; idempotent."""
        self._channel.close()

    def __enter__(self) -> McpSession:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
