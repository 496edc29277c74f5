"""The streaming half of ``McpSession``: calls left pending, their cancellation, notifications, and
``subscriptions/listen``.

``start_call``/``cancel``/``finish`` serve the cancellation kind: on stdio (both eras) and legacy HTTP a
cancellation is ``notifications/cancelled``; on modern HTTP it is closing the request's stream (the
revision defines no client notifications there).  ``wait_notification`` waits for one notification
(legacy HTTP opens the GET stream first).  ``listen`` opens a modern ``subscriptions/listen`` request,
waits for its acknowledgement and returns a ``Subscription`` whose ``wait`` returns the first matching
notification tagged with its id; ``Subscription.close`` ends it (stream closed on HTTP,
``notifications/cancelled`` on stdio).  Every wait is bounded and the notification bounds still apply.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import TransportError
from .dispatch import Inbox, SubRequests
from .era import META_SUBSCRIPTION
from .messages import PendingCall, Response

if TYPE_CHECKING:
    from .session import Channel

__all__ = ["StreamsMixin", "Subscription"]

_ACK = "notifications/subscriptions/acknowledged"


class StreamsMixin:
    """Pending calls, cancellation, notification waits and subscriptions (see the module docstring)."""

    _channel: Channel
    _inbox: Inbox

    if TYPE_CHECKING:
        @property
        def modern(self) -> bool: ...  # pragma: no cover

        def notify(self, method: str, params: Any = None) -> None: ...  # pragma: no cover

        def _send_request(self, method: str, params: Any, timeout: float | None, *,
                          deadline: float | None = None, headers: Any = None) -> PendingCall: ...

        def _await(self, call: PendingCall, deadline: float, subs: SubRequests) -> Response: ...

        def _deadline(self, start: float, timeout: float | None) -> float: ...  # pragma: no cover

        def _cap(self, deadline: float) -> float: ...  # pragma: no cover

        def _guard(self) -> Any: ...  # pragma: no cover

        def _reply(self, message: dict[str, Any]) -> None: ...  # pragma: no cover

    def start_call(self, name: str, arguments: dict[str, Any]) -> PendingCall:
        """Send ``tools/call`` without waiting for its response (for the cancellation kind).

        Args:
            name: the tool name.
            arguments: the arguments object.

        Returns:
            The pending call; pass it to ``cancel`` or ``finish``.

        Raises:
            TransportError: as ``request``.
        """
        return self._send_request("tools/call", {"name": name, "arguments": arguments}, None)

    def cancel(self, call: PendingCall, *, reason: str = "cancelled by mcpeval",
               grace_seconds: float = 1.0) -> Response | None:
        """Send ``notifications/cancelled {requestId, reason}`` and wait up to ``grace_seconds``.

        Args:
            call: the pending call from ``start_call``.
            reason: the cancellation reason sent to the server.
            grace_seconds: how long to wait for a response after cancelling.

        Returns:
            The response if one arrived within the grace period, else None (its late reply will be
            discarded once).

        Raises:
            TransportError: a transport failure other than the grace period running out.
        """
        abort = getattr(self._channel, "abort", None)
        if self.modern and abort is not None:
            abort(call.request_id)  # on modern HTTP, closing the stream is the cancellation
            self._inbox.abandon(call.request_id)
            return None
        answered = getattr(self._channel, "wait_answered", None)
        if answered is not None:  # HTTP posts each request on a worker: the cancellation must not overtake
            # it, so it waits for the POST's headers (an SSE stream opens at once; a JSON answer's headers
            # come with the answer, so at most the grace)
            answered(call.request_id, self._cap(time.monotonic() + grace_seconds))
        self.notify("notifications/cancelled", {"requestId": call.request_id, "reason": reason})
        deadline = self._cap(time.monotonic() + grace_seconds)
        try:
            return self._await(call, deadline, SubRequests(None, None))
        except TransportError as exc:
            if exc.reason == "transport-timeout":
                return None
            raise

    def finish(self, call: PendingCall, *, timeout: float | None = None) -> Response:
        """Wait for the response of a call sent with ``start_call``; the deadline runs from its send.

        Args:
            call: the pending call.
            timeout: seconds from the send (default: the session's timeout).

        Returns:
            The response.

        Raises:
            TransportError: as ``request``.
        """
        return self._await(call, self._deadline(call.started, timeout), SubRequests(None, None))

    @property
    def notifications(self) -> list[dict[str, Any]]:
        """Notifications buffered since the last request was sent (raw; in memory only)."""
        return list(self._inbox.notes)

    def wait_notification(self, match: Callable[[dict[str, Any]], bool], *,
                          timeout: float) -> dict[str, Any] | None:
        """Return the first buffered or incoming notification ``match`` accepts, waiting up to ``timeout``.

        Server requests arriving meanwhile are declined (bound 8); the notification bounds still apply.
        Over HTTP this opens the standalone GET stream first (server-initiated messages travel there).

        Args:
            match: accepts the wanted notification (the raw message object).
            timeout: seconds to wait at most (capped by the budget).

        Returns:
            The notification, or None when none matched in time.

        Raises:
            TransportError: a transport failure or a broken limit.
        """
        found = next((note for note in self._inbox.notes if match(note)), None)
        if found is None:
            self._channel.listen()
        deadline = self._cap(time.monotonic() + timeout)
        subs = SubRequests(None, None)
        while found is None:
            got = self._next(None, deadline, subs)
            if got is None:
                return None
            note = got[0]
            found = note if note is not None and match(note) else None
        return found


    def listen(self, notifications: dict[str, Any], *, timeout: float) -> Subscription | None:
        """Open a modern ``subscriptions/listen`` stream and wait up to ``timeout`` for its acknowledgement.

        Args:
            notifications: the filter (``toolsListChanged``, ``resourceSubscriptions``, ...).
            timeout: seconds to wait for the acknowledgement (the stream itself lives until ``close``).

        Returns:
            The subscription, or None when the server refused it or never acknowledged it.

        Raises:
            TransportError: a transport failure or a broken limit.
        """
        deadline = self._cap(time.monotonic() + timeout)
        pending = self._send_request("subscriptions/listen", {"notifications": notifications}, None,
                                     deadline=self._cap(time.monotonic() + 3600.0))
        subscription = Subscription(self, pending.request_id)
        if subscription.wait(subscription.acknowledges, deadline=deadline) is None:
            subscription.close()
            return None
        return subscription

    def _next(self, request_id: int | None, deadline: float, subs: SubRequests) -> Any:
        """One routed message until ``deadline``: (notification or None, response to ``request_id``)."""
        with self._guard():
            item = self._channel.receive(deadline)
            if item is None:
                return None
            message = item[0]
            if "method" in message and "id" not in message:
                self._inbox.buffer(message, item[1])
                return message, None
            return None, self._inbox.route(item, request_id, subs, self._reply)


class Subscription:
    """An open ``subscriptions/listen`` stream (``StreamsMixin.listen``)."""

    def __init__(self, session: StreamsMixin, request_id: int) -> None:
        self._session, self.request_id = session, request_id
        self.closed = False

    def acknowledges(self, note: dict[str, Any]) -> bool:
        """The acknowledgement of this subscription."""
        return note.get("method") == _ACK and self.tagged(note)

    def tagged(self, note: dict[str, Any]) -> bool:
        """The notification carries this subscription's id in ``_meta``."""
        params = note.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        return isinstance(meta, dict) and meta.get(META_SUBSCRIPTION) == self.request_id

    def wait(self, match: Callable[[dict[str, Any]], bool], *, deadline: float) -> dict[str, Any] | None:
        """The first buffered or arriving notification ``match`` accepts, or None at ``deadline`` or when
        the server ended the subscription (its response, or an error)."""
        session = self._session
        found = next((n for n in session._inbox.notes if match(n)), None)
        subs = SubRequests(None, None)
        while found is None and not self.closed:
            got = session._next(self.request_id, deadline, subs)
            if got is None:
                return None
            note, response = got
            if response is not None:
                self.closed = True
                return None
            found = note if note is not None and match(note) else None
        return found

    def close(self) -> None:
        """End the subscription: close its stream (HTTP) or send ``notifications/cancelled`` (stdio)."""
        if self.closed:
            return
        self.closed = True
        session = self._session
        session._inbox.abandon(self.request_id)
        abort = getattr(session._channel, "abort", None)
        try:
            if abort is not None:
                abort(self.request_id)
            else:
                session.notify("notifications/cancelled", {"requestId": self.request_id,
                                                           "reason": "subscription ended"})
        except TransportError:
            return
