"""Feature kinds: output-schema, resource-subscription, completion (SPEC 8.3)."""

from __future__ import annotations

import time
from typing import Any

from ...errors import TransportError
from ...transport.budget import BUDGET_EXCEEDED
from ..cases import CaseResult
from .base import CaseContext, failed, passed

__all__ = ["completion", "output_conforms", "output_schema", "resource_subscription"]


def output_conforms(schema: Any, instance: Any) -> bool:
    """Validate ``instance`` against a declared output schema: local ``$ref`` only, never a fetch.

    Returns:
        True when it conforms; False when it does not, or the schema itself is unusable.
    """
    if not isinstance(schema, dict):
        return False
    import jsonschema  # loaded when a case first needs it: its import costs seconds (format grammars)
    import referencing
    import referencing.exceptions

    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        # an empty registry whose default retrieve refuses every URI: local refs only, never a fetch
        validator = cls(schema, registry=referencing.Registry())
        return next(iter(validator.iter_errors(instance)), None) is None
    except (jsonschema.SchemaError, referencing.exceptions.Unresolvable, RecursionError, ValueError):
        return False


def output_schema(ctx: CaseContext) -> CaseResult:
    """One call whose structuredContent must exist, hold the required fields and conform."""
    f = ctx.fields
    schema = (ctx.entry(f["tool"]) or {}).get("outputSchema")
    if schema is None:
        return passed(ctx.case, 0)
    outcome = ctx.call(f["tool"], f["arguments"])
    result = outcome.result if outcome.ok and isinstance(outcome.result, dict) else {}
    content = result.get("structuredContent")
    if content is None:
        return failed(ctx.case, "output-schema-declared-but-missing", 1, 1)
    required = schema.get("required") if isinstance(schema, dict) else None
    if isinstance(required, list) and (not isinstance(content, dict)
                                       or any(isinstance(r, str) and r not in content for r in required)):
        return failed(ctx.case, "output-schema-field-missing", 1, 1)
    if not output_conforms(schema, content):
        return failed(ctx.case, "output-schema-invalid-result", 1, 1)
    return passed(ctx.case, 1)


def _updated_for(uri: str) -> Any:
    def match(note: dict[str, Any]) -> bool:
        params = note.get("params")
        return (note.get("method") == "notifications/resources/updated" and isinstance(params, dict)
                and params.get("uri") == uri)
    return match


def resource_subscription(ctx: CaseContext) -> CaseResult:
    """Read, subscribe, trigger, await ``notifications/resources/updated``, unsubscribe."""
    f = ctx.fields
    resources = ctx.session.server_capabilities.get("resources")
    if not (isinstance(resources, dict) and resources.get("subscribe") is True):
        return passed(ctx.case, 0)
    uri = f["uri"]
    if ctx.session.request("resources/read", {"uri": uri}).error is not None:
        return failed(ctx.case, "resource-unreadable", 1, 1)
    ctx.run.check_cancel()
    if ctx.session.modern:
        return _listen_for_update(ctx, uri)
    if ctx.session.request("resources/subscribe", {"uri": uri}).error is not None:
        return failed(ctx.case, "subscription-rejected", 2, 2)
    attempts = 2
    if f.get("trigger_tool") is not None:
        ctx.call(f["trigger_tool"], f.get("trigger_arguments", {}))
        attempts += 1
    seen = ctx.session.wait_notification(_updated_for(uri), timeout=float(f["max_wait_seconds"]))
    ctx.session.request("resources/unsubscribe", {"uri": uri})
    if seen is None:
        return failed(ctx.case, "subscription-notification-missing", attempts, attempts)
    return passed(ctx.case, attempts)


def _listen_for_update(ctx: CaseContext, uri: str) -> CaseResult:
    """The 2026-07-28 form: ``subscriptions/listen`` for the URI, trigger, await the tagged update."""
    f = ctx.fields
    wait = float(f["max_wait_seconds"])
    subscription = ctx.session.listen({"resourceSubscriptions": [uri]}, timeout=wait)
    if subscription is None:
        return failed(ctx.case, "subscription-rejected", 2, 2)
    attempts = 2
    try:
        if f.get("trigger_tool") is not None:
            ctx.call(f["trigger_tool"], f.get("trigger_arguments", {}))
            attempts += 1
        match = _updated_for(uri)
        seen = subscription.wait(lambda n: match(n) and subscription.tagged(n),
                                 deadline=time.monotonic() + wait)
    finally:
        subscription.close()
    if seen is None:
        return failed(ctx.case, "subscription-notification-missing", attempts, attempts)
    return passed(ctx.case, attempts)


def _names_argument(error: Any, name: str) -> bool:
    if error.code == -32602:
        return True
    return name in (error.message or "") or name in str(error.data or "")


def completion(ctx: CaseContext) -> CaseResult:
    """One ``completion/complete`` for a prompt or resource argument."""
    f = ctx.fields
    if not isinstance(ctx.session.server_capabilities.get("completions"), dict):
        return passed(ctx.case, 0)
    ref: dict[str, Any] = {"type": f["ref_type"]}
    ref["name" if f["ref_type"] == "ref/prompt" else "uri"] = f["ref_uri"]
    params = {"ref": ref, "argument": {"name": f["argument_name"], "value": f["argument_value"]}}
    ctx.run.check_cancel()
    try:
        response = ctx.session.request("completion/complete", params)
    except TransportError as exc:
        if exc.reason == BUDGET_EXCEEDED:
            raise
        ctx.needs_reconnect = True
        return failed(ctx.case, "completion-stalled-request", 1, 1)
    if response.error is not None:
        reason = ("completion-argument-unknown" if _names_argument(response.error, f["argument_name"])
                  else "completion-invalid-request")
        return failed(ctx.case, reason, 1, 1)
    result = response.result
    body = result.get("completion") if isinstance(result, dict) else None
    values = body.get("values") if isinstance(body, dict) else None
    if not (isinstance(values, list) and all(isinstance(v, str) for v in values)):
        return failed(ctx.case, "completion-invalid-request", 1, 1)
    if len(values) > f["max_values"]:
        return failed(ctx.case, "completion-value-flood", 1, 1)
    return passed(ctx.case, 1)
