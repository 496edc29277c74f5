"""One canary run over the whole public surface (DESIGN: "no marker appears in any table, chart text,
CLI output or exported envelope").

A capture root is built the way users build one: recorded raw JSON-RPC exchanges (``data/demo``) whose
arguments, results, error messages, error data, log notifications, a server banner and a truncated
frame all carry ``CANARY`` strings go through the real correlator and the real journal writer; then a
probe run against a fixture server that answers with ``CANARY`` text adds synthetic records and a trend
point.  Every output of the public surface is then searched for the marker.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import matplotlib.pyplot as plt
import pyarrow.parquet as pq
import pytest

import mcpeval_nb as me
from mcpeval_nb import charts
from mcpeval_nb.capture import Correlator
from mcpeval_nb.cli import main as cli_main
from mcpeval_nb.testing import server_command

MARKER = "CANARY"
EXCHANGES = Path(__file__).resolve().parent.parent / "data" / "demo" / "exchanges.jsonl"


def _replay(root: Path) -> int:
    correlator = Correlator(server="demo", session="CANARY-session-value", salt=me.load_salt(root))
    written = 0
    for line in EXCHANGES.read_text(encoding="utf-8").splitlines():
        exchange = json.loads(line)
        frame = exchange["frame"].encode("utf-8")
        side = correlator.on_outbound if exchange["direction"] == "outbound" else correlator.on_inbound
        record = side(frame, now_ms=exchange["at_ms"])
        if record is not None:
            me.append_record(root, record)
            written += 1
    return written


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = cli_main(argv)
    captured = capsys.readouterr()
    assert code == 0, (argv, code)
    return captured.out + captured.err


def _svg(ax: object) -> str:
    buf = io.StringIO()
    ax.figure.savefig(buf, format="svg")  # type: ignore[attr-defined]
    plt.close(ax.figure)  # type: ignore[attr-defined]
    return buf.getvalue()


def _mock_outputs(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The mock of the recorded server: the profile the CLI writes, its listing and answers over HTTP."""
    from tests.mock_support import call

    path = tmp_path / "demo.mock.json"
    outputs = [_cli(["mock", "--root", str(root), "--server", "demo", "--profile", str(path)], capsys),
               path.read_text(encoding="utf-8")]
    profile = me.load_profile(path)
    assert profile.tools  # the recorded calls are there to mock
    with me.serve_mock(profile, speed=1e6) as mock:
        for i, tool in enumerate([*profile.tools, *profile.tools, *profile.tools]):
            outputs.append(json.dumps(call(mock.url, tool.name, {"q": "x"}, msg_id=i)[0]))
        outputs.append(json.dumps(call(mock.url, "CANARY-tool", {}, msg_id=99)[0]))
    outputs.append(json.dumps(me.MockEngine(profile).list_tools()))
    return outputs


@pytest.fixture
def canary_root(root: Path, tmp_path: Path) -> Path:
    assert MARKER in EXCHANGES.read_text(encoding="utf-8")  # the input really carries the marker
    assert _replay(root) >= 15
    manifest = tmp_path / "canary.manifest.json"
    manifest.write_text(json.dumps({"version": 1, "sandboxes": {"fixture": {"description": "its memory"}},
                                    "probes": [
        {"id": "repeat-read", "probe": "degradation-over-n", "access": "read_only", "tool": "read_counter",
         "arguments": {"secret": "CANARY-manifest-argument"}, "max_attempts": 3},
        {"id": "boom", "probe": "instruction-fidelity", "access": "mutating", "sandbox": "fixture",
         "tool": "break_session", "arguments": {"why": "CANARY-why"}, "expect": {"outcome": "ok"}}]}),
                        encoding="utf-8")
    report = me.run_probes(server_command("probe_clean"), manifest=manifest,
                           options=me.ProbeOptions(server="canary", root=root, allow_mutation=True))
    assert len(report.cases) == 2 and report.readiness is not None  # a full run: manifest and battery
    assert me.load_trends(root=root) is not None  # ... which recorded its trend point
    me.append_record(root, me.AnnotationRecord(ts="2026-08-04T12:00:00.000Z", session="CANARY-session-value",
                                               seq=3, kind="workaround", note="retried by hand"))
    return root


def test_no_canary_reaches_tables_analysis_charts_cli_or_the_envelope(
        canary_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = canary_root
    raw = b"".join(p.read_bytes() for p in sorted((root / "store").rglob("*.jsonl")))
    assert MARKER.encode() not in raw  # the journals themselves (the privacy boundary)
    assert b"navigate" in raw  # and they do hold the recorded calls

    store = me.open_store(root)
    outputs: list[str] = []
    for table in (store.calls, store.annotations, store.trends):
        assert table.num_rows > 0
        outputs.append(json.dumps(table.to_pylist(), default=str))
        outputs.append(table.to_pandas().to_string())
    calls = store.calls
    for table in (me.latency_summary(calls), me.latency_over_time(calls), me.slowest_tools(calls),
                  me.outcome_rates(calls), me.error_templates(calls), me.template_daily(calls),
                  me.join_annotations(calls, store.annotations), me.readiness_history(store.trends)):
        outputs.append(json.dumps(table.to_pylist(), default=str))
    outputs += [_svg(charts.plot_latency_distribution(calls)), _svg(charts.plot_latency_over_time(calls)),
                _svg(charts.plot_outcome_mix(calls)), _svg(charts.plot_template_heatmap(calls)),
                _svg(charts.plot_readiness_history(store.trends))]

    report = me.check_redaction(root)
    outputs.append(repr(report))
    envelope = tmp_path / "envelope"
    me.export_share(root, dest=envelope, options=me.ShareOptions(include_probe_history=True))
    outputs += [p.read_text(encoding="utf-8") for p in sorted(envelope.rglob("*")) if p.is_file()]

    outputs += _mock_outputs(root, tmp_path, capsys)
    parquet = tmp_path / "parquet"
    for argv in (["summary", "--root", str(root)], ["doctor", "--root", str(root)],
                 ["trends", "--root", str(root)],
                 ["export-parquet", "--root", str(root), "--dest", str(parquet)],
                 ["share", "--root", str(root), "--dir", str(tmp_path / "envelope-cli")],
                 ["config", "--root", str(root)], ["erase", "--root", str(root), "--server", "canary"],
                 ["erase", "--root", str(root), "--session", "CANARY-session-value"],
                 ["retention", "--root", str(root), "--days", "1", "--dry-run"],
                 ["audit", "--root", str(root), "--format", "json"]):
        outputs.append(_cli(argv, capsys))
    outputs.append(json.dumps(pq.read_table(parquet).to_pylist(), default=str))
    outputs += [(root / "audit.jsonl").read_text(encoding="utf-8"),
                json.dumps(me.audit_log(root).to_pylist(), default=str)]

    leaks = [i for i, text in enumerate(outputs) if MARKER in text]
    assert leaks == [], f"canary in outputs #{leaks}"


def test_no_canary_of_2026_07_28_traffic_reaches_tables_analysis_charts_cli_otlp_or_the_envelope(
        root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcpeval_nb.testing.operations import operations_store

    operations_store(root, operations=30, seed=5)  # canaries in arguments, state, answers, task ids/results
    raw = b"".join(p.read_bytes() for p in sorted((root / "store").rglob("*.jsonl")))
    assert MARKER.encode() not in raw and b'"ext":{' in raw
    leaks = [i for i, text in enumerate(_operation_view_outputs(root, tmp_path, capsys)) if MARKER in text]
    assert leaks == [], f"canary in outputs #{leaks}"


def _operation_view_outputs(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Everything the operation view shows of a root: tables, analysis, charts, envelope, CLI, OTLP."""
    from tests.otlp_receiver import receiver

    calls = me.open_store(root).calls
    outputs = [json.dumps(calls.to_pylist(), default=str)]
    for table in (me.latency_summary(calls), me.latency_summary(calls, value="server_ms"),
                  me.outcome_rates(calls), me.error_templates(calls), me.era_mix(calls),
                  me.operation_summary(calls)):
        outputs.append(json.dumps(table.to_pylist(), default=str))
    outputs += [_svg(charts.plot_operations(calls)), _svg(charts.plot_latency_distribution(calls))]
    envelope = tmp_path / "envelope"
    me.export_share(root, dest=envelope)
    outputs += [p.read_text(encoding="utf-8") for p in sorted(envelope.rglob("*")) if p.is_file()]
    for argv in (["summary", "--root", str(root)], ["doctor", "--root", str(root)]):
        outputs.append(_cli(argv, capsys))
    with receiver() as collector:
        me.export_otlp(root, endpoint=collector.url, metrics_endpoint=collector.url)
    outputs += [str(message) for message in collector.traces + collector.metrics]
    return outputs


def test_no_header_value_of_either_direction_through_shim_http_reaches_the_store_or_any_output(
        root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Header values are payload (issue 26): request headers the client sends (Cookie, Authorization,
    ``Mcp-Param-*``, a disagreeing ``Mcp-Name``/``Mcp-Method``, ``tracestate``, ``baggage``, a malformed
    ``traceparent``, a bogus ``MCP-Protocol-Version``, ``Mcp-Session-Id``) and response headers the server
    sends (``Set-Cookie``, a private header, a ``WWW-Authenticate`` challenge, the protected-resource
    metadata document) are relayed both ways and none of their values is journaled or shown."""
    from mcpeval_nb import HTTPShim, HTTPShimOptions
    from tests.shim_helpers import journal, wait_for
    from tests.shim_http_upstream import upstream

    secret = f"{MARKER}-header-7a41"
    with upstream() as up, HTTPShim(HTTPShimOptions(server="demo", listen="127.0.0.1:0", upstream=up.url,
                                                    root=root, session="s1")) as shim:
        host = f"127.0.0.1:{shim.address[1]}"
        sent = _header_canary_requests(host, secret)
        answers = [_http(shim.address, request) for request in sent]
        assert wait_for(lambda: shim.recorder.written + shim.recorder.failed >= 3)
    arrived = [{k.lower(): v for k, v in headers.items()} for _method, headers, _body in up.seen]
    assert all(h.get("x-client-private") == secret and h.get("cookie") == f"c={secret}"
               for h in arrived), "the request headers reach the server unchanged"
    assert arrived[0]["mcp-param-region"] == secret and arrived[1]["mcp-name"] == secret
    assert all(f"secret={MARKER}".encode() in a for a in answers[:3]), "Set-Cookie is relayed"
    assert b"401" in answers[2].split(b"\r\n", 1)[0] and f'error_description="{MARKER}'.encode() in answers[2]
    assert f"{host}/.well-known/oauth-protected-resource/mcp".encode() in answers[2], "the challenge moved"
    assert MARKER.encode() in answers[3], "the metadata document is relayed"
    first, mismatched, refused = journal(root)
    assert [r["tool"] for r in (first, mismatched, refused)] == ["lookup", "lookup", "auth"]
    assert first["ext"]["trace_id"] == "0af7651916cd43dd8448eb211c80319c" and "flags" not in first["ext"]
    assert mismatched["ext"]["flags"] == ["header-mismatch"] and "trace_id" not in mismatched["ext"]
    assert refused["error"]["code"] == "capture-exchange-ended"  # a 401 carries no JSON-RPC answer
    raw = b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())
    assert MARKER.encode() not in raw
    leaks = [i for i, text in enumerate(_operation_view_outputs(root, tmp_path, capsys)) if MARKER in text]
    assert leaks == [], f"canary in outputs #{leaks}"


def _header_canary_requests(host: str, secret: str) -> list[bytes]:
    def post(msg_id: int, tool: str, headers: dict[str, str]) -> bytes:
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": {
            "name": tool, "arguments": {"q": "x"}}}).encode()
        base = {"Host": host, "Content-Type": "application/json", "Content-Length": str(len(body)),
                "Accept": "application/json, text/event-stream", "Cookie": f"c={secret}",
                "X-Client-Private": secret, "Authorization": f"Bearer {secret}", "Mcp-Session-Id": secret,
                "tracestate": f"v={secret}", "baggage": f"user={secret}", **headers}
        lines = "".join(f"{k}: {v}\r\n" for k, v in base.items())
        return f"POST /mcp HTTP/1.1\r\n{lines}\r\n".encode() + body

    trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    return [post(1, "lookup", {"Mcp-Method": "tools/call", "Mcp-Name": "lookup", "Mcp-Param-Region": secret,
                               "MCP-Protocol-Version": "2026-07-28", "traceparent": trace}),
            post(2, "lookup", {"Mcp-Method": secret, "Mcp-Name": secret, "MCP-Protocol-Version": secret,
                               "traceparent": f"00-{secret}-01"}),
            post(3, "auth", {}),
            f"GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {host}\r\n"
            f"Cookie: c={secret}\r\nX-Client-Private: {secret}\r\n\r\n".encode()]


def _http(address: tuple[str, int], request: bytes) -> bytes:
    """Send one raw request to the shim, read the whole response (it closes the connection)."""
    import socket

    with socket.create_connection(address, timeout=120) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)
