"""Routing of incoming messages while a response is awaited (SPEC 14).

``Inbox.route`` applies the rules the session relies on, the same on every transport: a response to the
outstanding id is validated and returned; a late reply to an abandoned (timed-out) id is discarded
once; any other response fails fast; notifications are buffered up to 128 frames and 4 MiB; server
requests are answered by a handler up to a bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..limits import MAX_NOTIFICATION_BYTES, MAX_NOTIFICATIONS, MAX_SERVER_REQUESTS
from . import jsonrpc
from .classify import parse_response
from .jsonrpc import Incoming
from .messages import Response, ServerRequestHandler, decline

__all__ = ["Inbox", "SubRequests"]


class SubRequests:
    """Server-to-client requests answered while one response is awaited.

    Args:
        handler: answers ``(method, params)``; None declines with -32601.
        bound: how many may be answered; None means ``MAX_SERVER_REQUESTS`` (8).
    """

    def __init__(self, handler: ServerRequestHandler | None = None, bound: int | None = None) -> None:
        self.handler = handler or decline
        self.bound = MAX_SERVER_REQUESTS if bound is None else bound
        self.count = 0


class Inbox:
    """The per-session state of message routing: abandoned ids and the notification buffer."""

    def __init__(self) -> None:
        self._abandoned: set[int] = set()
        self.notes: list[dict[str, Any]] = []
        self._note_bytes = 0

    def clear_notifications(self) -> None:
        """Empty the notification buffer (done when a new request is sent)."""
        self.notes, self._note_bytes = [], 0

    def abandon(self, request_id: int) -> None:
        """Remember a timed-out request so that its late reply is discarded once."""
        self._abandoned.add(request_id)

    def route(self, item: Incoming, request_id: int | None, subs: SubRequests,
              reply: Callable[[dict[str, Any]], None]) -> Response | None:
        """Apply the routing rules to one incoming message.

        Args:
            item: the message and its frame size.
            request_id: the outstanding request id (None when only notifications are awaited).
            subs: the server-request handler and its bound.
            reply: sends a JSON-RPC message back to the server.

        Returns:
            The response to ``request_id``, or None when the message was something else.

        Raises:
            TransportError: ``transport-error`` for a mismatched id, a malformed response, a notification
                flood or too many server requests.
        """
        message, size = item
        method = message.get("method")
        if method is not None:
            if "id" in message:
                self.serve(message, subs, reply)
            else:
                self.buffer(message, size)
            return None
        if "id" not in message:
            return None
        msg_id = message["id"]
        if request_id is not None and type(msg_id) is int and msg_id == request_id:
            return parse_response(message)
        if type(msg_id) is int and msg_id in self._abandoned:
            self._abandoned.discard(msg_id)
            return None
        raise jsonrpc.failure(jsonrpc.MISMATCHED_ID)

    def buffer(self, message: dict[str, Any], size: int) -> None:
        """Buffer one notification.

        Raises:
            TransportError: the buffer already holds 128 notifications or would pass 4 MiB.
        """
        if len(self.notes) >= MAX_NOTIFICATIONS or self._note_bytes + size > MAX_NOTIFICATION_BYTES:
            raise jsonrpc.failure(jsonrpc.NOTIFICATION_FLOOD)
        self.notes.append(message)
        self._note_bytes += size

    @staticmethod
    def serve(message: dict[str, Any], subs: SubRequests, reply: Callable[[dict[str, Any]], None]) -> None:
        """Answer one server-to-client request through ``subs.handler``.

        Raises:
            TransportError: more server requests than ``subs.bound``.
        """
        subs.count += 1
        if subs.count > subs.bound:
            raise jsonrpc.failure(jsonrpc.SUB_REQUEST_FLOOD)
        method = message["method"]
        answer = subs.handler(method, message.get("params")) if isinstance(method, str) else decline("", None)
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if answer.error is None:
            out["result"] = answer.result
        else:
            out["error"] = answer.error.to_dict()
        reply(out)
