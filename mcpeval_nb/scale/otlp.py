"""OTLP export: each call record becomes one span (and one duration measurement), sent over OTLP/HTTP.

Spans follow OpenTelemetry's MCP and GenAI semantic conventions (``scale.semconv``: names, kinds,
attributes).  A span starts at ``ts`` and lasts ``latency_ms`` (a multi round-trip or task operation's
whole duration); its status is ERROR when it has an ``error.type``, OK for ``ok``, unset otherwise, never
with a description.  A record that carries the agent's trace context (``trace_id``/``parent_span_id``,
from ``params._meta.traceparent`` or the HTTP header) becomes a child of the agent's span in the agent's
trace; any other record's trace is derived from its session (a session is one trace).  Span ids derive
from the session, sequence number and position, so a re-export sends the same ids.

With ``metrics_endpoint`` the ``mcp.client.operation.duration`` histogram (seconds, the convention's
bucket boundaries) of every record with a latency goes there too, as one cumulative collection.

Records without a timestamp are skipped (counted).  Endpoints follow the probe's policy (loopback, or
HTTPS with ``allow_remote_http``), and only the policy decides where data goes: the exporters' HTTP
sessions ignore ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY`` and ``.netrc``.
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
from .semconv import (
    DURATION_BUCKETS,
    DURATION_METRIC,
    error_type,
    metric_attributes,
    span_attributes,
    span_kind,
    span_name,
)

__all__ = ["OTLPExport", "export_otlp", "span_attributes"]

_BATCH = 512
_COLUMNS = ("ts", "session", "seq", "server", "method", "tool", "args", "latency_ms", "outcome", "kind",
            "has_error", "error_code", "error_template_id", "protocol", "result_type", "rounds", "wait_ms",
            "polls", "task_status", "flags", "request_id", "prompt", "trace_id", "parent_span_id",
            "transport", "server_address", "server_port", "server_ms")
_WHAT = "OTLP export"


@dataclass(frozen=True)
class OTLPExport:
    """What ``export_otlp`` sent: ``spans`` exported, ``skipped`` records (no timestamp), ``endpoint``, and
    with a metrics endpoint the ``measurements`` recorded in the duration histogram and that endpoint."""

    spans: int
    skipped: int
    endpoint: str
    measurements: int = 0
    metrics_endpoint: str | None = None


def _url(endpoint: str, path: str, *, allow_remote_http: bool) -> str:
    checked = check_endpoint(endpoint, allow_remote_http=allow_remote_http)
    return checked.url if checked.path not in ("", "/") else f"{checked.scheme}://{checked.authority}{path}"


def _session() -> Any:
    """An HTTP session for the exporters that no environment variable can redirect (no proxies)."""
    requests = require("requests", extra="otel", what=_WHAT)
    session = requests.Session()
    session.trust_env = False
    return session


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
        self.sdk = require("opentelemetry.sdk.trace", extra="otel", what=_WHAT)
        self.api = require("opentelemetry.trace", extra="otel", what=_WHAT)
        resources = require("opentelemetry.sdk.resources", extra="otel", what=_WHAT)
        scope = require("opentelemetry.sdk.util.instrumentation", extra="otel", what=_WHAT)
        self.resource = resources.Resource({"service.name": "mcpeval-nb"})
        self.scope = scope.InstrumentationScope("mcpeval-nb", __version__)
        self.flags = self.api.TraceFlags(self.api.TraceFlags.SAMPLED)

    def span(self, row: dict[str, Any], position: int) -> Any:
        t = self.api
        trace_id, span_id = _ids(row, position)
        parent = None
        if row.get("trace_id") and row.get("parent_span_id"):  # a child of the agent's span
            trace_id = int(row["trace_id"], 16)
            parent = t.SpanContext(trace_id, int(row["parent_span_id"], 16), is_remote=True,
                                   trace_flags=self.flags)
        context = t.SpanContext(trace_id, span_id, is_remote=False, trace_flags=self.flags)
        start = int(row["ts"].timestamp() * 1000) * 1_000_000
        end = start + int(row["latency_ms"] or 0) * 1_000_000
        code = t.StatusCode.ERROR if error_type(row) is not None else (
            t.StatusCode.OK if row["outcome"] == "ok" else t.StatusCode.UNSET)
        return self.sdk.ReadableSpan(name=span_name(row), context=context, parent=parent,
                                     resource=self.resource, attributes=span_attributes(row),
                                     kind=getattr(t.SpanKind, span_kind(row)), status=t.Status(code),
                                     start_time=start, end_time=end, instrumentation_scope=self.scope)


class _Durations:
    """The ``mcp.client.operation.duration`` histogram, collected in memory and exported once."""

    def __init__(self, url: str, timeout: float) -> None:
        metrics = require("opentelemetry.sdk.metrics", extra="otel", what=_WHAT)
        export = require("opentelemetry.sdk.metrics.export", extra="otel", what=_WHAT)
        view = require("opentelemetry.sdk.metrics.view", extra="otel", what=_WHAT)
        resources = require("opentelemetry.sdk.resources", extra="otel", what=_WHAT)
        exporter_mod = require("opentelemetry.exporter.otlp.proto.http.metric_exporter", extra="otel",
                               what=_WHAT)
        self.exporter = exporter_mod.OTLPMetricExporter(endpoint=url, timeout=timeout, session=_session())
        self.reader = export.InMemoryMetricReader()
        buckets = view.ExplicitBucketHistogramAggregation(boundaries=DURATION_BUCKETS)
        histogram_view = view.View(instrument_name=DURATION_METRIC, aggregation=buckets)
        self.provider = metrics.MeterProvider(metric_readers=[self.reader], views=[histogram_view],
                                              resource=resources.Resource({"service.name": "mcpeval-nb"}))
        meter = self.provider.get_meter("mcpeval-nb", __version__)
        self.histogram = meter.create_histogram(DURATION_METRIC, unit="s", description=(
            "The duration of the MCP request or notification as observed on the sender from the time it was "
            "sent until the response or ack is received."))
        self.recorded = 0

    def record(self, row: dict[str, Any]) -> None:
        if row.get("latency_ms") is not None and span_kind(row) == "CLIENT":
            self.histogram.record(int(row["latency_ms"]) / 1000, metric_attributes(row))
            self.recorded += 1

    def flush(self) -> None:
        try:
            result = self.exporter.export(self.reader.get_metrics_data())
        finally:
            self.exporter.shutdown()
            self.provider.shutdown()
        if getattr(result, "name", "") != "SUCCESS":
            raise TransportError("the OTLP metrics endpoint did not accept the histogram "
                                 "(unreachable or refused)")


def export_otlp(root: RootLike = None, *, endpoint: str, since: dt.date | str | None = None,
                allow_remote_http: bool = False, timeout: float = 10.0, errors: str = "report",
                metrics_endpoint: str | None = None) -> OTLPExport:
    """Send every call record of a capture root as one span to an OTLP/HTTP trace endpoint.

    Args:
        root: the capture root (default ``$MCPEVAL_HOME``).
        endpoint: the collector's OTLP/HTTP URL (a bare ``http://host:port`` gets ``/v1/traces``).
        since: only calls on or after this UTC day (a date or ``YYYY-MM-DD``).
        allow_remote_http: permit a non-loopback HTTPS endpoint (as ``--allow-remote-http``).
        timeout: seconds per export request.
        errors: ``report`` (the default: skip a line that is not a usable record) or ``raise``.
        metrics_endpoint: an OTLP/HTTP metrics URL (a bare ``http://host:port`` gets ``/v1/metrics``) for
            the ``mcp.client.operation.duration`` histogram; None sends spans only.

    Returns:
        The spans sent, the records skipped and the measurements recorded.

    Raises:
        UsageError: a bad endpoint (the policy of ``check_endpoint``) or ``since``.
        MissingExtra: OpenTelemetry is not installed (extra ``otel``).
        TransportError: the collector refused or could not be reached.
    """
    base = Root.of(root).path
    with audited(base, "export-otlp", endpoint=_endpoint_label(endpoint)) as entry:
        result = _export(base, endpoint=endpoint, since=since, allow_remote_http=allow_remote_http,
                         timeout=timeout, errors=errors, metrics_endpoint=metrics_endpoint)
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
            timeout: float, errors: str, metrics_endpoint: str | None) -> OTLPExport:
    url = _url(endpoint, "/v1/traces", allow_remote_http=allow_remote_http)
    metrics_url = None if metrics_endpoint is None else _url(metrics_endpoint, "/v1/metrics",
                                                              allow_remote_http=allow_remote_http)
    since = parse_day(since, what="since")
    spans = _Spans()
    durations = None if metrics_url is None else _Durations(metrics_url, timeout)
    exporter_mod = require("opentelemetry.exporter.otlp.proto.http.trace_exporter", extra="otel", what=_WHAT)
    exporter = exporter_mod.OTLPSpanExporter(endpoint=url, timeout=timeout, session=_session())
    sent = skipped = 0
    batch: list[Any] = []
    try:
        for position, row in enumerate(_rows(root, since, errors)):
            if row["ts"] is None:
                skipped += 1
                continue
            batch.append(spans.span(row, position))
            if durations is not None:
                durations.record(row)
            if len(batch) >= _BATCH:
                sent += _send(exporter, batch)
                batch = []
        if batch:
            sent += _send(exporter, batch)
    finally:
        exporter.shutdown()
    if durations is not None:
        durations.flush()
    measured = 0 if durations is None else durations.recorded
    return OTLPExport(spans=sent, skipped=skipped, endpoint=url, measurements=measured,
                      metrics_endpoint=metrics_url)


def _send(exporter: Any, batch: list[Any]) -> int:
    result = exporter.export(batch)
    if getattr(result, "name", "") != "SUCCESS":
        raise TransportError("the OTLP endpoint did not accept the spans (unreachable or refused)")
    return len(batch)
