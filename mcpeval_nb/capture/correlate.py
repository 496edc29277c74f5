"""Pair requests with responses and turn frames into call records (SPEC 2.4-2.6).

The correlator sees raw frames in memory and emits only sanitisable records: shaped arguments,
ErrorInfo with salted template ids, latencies and outcomes.  It never stores or returns frame text.
One correlator serves one shim process; ``scope`` separates HTTP requests in shim-http.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import clock
from ..clock import now_ts
from ..jsonfmt import JSONFormatError, format_number, loads
from ..privacy.errorinfo import error_info, tool_error_info
from ..privacy.grammar import opaque_session, valid_method, valid_tool
from ..privacy.records import CallRecord
from ..privacy.shape import EnumIndex, shape
from .catalog import CatalogWatcher, cursor_key
from .oversized import Glimpse, answer_id
from .pending import Pending, PendingTable

__all__ = ["EVICTED", "EXCHANGE_ENDED", "ID_COLLISION", "OVERSIZED_ANSWER", "Correlator", "classify_frame",
           "id_key"]


def _is_i64(v: Any) -> bool:
    """The reference reads an error code as a signed 64-bit integer: anything else is not JSON-RPC."""
    return isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63


def _valid_id(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, int | float) and not isinstance(v, bool))


def classify_frame(frame: bytes | str) -> dict[str, Any] | None:
    """Parse a frame and return it when it is a valid JSON-RPC 2.0 message, else None (unparsed).

    Valid: an object with ``"jsonrpc": "2.0"`` that is either a request/notification (string method in
    the method grammar, no result/error, params absent or object/array, id absent or string/number)
    or a response (exactly one of result/error, string/number id, error an object with an integer code
    and a string message; the code must fit a signed 64-bit integer).  Bad JSON and input nested 128 deep
    are unparsed.
    """
    try:
        msg = loads(frame)
    except JSONFormatError:
        return None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return None
    has_result, has_error = "result" in msg, "error" in msg
    if "method" in msg:
        if has_result or has_error or not valid_method(msg["method"]):
            return None
        if "params" in msg and not isinstance(msg["params"], dict | list):
            return None
        if "id" in msg and not _valid_id(msg["id"]):
            return None
        return msg
    if has_result == has_error or "id" not in msg or not _valid_id(msg["id"]):
        return None
    if has_error:
        err = msg["error"]
        if not (isinstance(err, dict) and _is_i64(err.get("code")) and isinstance(err.get("message"), str)):
            return None
    return msg


def id_key(scope: str, msg_id: str | int | float) -> str:
    """Pending-request key: ``7`` and ``"7"`` never collide."""
    if isinstance(msg_id, str):
        return f"{scope}:s:{msg_id}"
    return f"{scope}:n:{format_number(msg_id)}"


#: ``error.code`` of the content-free ``unknown`` records for requests whose answer cannot be recorded.
OVERSIZED_ANSWER = "capture-answer-oversized"
ID_COLLISION = "capture-id-collision"
EVICTED = "capture-pending-evicted"
EXCHANGE_ENDED = "capture-exchange-ended"


class Correlator:
    """Turns the frames of one capture into call records, strictly in arrival order.

    Requests awaiting an answer are bounded (``PendingTable``): past the bounds the oldest is journaled
    as a content-free ``unknown`` record.  A request whose id is already pending (in the same scope)
    displaces the earlier one: both are journaled with their own method, tool and arguments and the
    outcome ``unknown``, because the answer cannot be told apart; no record mixes two calls.

    Args:
        server: the server label (grammar-checked by the caller).
        session: the raw session value (``MCPEVAL_SESSION`` or a uuid); only its opaque token is kept.
        salt: the capture root's salt, for error template ids.
        pending: the table of requests awaiting answers (default: the bounds of ``limits``).
        catalog: observe ``tools/list`` answers and build catalog records (``self.catalog``; the
            recorder drains them).
        known_names: names of tools other servers listed (for ``cross-tool-reference``; read once).
    """

    def __init__(self, *, server: str, session: str, salt: bytes, pending: PendingTable | None = None,
                 catalog: bool = True, known_names: Callable[[], frozenset[str]] = frozenset) -> None:
        self.server = server
        self.session = opaque_session(session)
        self._salt = salt
        self.seq = 0
        self.enums = EnumIndex()
        self.pending = pending if pending is not None else PendingTable()
        self.catalog = CatalogWatcher(server=server, session=self.session, salt=salt,
                                      known_names=known_names) if catalog else None

    def _record(self, method: str, outcome: str, **extra: Any) -> CallRecord:
        self.seq += 1
        return CallRecord(ts=now_ts(), session=self.session, seq=self.seq, server=self.server,
                          method=method, outcome=outcome, kind="real", **extra)

    def unparsed(self, direction: str, *, overhead_us: int = 0) -> CallRecord:
        """A content-free record for a frame that is not a valid JSON-RPC message."""
        return self._record(f"unparsed/{direction}", "unparsed", shim_self_us=overhead_us)

    def observe(self, direction: str, msg: dict[str, Any] | None, *, scope: str = "", overhead_us: int = 0,
                now_ms: int | None = None) -> list[CallRecord]:
        """Every record one classified frame completes, in order.

        Args:
            direction: ``outbound`` (client to server) or ``inbound``.
            msg: the frame as ``classify_frame`` returned it (None: not JSON-RPC).
            scope: the correlation scope (``""`` on stdio, one per HTTP exchange).
            overhead_us: the frame's share of ``shim_self_us``.
            now_ms: wall-clock ms when the frame was read (default: now).

        Returns:
            The records: an unparsed frame's, a matched answer's, a notification's, or those of requests
            a new request displaced (an id collision, the oldest past the bounds).
        """
        if msg is None:
            return [self.unparsed(direction, overhead_us=overhead_us)]
        if direction == "outbound":
            return self.note_request(msg, scope=scope, overhead_us=overhead_us, now_ms=now_ms)
        record = self._inbound(msg, scope, overhead_us, now_ms)
        return [] if record is None else [record]

    def on_outbound(self, frame: bytes | str, *, scope: str = "", overhead_us: int = 0,
                    now_ms: int | None = None, msg: dict[str, Any] | None = None) -> CallRecord | None:
        """Client-to-server frame: remember a request, or record an unparsed frame.

        Returns:
            The first record the frame completes (``observe`` returns every one), or None.
        """
        msg = msg if msg is not None else classify_frame(frame)
        records = self.observe("outbound", msg, scope=scope, overhead_us=overhead_us, now_ms=now_ms)
        return records[0] if records else None

    def note_request(self, msg: dict[str, Any], *, scope: str = "", overhead_us: int = 0,
                     now_ms: int | None = None) -> list[CallRecord]:
        """Store a valid outbound request as pending (notifications and responses are ignored).

        Returns:
            Records of the requests it displaced: an earlier one with the same id, then the oldest
            evicted to keep the table within its bounds.
        """
        if "method" not in msg or "id" not in msg:
            return []
        params = msg.get("params")
        tool = None
        if msg["method"] == "tools/call" and isinstance(params, dict) and "name" in params:
            name = params["name"]
            tool = name if valid_tool(name) else "unlisted"
        args = None
        if isinstance(params, dict) and "arguments" in params:
            args = Pending.encode_args(shape(params["arguments"], tool or "", self.enums))
        cursor = cursor_key(params.get("cursor")) if msg["method"] == "tools/list" and isinstance(
            params, dict) else None
        sent = now_ms if now_ms is not None else clock.now_ms()
        entry = Pending(msg["method"], tool, args, sent, overhead_us, scope, cursor=cursor)
        previous, evicted = self.pending.put(id_key(scope, msg["id"]), entry)
        records = [] if previous is None else [self._displaced(previous, ID_COLLISION)]
        return records + [self._displaced(p, EVICTED) for p in evicted]

    def end_scope(self, scope: str) -> list[CallRecord]:
        """An HTTP exchange ended: journal its unanswered requests as ``unknown`` and forget them."""
        return [self._displaced(p, EXCHANGE_ENDED) for p in self.pending.drop_scope(scope)]

    def oversized(self, direction: str, glimpse: Glimpse, *, scope: str = "", overhead_us: int = 0,
                  now_ms: int | None = None) -> CallRecord:
        """A frame over the bound that was forwarded unparsed.

        Returns:
            For an answer whose id its ends show, the request's record with outcome ``unknown``, its
            latency and ``error.code`` ``capture-answer-oversized``; otherwise an unparsed record.
        """
        msg_id = answer_id(glimpse) if direction == "inbound" else None
        pending = None if msg_id is None else self.pending.pop(id_key(scope, msg_id))
        if pending is None:
            return self.unparsed(direction, overhead_us=overhead_us)
        now = now_ms if now_ms is not None else clock.now_ms()
        return self._record(pending.method, "unknown", tool=pending.tool, args=pending.args,
                            latency_ms=max(0, now - pending.sent_ms), error={"code": OVERSIZED_ANSWER},
                            shim_self_us=pending.overhead_us + overhead_us)

    def on_inbound(self, frame: bytes | str, *, scope: str = "", overhead_us: int = 0,
                   now_ms: int | None = None, msg: dict[str, Any] | None = None) -> CallRecord | None:
        """Server-to-client frame: a matched response, a notification, or an unparsed frame."""
        msg = msg if msg is not None else classify_frame(frame)
        records = self.observe("inbound", msg, scope=scope, overhead_us=overhead_us, now_ms=now_ms)
        return records[0] if records else None

    def _inbound(self, msg: dict[str, Any], scope: str, overhead_us: int,
                 now_ms: int | None) -> CallRecord | None:
        if "method" in msg:
            if "id" in msg:
                return None  # a server-to-client request: not recorded, pending untouched
            return self._record(msg["method"], "notification", shim_self_us=0)
        pending = self.pending.pop(id_key(scope, msg["id"]))
        if pending is None:
            return None
        if pending.collided:  # the answer may be the other request's: record the call, not the answer
            return self._displaced(pending, ID_COLLISION, overhead_us)
        now = now_ms if now_ms is not None else clock.now_ms()
        return self._response(msg, pending, max(0, now - pending.sent_ms), pending.overhead_us + overhead_us)

    def _displaced(self, p: Pending, code: str, overhead_us: int = 0) -> CallRecord:
        return self._record(p.method, "unknown", tool=p.tool, args=p.args, error={"code": code},
                            shim_self_us=p.overhead_us + overhead_us)

    def _response(self, msg: dict[str, Any], p: Pending, latency: int, overhead: int) -> CallRecord:
        result = msg.get("result")
        if p.method == "tools/list" and isinstance(result, dict):
            self.enums.learn_listing(result)
        outcome, error = "ok", None
        if "error" in msg:
            outcome, error = "error", error_info(msg, self._salt)
        elif p.method == "tools/call" and isinstance(result, dict) and "isError" in result:
            if result["isError"] is True:
                outcome, error = "error", tool_error_info(result, self._salt)
            elif not isinstance(result["isError"], bool):
                outcome = "unknown"
        record = self._record(p.method, outcome, tool=p.tool, args=p.args, latency_ms=latency,
                              error=error, shim_self_us=overhead)
        if p.method == "tools/list" and self.catalog is not None:
            self.catalog.page(p.cursor, record.seq, msg)
        return record
