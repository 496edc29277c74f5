"""A call row under OpenTelemetry's MCP and GenAI semantic conventions (``docs/gen-ai/mcp.md``).

The one mapping from a ``CALLS_SCHEMA`` row to what the conventions name, used by the span and the metric
export (``otlp``): span name ``{mcp.method.name} {target}`` (the tool or prompt name; the method alone
otherwise), span kind (``CLIENT`` for a call the client made, ``SERVER`` for a notification the server
sent, ``INTERNAL`` for a frame that was not JSON-RPC), and the attributes.  Only the journal's values are
used: ``gen_ai.tool.call.arguments`` carries the *shaped* arguments (the convention's opt-in content is
never available), the span status has no description (error messages are not stored), and
``mcp.resource.uri`` is never set (resource URIs are not stored).
"""

from __future__ import annotations

from typing import Any

from ..privacy.errorinfo import code_value
from ..privacy.grammar import valid_identifier

__all__ = [
    "DURATION_BUCKETS",
    "DURATION_METRIC",
    "error_type",
    "metric_attributes",
    "span_attributes",
    "span_kind",
    "span_name",
    "status_code",
]

#: ``mcp.client.operation.duration``: a histogram in seconds with the convention's bucket boundaries.
DURATION_METRIC = "mcp.client.operation.duration"
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


def _code(row: dict[str, Any]) -> Any:
    text = row.get("error_code")
    return None if text is None else code_value(text)


def error_type(row: dict[str, Any]) -> str | None:
    """``error.type``: the JSON-RPC error code as text, ``tool_error`` for a tool's ``isError`` result, a
    capture reason code (``capture-operation-abandoned``, ...) as it is, ``_OTHER`` for any other code;
    None when the record has no error."""
    if not row.get("has_error"):
        return None
    code = _code(row)
    if code == "tool-error":
        return "tool_error"
    if isinstance(code, int) and not isinstance(code, bool):
        return str(code)
    return code if isinstance(code, str) and valid_identifier(code) else "_OTHER"


def status_code(row: dict[str, Any]) -> str | None:
    """``rpc.response.status_code``: the JSON-RPC error code of the response as text, or None."""
    code = _code(row) if row.get("has_error") else None
    return str(code) if isinstance(code, int) and not isinstance(code, bool) else None


def _target(row: dict[str, Any]) -> str | None:
    return row.get("tool") if row["method"] == "tools/call" else row.get("prompt")


def span_name(row: dict[str, Any]) -> str:
    """``{mcp.method.name} {target}``, the target being the tool or prompt name when there is one."""
    target = _target(row)
    return row["method"] if target is None else f"{row['method']} {target}"


def span_kind(row: dict[str, Any]) -> str:
    """``CLIENT``, ``SERVER`` (a server's notification: the peer initiated it) or ``INTERNAL``."""
    method = row["method"]
    if method.startswith("unparsed/"):
        return "INTERNAL"
    return "SERVER" if method.startswith("notifications/") and row.get("latency_ms") is None else "CLIENT"


def _common(row: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {"mcp.method.name": row["method"]}
    optional = {"error.type": error_type(row), "rpc.response.status_code": status_code(row),
                "mcp.protocol.version": row.get("protocol"), "network.transport": row.get("transport")}
    if row["method"] == "tools/call":
        optional["gen_ai.tool.name"] = row.get("tool")
        optional["gen_ai.operation.name"] = "execute_tool"
    elif row["method"] == "prompts/get":
        optional["gen_ai.prompt.name"] = row.get("prompt")
    if row.get("transport") == "tcp":
        optional["network.protocol.name"] = "http"
    attrs.update({k: v for k, v in optional.items() if v is not None})
    return attrs


def metric_attributes(row: dict[str, Any]) -> dict[str, Any]:
    """The attributes of the row's ``mcp.client.operation.duration`` measurement (low cardinality)."""
    return _common(row)


def span_attributes(row: dict[str, Any]) -> dict[str, Any]:
    """The attributes of one call row's span (only the journal's values; absent values are left out)."""
    attrs = _common(row)
    attrs["mcp.session.id"] = row["session"]
    extra = {"jsonrpc.request.id": row.get("request_id"), "server.address": row.get("server_address"),
             "server.port": None if row.get("server_port") is None else int(row["server_port"]),
             "gen_ai.tool.call.arguments": row.get("args"),
             "mcpeval.error.template_id": row.get("error_template_id"),
             "mcpeval.server": row["server"], "mcpeval.outcome": row["outcome"],
             "mcpeval.seq": int(row["seq"]),
             "mcpeval.kind": row["kind"], "mcpeval.result_type": row.get("result_type"),
             "mcpeval.task.status": row.get("task_status"), "mcpeval.flags": row.get("flags")}
    waited = row.get("wait_ms") is not None
    for key in ("rounds", "wait_ms", "polls", "server_ms"):
        if row.get(key) is not None and (key != "server_ms" or waited):
            extra[f"mcpeval.{key}"] = int(row[key])
    attrs.update({k: v for k, v in extra.items() if v is not None})
    return attrs
