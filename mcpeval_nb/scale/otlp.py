"""OTLP export: each call record becomes one span, sent over OTLP/HTTP to the collector a user runs.

A span carries only what the journal holds, under the OpenTelemetry MCP and GenAI semantic-convention
names where they exist: ``mcp.method.name``, ``gen_ai.tool.name``, ``gen_ai.operation.name``
(``execute_tool`` for ``tools/call``), ``mcp.session.id`` (the stored opaque session token),
``error.type`` (the error template id, else the error code), ``gen_ai.tool.call.arguments`` (the shaped
arguments, as the journal stores them), and ``mcpeval.server``, ``mcpeval.outcome``, ``mcpeval.seq``,
``mcpeval.kind``.  It starts at ``ts`` and lasts ``latency_ms``; its status is OK for ``ok``, ERROR
(with no description) for ``error``, unset otherwise.  A session is one trace: the trace id is derived
from the session token and the span id from the session, sequence number and position, so a re-export
sends the same ids.  Records without a timestamp are skipped (counted).  The endpoint follows the probe
policy: loopback, or HTTPS with ``allow_remote_http``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.compute as pc

from .._version import __version__
from ..clock import day_start, parse_day
from ..errors import TransportError
from ..journal.audit import audited
from ..root import Root, RootLike
from ..tables.store import open_store
from ..transport.policy import check_endpoint
from .extras import require

__all__ = ["OTLPExport", "export_otlp", "span_attributes"]

_BATCH = 512
_COLUMNS = ("ts", "session", "seq", "server", "method", "tool", "args", "latency_ms", "outcome", "kind",
            "error_code", "error_template_id")


@dataclass(frozen=True)
class OTLPExport:
    """What ``export_otlp`` sent: ``spans`` exported, ``skipped`` records (no timestamp), ``endpoint``."""

    spans: int
    skipped: int
    endpoint: str


def span_attributes(row: dict[str, Any]) -> dict[str, Any]:
    """The attributes of one call row's span (only the journal's values; absent values are left out)."""
    attrs: dict[str, Any] = {"mcp.method.name": row["method"], "mcp.session.id": row["session"],
                             "mcpeval.server": row["server"], "mcpeval.outcome": row["outcome"],
                             "mcpeval.seq": int(row["seq"]), "mcpeval.kind": row["kind"]}
    if row.get("tool") is not None:
        attrs["gen_ai.tool.name"] = row["tool"]
    if row["method"] == "tools/call":
        attrs["gen_ai.operation.name"] = "execute_tool"
    error = row.get("error_template_id") or row.get("error_code")
    if error is not None:
        attrs["error.type"] = error
    if row.get("args") is not None:
        attrs["gen_ai.tool.call.arguments"] = row["args"]
    return attrs


def _traces_url(endpoint: str, *, allow_remote_http: bool) -> str:
    checked = check_endpoint(endpoint, allow_remote_http=allow_remote_http)
    return checked.url if checked.path not in ("", "/") else f"{checked.scheme}://{checked.authority}/v1/traces"


def _rows(root: RootLike, since: dt.date | None, errors: str) -> Iterator[dict[str, Any]]:
    store = open_store(root, errors=errors)
    for batch in store.iter_batches("calls"):
        table = pa.Table.from_batches([batch]).select(list(_COLUMNS))
        if since is not None:
            start = pa.scalar(day_start(since), table.schema.field("ts").type)
            table = table.filter(pc.fill_null(pc.greater_equal(table.column("ts"), start), True))
        yield from table.to_pylist()


def _ids(row: dict[str, Any], position: int) -> tuple[int, int]:
    session = row["session"].encode()
    trace = int.from_bytes(hashlib.sha256(b"mcpeval-nb trace\0" + session).digest()[:16], "big")
    key = f"{row['session']}\0{row['seq']}\0{position}".encode()
    span = int.from_bytes(hashlib.sha256(b"mcpeval-nb span\0" + key).digest()[:8], "big")
    return trace or 1, span or 1


class _Spans:
    def __init__(self) -> None:
        sdk = require("opentelemetry.sdk.trace", extra="otel", what="OTLP export")
        self.trace_api = require("opentelemetry.trace", extra="otel", what="OTLP export")
        resources = require("opentelemetry.sdk.resources", extra="otel", what="OTLP export")
        scope = require("opentelemetry.sdk.util.instrumentation", extra="otel", what="OTLP export")
        self.sdk = sdk
        self.resource = resources.Resource({"service.name": "mcpeval-nb"})
        self.scope = scope.InstrumentationScope("mcpeval-nb", __version__)

    def span(self, row: dict[str, Any], position: int) -> Any:
        t = self.trace_api
        trace_id, span_id = _ids(row, position)
        flags = t.TraceFlags(t.TraceFlags.SAMPLED)
        context = t.SpanContext(trace_id, span_id, is_remote=False, trace_flags=flags)
        start = int(row["ts"].timestamp() * 1000) * 1_000_000
        end = start + int(row["latency_ms"] or 0) * 1_000_000
        status = {"ok": t.StatusCode.OK, "error": t.StatusCode.ERROR}.get(row["outcome"], t.StatusCode.UNSET)
        name = row["method"] if row.get("tool") is None else f"{row['method']} {row['tool']}"
        return self.sdk.ReadableSpan(name=name, context=context, parent=None, resource=self.resource,
                                     attributes=span_attributes(row), kind=t.SpanKind.CLIENT,
                                     status=t.Status(status), start_time=start, end_time=end,
                                     instrumentation_scope=self.scope)


def export_otlp(root: RootLike = None, *, endpoint: str, since: dt.date | str | None = None,
                allow_remote_http: bool = False, timeout: float = 10.0, errors: str = "report") -> OTLPExport:
    """Send every call record of a capture root as one span to an OTLP/HTTP trace endpoint.

    Args:
        root: the capture root (default ``$MCPEVAL_HOME``).
        endpoint: the collector's OTLP/HTTP URL (a bare ``http://host:port`` gets ``/v1/traces``).
        since: only calls on or after this UTC day (a date or ``YYYY-MM-DD``).
        allow_remote_http: permit a non-loopback HTTPS endpoint (as ``--allow-remote-http``).
        timeout: seconds per export request.
        errors: ``report`` (the default: skip a line that is not a usable record) or ``raise``.

    Returns:
        The spans sent and the records skipped.

    Raises:
        UsageError: a bad endpoint (the policy of ``check_endpoint``) or ``since``.
        MissingExtra: OpenTelemetry is not installed (extra ``otel``).
        TransportError: the collector refused or could not be reached.
    """
    base = Root.of(root).path
    with audited(base, "export-otlp", endpoint=_endpoint_label(endpoint)) as entry:
        result = _export(base, endpoint=endpoint, since=since, allow_remote_http=allow_remote_http,
                         timeout=timeout, errors=errors)
        entry.counts.update(spans=result.spans, skipped=result.skipped)
    return result


def _endpoint_label(endpoint: str) -> str:
    """The endpoint's host and port for the audit log (never its path, query or user information)."""
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname or ""
        return f"[{host}]:{parts.port}" if ":" in host and parts.port else \
            (f"{host}:{parts.port}" if parts.port else host)
    except ValueError:
        return "invalid"


def _export(root: Path, *, endpoint: str, since: dt.date | str | None, allow_remote_http: bool,
            timeout: float, errors: str) -> OTLPExport:
    url = _traces_url(endpoint, allow_remote_http=allow_remote_http)
    since = parse_day(since, what="since")
    spans = _Spans()
    exporter_mod = require("opentelemetry.exporter.otlp.proto.http.trace_exporter", extra="otel",
                           what="OTLP export")
    exporter = exporter_mod.OTLPSpanExporter(endpoint=url, timeout=timeout)
    sent = skipped = 0
    batch: list[Any] = []
    try:
        for position, row in enumerate(_rows(root, since, errors)):
            if row["ts"] is None:
                skipped += 1
                continue
            batch.append(spans.span(row, position))
            if len(batch) >= _BATCH:
                sent += _send(exporter, batch)
                batch = []
        if batch:
            sent += _send(exporter, batch)
    finally:
        exporter.shutdown()
    return OTLPExport(spans=sent, skipped=skipped, endpoint=url)


def _send(exporter: Any, batch: list[Any]) -> int:
    result = exporter.export(batch)
    if getattr(result, "name", "") != "SUCCESS":
        raise TransportError("the OTLP endpoint did not accept the spans (unreachable or refused)")
    return len(batch)
