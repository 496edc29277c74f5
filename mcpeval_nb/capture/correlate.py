"""Pair requests with responses and turn frames into call records (SPEC 2.4-2.6).

The correlator sees raw frames in memory and emits only sanitisable records: shaped arguments,
ErrorInfo with salted template ids, latencies and outcomes.  It never stores or returns frame text.
One correlator serves one shim process; ``scope`` separates HTTP requests in shim-http.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..jsonfmt import JSONFormatError, format_number, loads
from ..privacy.errorinfo import error_info, tool_error_info
from ..privacy.grammar import opaque_session, valid_method, valid_tool
from ..privacy.records import CallRecord
from ..privacy.shape import EnumIndex, shape
from ..privacy.timestamps import now_ts

__all__ = ["Correlator", "classify_frame", "id_key"]


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


@dataclass
class _Pending:
    method: str
    tool: str | None
    args: Any
    sent_ms: int
    overhead_us: int


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class Correlator:
    """Turns the frames of one capture into call records, strictly in arrival order.

    Args:
        server: the server label (grammar-checked by the caller).
        session: the raw session value (``MCPEVAL_SESSION`` or a uuid); only its opaque token is kept.
        salt: the capture root's salt, for error template ids.
    """

    def __init__(self, *, server: str, session: str, salt: bytes) -> None:
        self.server = server
        self.session = opaque_session(session)
        self._salt = salt
        self.seq = 0
        self.enums = EnumIndex()
        self._pending: dict[str, _Pending] = {}

    def _record(self, method: str, outcome: str, **extra: Any) -> CallRecord:
        self.seq += 1
        return CallRecord(ts=now_ts(), session=self.session, seq=self.seq, server=self.server,
                          method=method, outcome=outcome, kind="real", **extra)

    def unparsed(self, direction: str, *, overhead_us: int = 0) -> CallRecord:
        """A content-free record for a frame that is not a valid JSON-RPC message."""
        return self._record(f"unparsed/{direction}", "unparsed", shim_self_us=overhead_us)

    def on_outbound(self, frame: bytes | str, *, scope: str = "", overhead_us: int = 0,
                    now_ms: int | None = None, msg: dict[str, Any] | None = None) -> CallRecord | None:
        """Client-to-server frame: remember a request, or record an unparsed frame."""
        msg = msg if msg is not None else classify_frame(frame)
        if msg is None:
            return self.unparsed("outbound", overhead_us=overhead_us)
        self.note_request(msg, scope=scope, overhead_us=overhead_us, now_ms=now_ms)
        return None

    def note_request(self, msg: dict[str, Any], *, scope: str = "", overhead_us: int = 0,
                     now_ms: int | None = None) -> None:
        """Store a valid outbound request as pending (notifications and responses are ignored)."""
        if "method" not in msg or "id" not in msg:
            return
        params = msg.get("params")
        tool = None
        if msg["method"] == "tools/call" and isinstance(params, dict) and "name" in params:
            name = params["name"]
            tool = name if valid_tool(name) else "unlisted"
        args = None
        if isinstance(params, dict) and "arguments" in params:
            args = shape(params["arguments"], tool or "", self.enums)
        self._pending[id_key(scope, msg["id"])] = _Pending(
            msg["method"], tool, args, now_ms if now_ms is not None else _now_ms(), overhead_us)

    def on_inbound(self, frame: bytes | str, *, scope: str = "", overhead_us: int = 0,
                   now_ms: int | None = None, msg: dict[str, Any] | None = None) -> CallRecord | None:
        """Server-to-client frame: a matched response, a notification, or an unparsed frame."""
        msg = msg if msg is not None else classify_frame(frame)
        if msg is None:
            return self.unparsed("inbound", overhead_us=overhead_us)
        if "method" in msg:
            if "id" in msg:
                return None  # a server-to-client request: not recorded, pending untouched
            return self._record(msg["method"], "notification", shim_self_us=0)
        pending = self._pending.pop(id_key(scope, msg["id"]), None)
        if pending is None:
            return None
        now = now_ms if now_ms is not None else _now_ms()
        return self._response(msg, pending, max(0, now - pending.sent_ms), pending.overhead_us + overhead_us)

    def _response(self, msg: dict[str, Any], p: _Pending, latency: int, overhead: int) -> CallRecord:
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
        return self._record(p.method, outcome, tool=p.tool, args=p.args, latency_ms=latency,
                            error=error, shim_self_us=overhead)
