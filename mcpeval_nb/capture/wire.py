"""What capture reads from a frame beyond SPEC 2.6's fields: content-free facts of the 2026-07-28 revision.

A request gives its per-request protocol version (``params._meta``), its W3C trace context
(``params._meta.traceparent``, else the HTTP header), whether it retries a multi round-trip request
(``inputResponses``/``requestState``), the task it polls (``tasks/*``), and, over HTTP, whether its
``Mcp-Method``/``Mcp-Name`` headers disagree with the body.  An answer gives its ``resultType``, the
``requestState`` and task it hands the client, and a task's status.  Opaque values (``requestState``, task
ids, the arguments of a call being retried) are never kept: only a keyed digest (``Keyer``: HMAC-SHA-256
under a key drawn per process and never written) links the rounds of one operation in memory.  The
``tracestate`` and ``baggage`` values are not read at all.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

from ..privacy.errorinfo import error_info, tool_error_info
from ..privacy.ext import TASK_CANCELLED, TASK_STATUSES, valid_protocol
from ..privacy.grammar import valid_tool

__all__ = [
    "MRTR_METHODS",
    "NO_FACTS",
    "TASK_METHODS",
    "Answer",
    "HttpFacts",
    "Keyer",
    "RequestFacts",
    "classify_answer",
    "decode_header_value",
    "request_facts",
    "request_id",
    "result_type",
    "traceparent",
]

PROTOCOL_META = "io.modelcontextprotocol/protocolVersion"
SUBSCRIPTION_META = "io.modelcontextprotocol/subscriptionId"
#: Methods whose result may be ``input_required`` (SEP-2322), and the param naming their target.
MRTR_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
#: The Tasks extension's lifecycle methods (SEP-2663).
TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
TERMINAL = ("completed", "failed", "cancelled")

_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_B64 = re.compile(r"=\?base64\?([A-Za-z0-9+/=]*)\?=")


class Keyer:
    """Keyed digests under a random per-process key (never written): equal inputs link, nothing leaks."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def digest(self, value: Any) -> bytes:
        """16 bytes of HMAC-SHA-256 over ``value`` (a string as it is, anything else as sorted JSON)."""
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
        return hmac.new(self._key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()[:16]


@dataclass(frozen=True, slots=True)
class HttpFacts:
    """What shim-http saw in a request's headers (memory only): ``Mcp-Method``, ``Mcp-Name`` (decoded)
    and ``traceparent``."""

    method: str | None = None
    name: str | None = None
    traceparent: str | None = None


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """Content-free facts of one request.

    Attributes:
        protocol: the per-request protocol version (grammar-checked), or None (legacy, or none sent).
        trace: ``(trace_id, parent_span_id)`` from a valid ``traceparent``, or None.
        retry: it carries ``inputResponses`` or ``requestState`` (a multi round-trip retry).
        state: digest of its ``requestState``, or None.
        fingerprint: digest of its method, target and arguments (multi round-trip methods), or None.
        task: digest of ``params.taskId`` (``tasks/*``), or None.
        mismatch: its ``Mcp-Method``/``Mcp-Name`` header disagreed with the body.
    """

    protocol: str | None = None
    trace: tuple[str, str] | None = None
    retry: bool = False
    state: bytes | None = None
    fingerprint: bytes | None = None
    task: bytes | None = None
    mismatch: bool = False
    request_id: str | None = None
    prompt: str | None = None


NO_FACTS = RequestFacts()
_ID_RE = re.compile(r"[A-Za-z0-9_.:\-]{1,64}")


def request_id(value: Any) -> str | None:
    """A JSON-RPC id as a bounded identifier: an integer's decimal text, or a string of at most 64 bytes
    of ``[A-Za-z0-9_.:-]``; None for anything else (a float, a longer or freer string)."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**64:
        return str(value)
    return value if isinstance(value, str) and _ID_RE.fullmatch(value) else None


def traceparent(value: Any) -> tuple[str, str] | None:
    """``(trace_id, parent_id)`` of a W3C ``traceparent``, or None when it is not a valid one.

    Version ``ff``, an all-zero trace or parent id, and (for version ``00``) anything after the flags
    are invalid; a later version may carry more fields after the flags.
    """
    if not isinstance(value, str) or len(value) > 512:
        return None
    m = _TRACEPARENT.fullmatch(value.strip())
    if m is None or m.group(1) == "ff" or (m.group(1) == "00" and m.group(5)):
        return None
    trace, parent = m.group(2), m.group(3)
    if trace == "0" * 32 or parent == "0" * 16:
        return None
    return trace, parent


def decode_header_value(value: str | None) -> str | None:
    """A header value with the ``=?base64?...?=`` sentinel decoded (None if it does not decode)."""
    if value is None:
        return None
    m = _B64.fullmatch(value)
    if m is None:
        return value
    try:
        return base64.b64decode(m.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _meta(params: Any) -> dict[str, Any]:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def _mismatch(msg: dict[str, Any], params: Any, http: HttpFacts) -> bool:
    if http.method is not None and http.method != msg["method"]:
        return True
    target = MRTR_METHODS.get(msg["method"])
    if http.name is None or target is None or not isinstance(params, dict):
        return False
    return http.name != params.get(target)


def request_facts(msg: dict[str, Any], keyer: Keyer, http: HttpFacts | None = None) -> RequestFacts:
    """The facts of a valid request (``classify_frame``'s output with a method and an id).

    Args:
        msg: the parsed request.
        keyer: the correlator's digest key.
        http: shim-http's header facts, or None (stdio).
    """
    params = msg.get("params")
    meta = _meta(params)
    version = meta.get(PROTOCOL_META)
    protocol = None if version is None else (version if valid_protocol(version) else "invalid")
    trace = traceparent(meta.get("traceparent"))
    if trace is None and http is not None:
        trace = traceparent(http.traceparent)
    method = msg["method"]
    retry, state, fingerprint, task = False, None, None, None
    if isinstance(params, dict):
        if method in MRTR_METHODS:
            retry = "inputResponses" in params or "requestState" in params
            state = keyer.digest(params["requestState"]) if "requestState" in params else None
            if protocol is not None or retry:  # only the 2026-07-28 revision has multi round-trip requests
                target = params.get(MRTR_METHODS[method])
                fingerprint = keyer.digest([method, target, params.get("arguments")])
        elif method in TASK_METHODS and "taskId" in params:
            task = keyer.digest(params["taskId"])
    mismatch = http is not None and _mismatch(msg, params, http)
    if not (protocol or trace or retry or fingerprint or task or mismatch):
        return NO_FACTS
    name = params.get("name") if isinstance(params, dict) and method == "prompts/get" else None
    return RequestFacts(protocol, trace, retry, state, fingerprint, task, mismatch, request_id(msg.get("id")),
                        name if valid_tool(name) else None)


@dataclass(frozen=True, slots=True)
class Answer:
    """How one answer is classified (SPEC 2.6, plus ``resultType`` and the Tasks extension).

    Attributes:
        outcome: ``ok``, ``error`` or ``unknown``.
        error: the storable ErrorInfo, or None.
        result_type: ``complete`` (also when absent), ``input_required``, ``task`` or ``other``.
        state: digest of the ``requestState`` handed to the client, or None.
        task: digest of the task id a task handle or task view names, or None.
        status: a task's status (a handle, ``tasks/get`` or ``tasks/cancel``), or None.
    """

    outcome: str
    error: dict[str, Any] | None = None
    result_type: str = "complete"
    state: bytes | None = None
    task: bytes | None = None
    status: str | None = None

    @property
    def terminal(self) -> bool:
        """A task view with a terminal status."""
        return self.status in TERMINAL


def result_type(result: Any) -> str:
    """The ``resultType`` of a result: absent is ``complete``; an unknown value is ``other``."""
    value = result.get("resultType", "complete") if isinstance(result, dict) else "complete"
    return value if value in ("complete", "input_required", "task") else "other"


def _tool_result(result: Any, salt: bytes) -> tuple[str, dict[str, Any] | None]:
    if isinstance(result, dict) and "isError" in result:
        if result["isError"] is True:
            return "error", tool_error_info(result, salt)
        if not isinstance(result["isError"], bool):
            return "unknown", None
    return "ok", None


def _task_view(result: dict[str, Any], salt: bytes, keyer: Keyer) -> Answer:
    status = result.get("status")
    status = status if status in TASK_STATUSES else None
    task = keyer.digest(result["taskId"]) if "taskId" in result else None
    if status == "completed":
        outcome, error = _tool_result(result.get("result"), salt)
        return Answer(outcome, error, "task", None, task, status)
    if status == "failed":
        inner = result.get("error")
        error = error_info({"error": inner}, salt) if isinstance(inner, dict) else None
        return Answer("error", error, "task", None, task, status)
    if status == "cancelled":
        return Answer("unknown", {"code": TASK_CANCELLED}, "task", None, task, status)
    return Answer("unknown", None, "task", None, task, status)


def classify_answer(msg: dict[str, Any], method: str, salt: bytes, keyer: Keyer, *,
                    task_view: bool = False) -> Answer:
    """Classify a response to a request of ``method`` (the one place an answer's outcome is decided).

    Args:
        msg: the parsed response (``result`` or ``error``).
        method: the request's method.
        salt: the capture root's salt (error template ids).
        keyer: the correlator's digest key.
        task_view: the request polled a task this capture saw created (``tasks/get``, ``tasks/cancel``):
            its result is a task's status, classified by that status.
    """
    if "error" in msg:
        return Answer("error", error_info(msg, salt))
    result = msg.get("result")
    kind = result_type(result)
    if not isinstance(result, dict):
        return Answer("ok")
    if task_view and "status" in result:
        return _task_view(result, salt, keyer)
    if kind == "input_required":
        state = keyer.digest(result["requestState"]) if "requestState" in result else None
        return Answer("unknown", None, kind, state)
    if kind == "task":
        view = _task_view(result, salt, keyer)
        return Answer("unknown", None, kind, None, view.task, view.status)
    if kind == "other":
        return Answer("unknown", None, kind)
    if method == "tools/call":
        outcome, error = _tool_result(result, salt)
        return Answer(outcome, error)
    return Answer("ok")
