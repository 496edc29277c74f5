"""``mcpeval-nb export-otlp``: the call records as spans to an OTLP/HTTP collector."""

from __future__ import annotations

import click

import mcpeval_nb

from . import options as opt


@click.command("export-otlp", epilog=opt.example("mcpeval-nb export-otlp --endpoint http://127.0.0.1:4318",
                                                 "mcpeval-nb export-otlp --endpoint http://127.0.0.1:6006 "
                                                 "--since 2026-08-01"))
@opt.root
@click.option("--endpoint", required=True,
              help="OTLP/HTTP trace endpoint (a bare http://host:port gets /v1/traces).")
@click.option("--since", default=None, metavar="DAY",
              help="Only calls on or after this UTC day (YYYY-MM-DD).")
@click.option("--metrics-endpoint", default=None, metavar="URL",
              help="Also send the mcp.client.operation.duration histogram to this OTLP/HTTP metrics endpoint "
                   "(a bare http://host:port gets /v1/metrics).")
@opt.allow_remote_http
def export_otlp_cmd(root: str | None, endpoint: str, since: str | None, metrics_endpoint: str | None,
                    allow_remote_http: bool) -> int:
    """Send every call record as one OpenTelemetry span (MCP/GenAI semantic conventions)."""
    result = mcpeval_nb.export_otlp(root, endpoint=endpoint, since=since, allow_remote_http=allow_remote_http,
                                    metrics_endpoint=metrics_endpoint)
    click.echo(f"exported {result.spans} span(s) to {result.endpoint}"
               + (f"; skipped {result.skipped} record(s) without a timestamp" if result.skipped else ""))
    if result.metrics_endpoint is not None:
        click.echo(f"exported {result.measurements} duration measurement(s) to {result.metrics_endpoint}")
    return 0


COMMANDS = (export_otlp_cmd,)
