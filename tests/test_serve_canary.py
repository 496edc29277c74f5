"""No canary reaches any serve response, log line or error: a hand-edited canary store, records written
through the real writer with canary arguments and error messages, a manifest with canary arguments and
expectations, fixture servers whose answers and descriptions carry canaries, and canary argument values
in every refused call, all through a real ``mcpeval-nb serve --allow-spawn`` process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcpeval_nb as me
from mcpeval_nb.testing import canary_store, server_command
from mcpeval_nb.testing.servers.transport_fault import CANARY as FAULT_CANARY
from tests import waiting
from tests.serve_support import request, rpc

MARK = "CANARY!serve!"
SERVER_CANARIES = ("CANARY raw response", "CANARY private error", FAULT_CANARY)


def _store(root: Path) -> tuple[str, ...]:
    store = canary_store(root, invalid_lines=False)
    salt = me.load_salt(root)
    records = []
    for session in ("s-one", "s-two", "s-three"):
        for seq in (1, 2):
            error = me.error_info({"code": -32000, "message": f"{MARK}message"}, salt) if seq == 2 else None
            records.append(me.CallRecord(
                ts=f"2026-08-04T10:0{seq}:00.000Z", session=f"{MARK}{session}", seq=seq, server="canary-demo",
                method="tools/call", tool="lookup",
                args={"q": f"{MARK}argument", "url": "https://x.example/" + MARK},
                latency_ms=5, outcome="error" if error else "ok", error=error))
    me.append_records(root, records)
    me.promote(root, threshold=0)
    return store.markers


def _manifest() -> dict[str, Any]:
    return {"version": 1, "sandboxes": {}, "probes": [
        {"id": "repeat-read", "probe": "degradation-over-n", "access": "read_only", "tool": "read_counter",
         "arguments": {"secret": f"{MARK}manifest-argument"}, "max_attempts": 3},
        {"id": "literal-status", "probe": "instruction-fidelity", "access": "read_only",
         "tool": "describe_status", "arguments": {"note": f"{MARK}manifest-note"},
         "expect": {"outcome": "ok", "equals": {"status": "ready"}}}]}


def _calls(finding: str) -> list[tuple[str, dict[str, Any]]]:
    clean, broken, fault = (server_command("probe_clean"), server_command("probe_clean", "broken"),
                            server_command("transport_fault"))
    return [
        ("list_findings", {}), ("list_findings", {"state": "open"}), ("get_finding", {"finding_id": finding}),
        ("get_readiness_trends", {}),
        ("record_annotation", {"session": f"{MARK}s-one", "seq": 1, "kind": "workaround",
                               "note": f"{MARK}note"}),
        ("run_probe", {"manifest": _manifest(), "command": broken, "server_label": "canary-run"}),
        ("run_probe", {"manifest": _manifest(), "command": clean}),
        ("score", {"command": fault}), ("scaffold", {"command": clean, "confirm_read_only": True}),
        ("verify_finding", {"finding_id": finding, "case": "repeat-read", "manifest": _manifest(),
                            "command": broken}),
        # refused calls carrying canary values
        ("list_findings", {"state": MARK}), ("get_finding", {"finding_id": MARK}),
        ("record_annotation", {"session": "s", "seq": 1, "kind": MARK, "note": "n"}),
        ("record_annotation", {"session": "s", "seq": 1, "kind": "workaround", "note": MARK + "\n"}),
        ("record_annotation", {"session": "s", "seq": 1, "kind": "workaround", "note": MARK * 40}),
        ("record_annotation", {MARK: 1}),
        ("run_probe", {"manifest": {"version": 1, "probes": [{"id": MARK}]}, "command": clean}),
        ("run_probe", {"manifest": {MARK: MARK}, "command": clean}),
        ("run_probe", {"manifest": _manifest(), "url": f"http://user:{MARK}@127.0.0.1:9/mcp"}),
        ("run_probe", {"manifest": _manifest(), "url": f"https://{MARK}.example/mcp"}),
        ("run_probe", {"manifest": _manifest(), "command": [f"/nonexistent/{MARK}"]}),
        ("verify_finding", {"finding_id": finding, "case": MARK, "manifest": _manifest(), "command": clean}),
        ("verify_finding", {"finding_id": finding, "case": "absent", "manifest": _manifest(),
                            "command": clean}),
        (MARK, {}),
    ]


def test_no_canary_in_any_response_log_line_or_error(tmp_path: Path) -> None:
    root = tmp_path / "root"
    markers = (*_store(root), MARK, *SERVER_CANARIES)
    finding = me.findings(root).to_pylist()[0]["finding_id"]
    proc = subprocess.Popen([sys.executable, "-m", "mcpeval_nb", "serve", "--listen", "127.0.0.1:0",
                             "--allow-spawn", "--root", str(root)], stderr=subprocess.PIPE, text=True)
    answers: list[bytes] = []
    try:
        assert proc.stderr is not None
        address = ("127.0.0.1", int(proc.stderr.readline().rsplit(":", 1)[1].split("/")[0]))
        for name, arguments in _calls(finding):
            status, _, body = request(address, rpc("tools/call", name=name, arguments=arguments))
            assert status == 200
            answers.append(body)
        for method in (MARK, f"tools/{MARK}"):
            answers.append(request(address, rpc(method))[2])
        answers.append(request(address, MARK.encode())[2])
        answers.append(request(address, rpc("ping"), headers={"Host": MARK})[2])
        answers.append(request(address, rpc("ping"), headers={"Origin": f"http://{MARK}"})[2])
        proc.send_signal(signal.SIGINT)
        assert waiting.exited(proc, stall_s=30) == 0
        log = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    replies = [json.loads(a) for a in answers]
    assert sum("result" in r for r in replies) >= 10  # the happy paths ran (and answered)
    text = b"\n".join(answers).decode("utf-8") + log
    assert [m for m in markers if m in text] == []
