"""Every command that writes data out of the store appends an audit record, refusals too (issue 29,
"Exports go where they are told, and leave a trail").

The CLI's commands are enumerated: each is either an export (run here, once done and once refused, and
its audit record checked) or named below with why it writes nothing out of the store.  A new command
fails ``test_every_command_is_classified`` until it is put on one side, and a command with an output
option (``--dest``, ``--dir``, ``--output``, ``--out-dir``, ``--endpoint``) must be an export or say why not.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

import pytest

import mcpeval_nb as me
from mcpeval_nb.journal.audit import EXPORT_ACTIONS
from tests import triage_support
from tests.ci_support import cli
from tests.test_cli_docs import COMMANDS, _long_flags

#: Commands that write nothing out of the store, and why.
NOT_EXPORTS = {
    "annotate": "appends to the store", "audit": "prints the audit log", "config": "prints settings",
    "capture-phases": "writes snapshots of a live server (--out-dir), nothing read from the store",
    "compare": "probes live servers", "diff": "compares two report documents", "doctor": "prints locations",
    "erase": "removes from the store (audited as erase)", "explain": "prints reason texts",
    "findings": "prints the findings", "gate": "prints a verdict", "index": "derives index.db in the root",
    "init": "writes a manifest scaffolded from a live server (--output), nothing read from the store",
    "phases": "renders a phases directory", "probe": "probes a live server",
    "promote": "derives findings in the root", "report": "re-renders a report document",
    "retention": "removes from the store (audited as retention)", "score": "probes a live server",
    "serve": "answers reads over loopback; its writing tools are audited per call",
    "shim": "records into the store", "shim-http": "records into the store",
    "sizes": "measures a live server", "summary": "prints aggregates", "trends": "prints trend history",
    "verify": "probes a live server (audited as verify)",
    "catalog check": "prints drift and signals", "catalog pin": "pins a catalog in the root (audited)",
    "guidance": "probes a live server", "usage": "prints tool usage",
    "mock": "serves recorded distributions (its --profile FILE is the export-mock-profile export)",
    "replay": "drives a live server with recorded shapes",
    "conformance": "judges the conformance suite's saved results, nothing read from the store",
    **{f"schema {name}": "prints a bundled schema" for name in
       ("budgets", "calls", "capture", "diff", "manifest", "mock-profile", "report", "result-sizes")},
}
OUTPUT_OPTIONS = {"--dest", "--dir", "--output", "--out-dir", "--endpoint"}


class _Collector(http.server.BaseHTTPRequestHandler):
    """A loopback OTLP/HTTP receiver: accepts every POST (an empty protobuf response is a success)."""

    received: ClassVar[list[int]] = []

    def do_POST(self) -> None:  # the http.server hook
        self.received.append(len(self.rfile.read(int(self.headers["Content-Length"] or 0))))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # the http.server hook
        pass


@pytest.fixture
def collector() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def promoted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("exports") / "root"
    triage_support.build(root)
    me.promote(root, threshold=0)
    retried = ("recovers-on-retry", "retry-did-not-recover", "recurring-error")
    finding = next(f for f in me.findings(root).to_pylist() if f["class"] in retried)
    return root, finding["finding_id"]


def test_every_command_is_classified() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert names - set(EXPORT_ACTIONS) - set(NOT_EXPORTS) == set(), "classify the new command here"
    assert set(NOT_EXPORTS) - names == set() and set(EXPORT_ACTIONS) - {"export-mock-profile"} <= names


def test_a_command_with_an_output_option_is_an_export_or_says_why() -> None:
    for path, command in COMMANDS:
        name = " ".join(path)
        if OUTPUT_OPTIONS & set(_long_flags(command)) and name not in EXPORT_ACTIONS:
            assert "live server" in NOT_EXPORTS[name], name


def _runs(root: Path, finding: str, tmp: Path, collector: str) -> dict[str, tuple[list[str], list[str]]]:
    """Per export: (a run that exports, a run that is refused)."""
    r = ["--root", str(root)]
    server = me.open_store(root).calls.column("server")[0].as_py()
    return {
        "share": (["share", "--dir", str(tmp / "envelope"), *r],
                  ["share", "--dir", str(root / "store" / "inside"), *r]),
        "export-parquet": (["export-parquet", "--dest", str(tmp / "pq"), *r],
                           ["export-parquet", "--dest", str(tmp / "link"), *r]),
        "export-otlp": (["export-otlp", "--endpoint", collector, *r],
                        ["export-otlp", "--endpoint", "http://collector.example:4318", *r]),
        "export-issues": (["export-issues", "--dir", str(tmp / "issues"), *r],
                          ["export-issues", "--dir", str(root / "store" / "issues"), *r]),
        "generate": (["generate", "--finding", finding, "--output", str(tmp / "repro.json"),
                      "--confirm-read-only", *r],
                     ["generate", "--finding", finding, "--output", str(tmp / "refused.json"), *r]),
        "export-mock-profile": (
            ["mock", "--server", server, "--profile", str(tmp / "mock.json"), *r],
            ["mock", "--server", server, "--profile", str(root / "store" / "m.json"), *r]),
    }


@pytest.mark.parametrize("action", EXPORT_ACTIONS)
def test_each_export_appends_an_audit_record_when_done_and_when_refused(
        action: str, promoted: tuple[Path, str], tmp_path: Path, collector: str,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for proxy in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    root, finding = promoted
    (tmp_path / "link").symlink_to(tmp_path)
    done, refused = _runs(root, finding, tmp_path, collector)[action]
    before = len(me.read_audit(root))
    code, _, err = cli(capsys, *done)
    assert code == 0, err
    code, _, err = cli(capsys, *refused)
    assert code == 2, err
    records = [r for r in me.read_audit(root)[before:] if r["action"] == action]
    assert [r["outcome"] for r in records] == ["done", "refused"]
    assert "reason" not in records[0] and records[1]["reason"] in ("usage-error", "unusable-output")
    assert records[0]["counts"] and all(isinstance(v, int) for v in records[0]["counts"].values())


def test_exports_through_the_library_are_audited_too(promoted: tuple[Path, str], tmp_path: Path) -> None:
    root, finding = promoted
    before = len(me.read_audit(root))
    calls: list[Callable[[], object]] = [
        lambda: me.open_store(root).to_parquet(tmp_path / "pq"),
        lambda: me.export_issues(root, tmp_path / "issues"),
        lambda: me.generate_manifest(root, finding, confirm_read_only=True, output=tmp_path / "m.json"),
    ]
    for call in calls:
        call()
    me.generate_manifest(root, finding)  # a preview writes nothing: no record
    actions = [r["action"] for r in me.read_audit(root)[before:]]
    assert actions == ["export-parquet", "export-issues", "generate"]
    assert me.read_audit(root)[-1]["labels"] == {"finding": finding}
