"""Kinds that serve server-to-client requests during a call: sampling, elicitation (SPEC 8.3).

The call runs on a fresh connection that declares the client capability (sampling with tools;
elicitation in form and URL mode).  In the 2026-07-28 era the same requests arrive as the input
requests of an ``input_required`` result and are answered the same way (``transport.modern``).
Matching requests are validated and answered (a stub sample; the manifest's ``respond`` action),
bounded by ``max_requests``; any other server request is declined with -32601.  Nothing a server
sends is kept or printed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ...errors import TransportError
from ...transport.budget import BUDGET_EXCEEDED
from ...transport.messages import Response, RpcError, decline
from ..cases import CaseResult
from .base import CaseContext, failed, passed

__all__ = ["elicitation", "sampling"]

_TOOL_CHOICES = ("auto", "required", "none")
STUB_SAMPLE = {"role": "assistant", "content": {"type": "text", "text": "mcpeval stub sample"},
               "model": "mcpeval-stub", "stopReason": "endTurn"}


@dataclass
class _Served:
    count: int = 0
    invalid: bool = False
    flood: bool = False


@dataclass(frozen=True)
class _Spec:
    method: str
    capability: str
    valid: Callable[[Any], bool]
    reply: Callable[[Any], Any]
    prefix: str
    declares: tuple[tuple[str, dict[str, Any]], ...] = ()


def _observe(ctx: CaseContext, spec: _Spec) -> CaseResult:
    f = ctx.fields
    limit = f["max_requests"]
    served = _Served()

    def handler(method: str, params: Any) -> Response:
        if method != spec.method:
            return decline(method, params)
        served.count += 1
        if served.count > limit:
            served.flood = True
            return Response(error=RpcError(-32603, "request bound exceeded"))
        if not spec.valid(params):
            served.invalid = True
            return Response(error=RpcError(-32602, "invalid request"))
        return Response(result=spec.reply(params))

    session = ctx.run.connect(capabilities={spec.capability: dict(spec.declares)})
    try:
        ctx.call(f["tool"], f["arguments"], session=session, on_server_request=handler,
                 max_server_requests=limit + 1)
    except TransportError as exc:
        if exc.reason == BUDGET_EXCEEDED:
            raise
        if served.flood or served.invalid:
            return _verdict(ctx, spec, served)
        return failed(ctx.case, f"{spec.prefix}-stalled-call", 1, 1)
    finally:
        session.close()
    return _verdict(ctx, spec, served)


def _verdict(ctx: CaseContext, spec: _Spec, served: _Served) -> CaseResult:
    if served.flood:
        return failed(ctx.case, f"{spec.prefix}-request-flood", 1, 1)
    if served.invalid:
        return failed(ctx.case, f"{spec.prefix}-invalid-request", 1, 1)
    return passed(ctx.case, 1)


def _valid_tools(params: dict[str, Any]) -> bool:
    """Sampling with tools (2025-11-25): ``tools`` a list of named tools with object input schemas,
    ``toolChoice`` an object whose ``mode`` is auto, required or none; both optional."""
    tools, choice = params.get("tools"), params.get("toolChoice")
    tools_ok = tools is None or (isinstance(tools, list) and all(
        isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("inputSchema"), dict)
        for t in tools))
    choice_ok = choice is None or (isinstance(choice, dict) and choice.get("mode", "auto") in _TOOL_CHOICES)
    return tools_ok and choice_ok


def _valid_sampling(params: Any) -> bool:
    if not isinstance(params, dict):
        return False
    messages, max_tokens = params.get("messages"), params.get("maxTokens")
    return (isinstance(messages, list) and bool(messages)
            and all(isinstance(m, dict) and m.get("role") in ("user", "assistant")
                    and isinstance(m.get("content"), dict | list) for m in messages)
            and isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0
            and _valid_tools(params))


def _valid_url(value: Any) -> bool:
    if not isinstance(value, str) or not value:
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _valid_elicitation(params: Any) -> bool:
    """Form mode (``mode`` absent or ``form``: a message and an object ``requestedSchema``), or URL mode
    (2025-11-25: a message and an http(s) ``url``, no schema; ``elicitationId`` a string when present,
    as 2026-07-28 dropped it)."""
    if not isinstance(params, dict) or not isinstance(params.get("message"), str):
        return False
    mode = params.get("mode", "form")
    if mode == "url":
        elicitation_id = params.get("elicitationId")
        return (_valid_url(params.get("url")) and "requestedSchema" not in params
                and (elicitation_id is None or isinstance(elicitation_id, str)))
    schema = params.get("requestedSchema")
    return (mode == "form" and isinstance(schema, dict) and schema.get("type") == "object"
            and isinstance(schema.get("properties", {}), dict))


def _fill(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return "mcpeval"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("integer", "number"):
        low = schema.get("minimum")
        return low if isinstance(low, int | float) and not isinstance(low, bool) else 1
    if kind == "boolean":
        return False
    return "mcpeval"


def sampling(ctx: CaseContext) -> CaseResult:
    """A call under the client ``sampling`` capability; ``sampling/createMessage`` gets a stub sample."""
    return _observe(ctx, _Spec("sampling/createMessage", "sampling", _valid_sampling,
                               lambda _params: dict(STUB_SAMPLE), "sampling", (("tools", {}),)))


def elicitation(ctx: CaseContext) -> CaseResult:
    """A call under the client ``elicitation`` capability; ``elicitation/create`` gets ``respond``."""
    action = ctx.fields["respond"]

    def reply(params: Any) -> Any:
        if action != "accept" or params.get("mode") == "url":
            return {"action": action}  # a URL-mode answer carries no content
        props = params["requestedSchema"].get("properties", {})
        return {"action": "accept", "content": {name: _fill(s) for name, s in props.items()}}

    return _observe(ctx, _Spec("elicitation/create", "elicitation", _valid_elicitation, reply, "elicitation",
                               (("form", {}), ("url", {}))))
