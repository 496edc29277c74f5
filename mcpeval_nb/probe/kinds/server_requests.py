"""Kinds that serve server-to-client requests during a call: sampling, elicitation (SPEC 8.3).

The call runs on a fresh connection that declares the client capability.  Matching requests are
validated and answered (a stub sample; the manifest's ``respond`` action), bounded by ``max_requests``;
any other server request is declined with -32601.  Nothing a server sends is kept or printed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import TransportError
from ...transport.budget import BUDGET_EXCEEDED
from ...transport.messages import Response, RpcError, decline
from ..cases import CaseResult
from .base import CaseContext, failed, passed

__all__ = ["elicitation", "sampling"]

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

    session = ctx.run.connect(capabilities={spec.capability: {}})
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


def _valid_sampling(params: Any) -> bool:
    if not isinstance(params, dict):
        return False
    messages, max_tokens = params.get("messages"), params.get("maxTokens")
    return (isinstance(messages, list) and bool(messages)
            and all(isinstance(m, dict) and m.get("role") in ("user", "assistant")
                    and isinstance(m.get("content"), dict | list) for m in messages)
            and isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0)


def _valid_elicitation(params: Any) -> bool:
    if not isinstance(params, dict) or not isinstance(params.get("message"), str):
        return False
    schema = params.get("requestedSchema")
    return (isinstance(schema, dict) and schema.get("type") == "object"
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
                               lambda _params: dict(STUB_SAMPLE), "sampling"))


def elicitation(ctx: CaseContext) -> CaseResult:
    """A call under the client ``elicitation`` capability; ``elicitation/create`` gets ``respond``."""
    action = ctx.fields["respond"]

    def reply(params: Any) -> Any:
        if action != "accept":
            return {"action": action}
        props = params["requestedSchema"].get("properties", {})
        return {"action": "accept", "content": {name: _fill(s) for name, s in props.items()}}

    return _observe(ctx, _Spec("elicitation/create", "elicitation", _valid_elicitation, reply, "elicitation"))
