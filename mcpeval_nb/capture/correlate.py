"""Pair requests with responses and turn frames into call records (SPEC 2.4-2.6), for both protocol eras.

The correlator sees raw frames in memory and emits only sanitisable records: shaped arguments,
ErrorInfo with salted template ids, latencies and outcomes, and the content-free ``ext`` object of the
2026-07-28 revision (per-request protocol version, trace context, operation rounds and waits, flags).  It
never stores or returns frame text.  One correlator serves one shim process; ``scope`` separates HTTP
requests in shim-http.  Multi round-trip requests and task-augmented calls are one operation each
(``operations``); an answer is classified in one place (``_complete``, through ``wire.classify_answer``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from .. import clock
from ..clock import now_ts
from ..jsonfmt import JSONFormatError, format_number, loads
from ..privacy.ext import ABANDONED
from ..privacy.grammar import opaque_session, valid_method, valid_tool
from ..privacy.records import CallRecord
from ..privacy.shape import EnumIndex, shape
from .catalog import CatalogWatcher, cursor_key
from .operations import Operation, Operations, ext_fields
from .oversized import Glimpse, answer_id
from .pending import Pending, PendingTable
from .wire import (
    NO_FACTS,
    SUBSCRIPTION_META,
    TASK_METHODS,
    Answer,
    HttpFacts,
    Keyer,
    RequestFacts,
    classify_answer,
    request_facts,
)

__all__ = ["ABANDONED", "EVICTED", "EXCHANGE_ENDED", "ID_COLLISION", "OVERSIZED_ANSWER", "Correlator",
           "classify_frame", "id_key"]


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
LISTEN = "subscriptions/listen"
_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def _common(facts: RequestFacts, flags: Iterable[str]) -> dict[str, Any]:
    """The ``ext`` members any request's record may carry: protocol, trace context, request id, prompt
    name, flags (an empty object for a request without any 2026-07-28 fact or flag)."""
    ext: dict[str, Any] = {}
    if facts.protocol is not None:
        ext["protocol"] = facts.protocol
    if facts.trace is not None:
        ext["trace_id"], ext["parent_span_id"] = facts.trace
    if flags:
        ext["flags"] = sorted(flags)
    if ext:  # never on their own: a legacy request keeps SPEC's bytes
        if facts.request_id is not None:
            ext["request_id"] = facts.request_id
        if facts.prompt is not None:
            ext["prompt"] = facts.prompt
    return ext


def _op_ext(op: Operation) -> dict[str, Any]:
    return {**_common(op.facts, op.flags), **ext_fields(op)}


class Correlator:
    """Turns the frames of one capture into call records, strictly in arrival order.

    Requests awaiting an answer are bounded (``PendingTable``): past the bounds the oldest is journaled
    as a content-free ``unknown`` record.  A request whose id is already pending (in the same scope)
    displaces the earlier one: both are journaled with their own method, tool and arguments and the
    outcome ``unknown``, because the answer cannot be told apart; no record mixes two calls.  A multi
    round-trip request or a task-augmented call is one record when its operation ends (``operations``).

    Args:
        server: the server label (grammar-checked by the caller).
        session: the raw session value (``MCPEVAL_SESSION`` or a uuid); only its opaque token is kept.
        salt: the capture root's salt, for error template ids.
        pending: the table of requests awaiting answers (default: the bounds of ``limits``).
        catalog: observe ``tools/list`` answers and build catalog records (``self.catalog``; the
            recorder drains them).
        known_names: names of tools other servers listed (for ``cross-tool-reference``; read once).
        operations: the table of operations waiting on their client (default: the bounds of ``limits``).
        transport: ``pipe`` (stdio) or ``tcp`` (shim-http), written beside any other ``ext`` member.
        address: the upstream's host as it may be stored (``privacy.urls`` shaping), or None.
        port: the upstream's port, or None.
    """

    def __init__(self, *, server: str, session: str, salt: bytes, pending: PendingTable | None = None,
                 catalog: bool = True, known_names: Callable[[], frozenset[str]] = frozenset,
                 operations: Operations | None = None, transport: str = "pipe", address: str | None = None,
                 port: int | None = None) -> None:
        self.server = server
        self.session = opaque_session(session)
        self._salt = salt
        self.seq = 0
        self.enums = EnumIndex()
        self.pending = pending if pending is not None else PendingTable()
        self.catalog = CatalogWatcher(server=server, session=self.session, salt=salt,
                                      known_names=known_names) if catalog else None
        self.operations = operations if operations is not None else Operations()
        self.keyer = Keyer()
        self.transport, self.address, self.port = transport, address, port
        self._protocols: dict[str, str] = {}  # scope -> the protocol its requests declared (notifications)

    def _record(self, method: str, outcome: str, *, ext: dict[str, Any] | None = None,
                **extra: Any) -> CallRecord:
        self.seq += 1
        if ext:
            ext["transport"] = self.transport
            if self.address is not None:
                ext["address"] = self.address
            if self.port is not None:
                ext["port"] = self.port
        return CallRecord(ts=now_ts(), session=self.session, seq=self.seq, server=self.server,
                          method=method, outcome=outcome, kind="real", ext=ext or None, **extra)

    def unparsed(self, direction: str, *, overhead_us: int = 0) -> CallRecord:
        """A content-free record for a frame that is not a valid JSON-RPC message."""
        return self._record(f"unparsed/{direction}", "unparsed", shim_self_us=overhead_us)

    def observe(self, direction: str, msg: dict[str, Any] | None, *, scope: str = "", overhead_us: int = 0,
                now_ms: int | None = None, http: HttpFacts | None = None) -> list[CallRecord]:
        """Every record one classified frame completes, in order.

        Args:
            direction: ``outbound`` (client to server) or ``inbound``.
            msg: the frame as ``classify_frame`` returned it (None: not JSON-RPC).
            scope: the correlation scope (``""`` on stdio, one per HTTP exchange).
            overhead_us: the frame's share of ``shim_self_us``.
            now_ms: wall-clock ms when the frame was read (default: now).
            http: shim-http's facts of the request's headers (outbound only), or None.

        Returns:
            The records: operations abandoned by their idle bound, then an unparsed frame's, a matched
            answer's (or finished operation's), a notification's, or those of requests a new request
            displaced (an id collision, the oldest past the bounds).
        """
        if msg is None:
            return [self.unparsed(direction, overhead_us=overhead_us)]
        now = now_ms if now_ms is not None else clock.now_ms()
        records = [self._abandoned(op) for op in self.operations.expired(now)] if len(self.operations) else []
        if direction == "outbound":
            return records + self.note_request(msg, scope=scope, overhead_us=overhead_us, now_ms=now,
                                               http=http)
        return records + self._inbound(msg, scope, overhead_us, now)

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
                     now_ms: int | None = None, http: HttpFacts | None = None) -> list[CallRecord]:
        """Store a valid outbound request as pending (notifications and responses are ignored, but for
        ``notifications/cancelled`` of an acknowledged ``subscriptions/listen``: the stream's normal end).

        Returns:
            Records of the requests it displaced: an earlier one with the same id, then the oldest
            evicted to keep the table within its bounds (or the cancelled subscription's).
        """
        now = now_ms if now_ms is not None else clock.now_ms()
        if "method" not in msg or "id" not in msg:
            return self._client_notification(msg, scope, now)
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
        entry = Pending(msg["method"], tool, args, now, overhead_us, scope, cursor=cursor)
        facts = request_facts(msg, self.keyer, http)
        if facts is not NO_FACTS:
            self._attach(entry, facts, now)
        previous, evicted = self.pending.put(id_key(scope, msg["id"]), entry)
        records = [] if previous is None else [self._displaced(previous, ID_COLLISION)]
        return [r for r in records + [self._displaced(p, EVICTED) for p in evicted] if r is not None]

    def _attach(self, entry: Pending, facts: RequestFacts, now: int) -> None:
        """Give a request its facts, and the operation it continues."""
        entry.facts = facts
        if facts.mismatch:
            entry.flags = frozenset({"header-mismatch"})
        if facts.protocol is not None:
            self._protocols[entry.scope] = facts.protocol
        op, flags = self.operations.resume(facts, entry.method, now)
        if flags:
            entry.flags = entry.flags | flags
        if op is not None:
            entry.op = op
            op.join(entry)

    def _client_notification(self, msg: dict[str, Any], scope: str, now: int) -> list[CallRecord]:
        params = msg.get("params")
        if msg.get("method") != "notifications/cancelled" or not isinstance(params, dict):
            return []
        request = params.get("requestId")
        if not isinstance(request, str | int | float) or isinstance(request, bool):
            return []
        key = id_key(scope, request)
        entry = self.pending.get(key)
        if entry is None or entry.method != LISTEN or not entry.acked:
            return []
        self.pending.pop(key)
        return [self._listen_closed(entry, now)]

    def end_scope(self, scope: str, *, now_ms: int | None = None) -> list[CallRecord]:
        """An HTTP exchange ended: journal its unanswered requests as ``unknown`` and forget them (an
        acknowledged ``subscriptions/listen`` ended normally: ``ok``)."""
        now = now_ms if now_ms is not None else clock.now_ms()
        self._protocols.pop(scope, None)
        records = []
        for p in self.pending.drop_scope(scope):
            record = (self._listen_closed(p, now) if p.method == LISTEN and p.acked
                      else self._displaced(p, EXCHANGE_ENDED))
            if record is not None:
                records.append(record)
        return records

    def close(self, *, now_ms: int | None = None) -> list[CallRecord]:
        """Capture is ending: journal every operation still waiting on its client as abandoned, and every
        acknowledged subscription still open as ended.  Other requests without an answer are dropped."""
        now = now_ms if now_ms is not None else clock.now_ms()
        listens = [p for p in self.pending.drain() if p.method == LISTEN and p.acked]
        return [self._abandoned(op) for op in self.operations.drain()] + [
            self._listen_closed(p, now) for p in listens]

    def oversized(self, direction: str, glimpse: Glimpse, *, scope: str = "", overhead_us: int = 0,
                  now_ms: int | None = None) -> CallRecord:
        """A frame over the bound that was forwarded unparsed.

        Returns:
            For an answer whose id its ends show, the request's (or its operation's) record with outcome
            ``unknown``, its latency and ``error.code`` ``capture-answer-oversized``; otherwise an
            unparsed record.
        """
        msg_id = answer_id(glimpse) if direction == "inbound" else None
        pending = None if msg_id is None else self.pending.pop(id_key(scope, msg_id))
        if pending is None:
            return self.unparsed(direction, overhead_us=overhead_us)
        now = now_ms if now_ms is not None else clock.now_ms()
        op = pending.op if pending.op is not None else Operation.first(pending)
        if pending.op is None:
            op.overhead_us = pending.overhead_us
        else:
            op.overhead_us += pending.overhead_us
            self.operations.done(op)
        return self._record(op.method, "unknown", tool=op.tool, args=_args(op.args_json),
                            latency_ms=max(0, now - op.start_ms), error={"code": OVERSIZED_ANSWER},
                            shim_self_us=op.overhead_us + overhead_us, ext=_op_ext(op))

    def on_inbound(self, frame: bytes | str, *, scope: str = "", overhead_us: int = 0,
                   now_ms: int | None = None, msg: dict[str, Any] | None = None) -> CallRecord | None:
        """Server-to-client frame: a matched response, a notification, or an unparsed frame."""
        msg = msg if msg is not None else classify_frame(frame)
        records = self.observe("inbound", msg, scope=scope, overhead_us=overhead_us, now_ms=now_ms)
        return records[0] if records else None

    def _inbound(self, msg: dict[str, Any], scope: str, overhead_us: int, now: int) -> list[CallRecord]:
        if "method" in msg:
            if "id" in msg:
                return []  # a server-to-client request: not recorded, pending untouched
            if msg["method"] == _ACKNOWLEDGED:
                self._acknowledge(msg, scope)
            protocol = self._protocols.get(scope)
            return [self._record(msg["method"], "notification", shim_self_us=0,
                                 ext=None if protocol is None else {"protocol": protocol})]
        pending = self.pending.pop(id_key(scope, msg["id"]))
        if pending is None:
            return []
        if pending.collided:  # the answer may be the other request's: record the call, not the answer
            record = self._displaced(pending, ID_COLLISION, overhead_us)
            return [] if record is None else [record]
        return self._complete(msg, pending, now, pending.overhead_us + overhead_us)

    def _acknowledge(self, msg: dict[str, Any], scope: str) -> None:
        meta = msg.get("params", {}).get("_meta") if isinstance(msg.get("params"), dict) else None
        sub = meta.get(SUBSCRIPTION_META) if isinstance(meta, dict) else None
        if isinstance(sub, str | int | float) and not isinstance(sub, bool):
            entry = self.pending.get(id_key(scope, sub))
            if entry is not None and entry.method == LISTEN:
                entry.acked = True

    def _complete(self, msg: dict[str, Any], p: Pending, now: int, overhead: int) -> list[CallRecord]:
        """The one place a completed response is classified: learn from a listing, then record the call,
        or advance the operation it belongs to."""
        result = msg.get("result")
        if p.method == "tools/list" and isinstance(result, dict):
            self.enums.learn_listing(result)
        op = p.op
        answer = classify_answer(msg, p.method, self._salt, self.keyer,
                                 task_view=op is not None and op.task is not None)
        if op is None and answer.result_type not in ("input_required", "task"):
            ext = _common(p.facts, p.flags)
            if answer.result_type != "complete":
                ext["result_type"] = answer.result_type
            record = self._record(p.method, answer.outcome, tool=p.tool, args=p.args, error=answer.error,
                                  latency_ms=max(0, now - p.sent_ms), shim_self_us=overhead, ext=ext)
            if p.method == "tools/list" and self.catalog is not None:
                self.catalog.page(p.cursor, record.seq, msg)
            return [record]
        if op is None:
            op = Operation.first(p)
        op.overhead_us += overhead
        return self._advance(op, p, answer, now)

    def _advance(self, op: Operation, p: Pending, answer: Answer, now: int) -> list[CallRecord]:
        if op.task is not None and p.method in TASK_METHODS:  # a poll of a task this capture saw created
            if answer.status is not None:
                op.status = answer.status
            if answer.terminal or (answer.outcome == "error" and answer.status is None):
                return [self._finish(op, answer, now)]
            if answer.status == "input_required" and op.asked_ms is None:
                op.asked_ms = now
            return [self._abandoned(o) for o in self.operations.wait(op, now)]
        op.result_type = answer.result_type
        if answer.result_type == "input_required":
            op.state = answer.state
            return [self._abandoned(o) for o in self.operations.wait(op, now)]
        if answer.result_type == "task" and answer.task is not None:
            op.task, op.status = answer.task, answer.status
            return [self._abandoned(o) for o in self.operations.wait(op, now)]
        return [self._finish(op, answer, now)]

    def _finish(self, op: Operation, answer: Answer, now: int) -> CallRecord:
        self.operations.done(op)
        return self._record(op.method, answer.outcome, tool=op.tool, args=_args(op.args_json),
                            latency_ms=max(0, now - op.start_ms), error=answer.error,
                            shim_self_us=op.overhead_us, ext=_op_ext(op))

    def _abandoned(self, op: Operation) -> CallRecord:
        return self._record(op.method, "unknown", tool=op.tool, args=_args(op.args_json),
                            latency_ms=max(0, op.last_ms - op.start_ms), error={"code": ABANDONED},
                            shim_self_us=op.overhead_us, ext=_op_ext(op))

    def _listen_closed(self, p: Pending, now: int) -> CallRecord:
        return self._record(p.method, "ok", latency_ms=max(0, now - p.sent_ms), shim_self_us=p.overhead_us,
                            ext=_common(p.facts, p.flags))

    def _displaced(self, p: Pending, code: str, overhead_us: int = 0) -> CallRecord | None:
        op = p.op
        if op is not None and op.task is not None and p.method in TASK_METHODS:
            return None  # a lost poll: the task's operation waits on
        if op is not None:  # a round of a multi round-trip request: the operation ends with it
            op.overhead_us += p.overhead_us + overhead_us
            self.operations.done(op)
            return self._record(op.method, "unknown", tool=op.tool, args=_args(op.args_json),
                                error={"code": code}, shim_self_us=op.overhead_us, ext=_op_ext(op))
        return self._record(p.method, "unknown", tool=p.tool, args=p.args, error={"code": code},
                            shim_self_us=p.overhead_us + overhead_us,
                            ext=_common(p.facts, p.flags))


def _args(args_json: str | None) -> Any:
    return None if args_json is None else json.loads(args_json)
