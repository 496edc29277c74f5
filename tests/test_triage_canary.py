"""Canary: a store whose payloads carry CANARY strings through the real correlator and shim yields no
canary in index.db, lifecycle.db, any findings format, export-issues files, generated manifests, the
findings panel's widget state or its front-end messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import comm
import ipywidgets
import pytest
from comm.base_comm import BaseComm

import mcpeval_nb as me
from mcpeval_nb.capture import Correlator
from mcpeval_nb.demo.fixture_findings import REPRO_MANIFEST, capture_broken_sessions
from mcpeval_nb.testing import server_command
from mcpeval_nb.widgets import FindingsPanel
from tests.waiting import settled

MARKER = "CANARY"
EXCHANGES = Path(__file__).resolve().parent.parent / "data" / "demo" / "exchanges.jsonl"


class RecordingComm(BaseComm):  # type: ignore[misc]
    """A comm that keeps every message a widget publishes."""

    sent: ClassVar[list[Any]] = []

    def publish_msg(
        self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
    ) -> None:
        RecordingComm.sent.append((msg_type, data, [bytes(b) for b in buffers or []]))


def _replay(root: Path) -> None:
    for session in ("CANARY-session-one", "CANARY-session-two"):
        correlator = Correlator(server="demo", session=session, salt=me.load_salt(root))
        for line in EXCHANGES.read_text(encoding="utf-8").splitlines():
            exchange = json.loads(line)
            side = correlator.on_outbound if exchange["direction"] == "outbound" else correlator.on_inbound
            record = side(exchange["frame"].encode("utf-8"), now_ms=exchange["at_ms"])
            if record is not None:
                me.append_record(root, record)


def _leaks(value: Any) -> bool:
    text = json.dumps(
        value,
        default=lambda v: (
            bytes(v).decode("latin-1") if isinstance(v, bytes | bytearray | memoryview) else str(v)
        ),
    )
    return MARKER in text


def test_no_canary_reaches_the_index_lifecycle_outputs_exports_manifests_or_panel(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert MARKER in EXCHANGES.read_text(encoding="utf-8")
    _replay(root)
    capture_broken_sessions(root, sessions=3)  # the fixture answers and fails with CANARY text
    me.append_record(root, me.AnnotationRecord(ts="2026-08-04T12:00:00.000Z", session="CANARY-session-one",
                                               seq=3, kind="false-success", note="looked fine"))
    assert me.promote(root, threshold=0).promoted >= 2
    rows = me.findings(root).to_pylist()
    manifest = tmp_path / "repro.json"
    manifest.write_text(json.dumps(REPRO_MANIFEST))
    finding = next(r["finding_id"] for r in rows if r["tool"] == "read_counter")
    for mode in ("broken", "clean"):
        me.verify_finding(
            root, finding, case="repeat-read", manifest=manifest, target=server_command("probe_clean", mode)
        )
    outputs = []
    for fmt in ("agent", "md", "json"):
        run = subprocess.run(
            [sys.executable, "-m", "mcpeval_nb", "findings", "--root", str(root), "--format", fmt],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0 and run.stdout
        outputs.append(run.stdout + run.stderr)
    for r in rows:
        try:
            generated = me.generate_manifest(
                root,
                r["finding_id"],
                confirm_read_only=True,
                output=tmp_path / f"{r['finding_id']}.json",
                expect=b'{"outcome":"ok"}'
                if r["class"] in ("false-success", "blocked-optimal-path")
                else None,
            )
        except me.UsageError:
            continue
        outputs.append("\n".join(generated.stdout_lines("x")))
        outputs.append((tmp_path / f"{r['finding_id']}.json").read_text())
        outputs.append("\n".join(me.explain_finding(root, r["finding_id"]).lines()))
        outputs.append(json.dumps(me.failure_windows(root, r["finding_id"]).to_pylist(), default=str))
    export = me.export_issues(root, tmp_path / "issues", include_closed=True)
    assert export.files == len(rows)
    outputs += [p.read_text() for p in export.dest.iterdir()]
    assert [text for text in outputs if MARKER in text] == []
    for name in ("index.db", "lifecycle.db"):
        data = (root / name).read_bytes()
        assert MARKER.encode() not in data, name

    RecordingComm.sent.clear()
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: RecordingComm(*a, **k))
    # Widgets other test files left alive in this worker (under xdist) may hold their own canaries: the
    # check covers every widget created from here on, which is every widget of the panel.
    earlier = set(ipywidgets.widgets.widget._instances)
    panel = FindingsPanel(root)
    assert settled(panel)
    for value, _label in [(v, lab) for lab, v in panel.selector.options]:
        panel.selector.value = value
        assert settled(panel)
    panel.index_button.click()
    assert settled(panel)
    panel.promote_button.click()
    assert settled(panel)
    panel.output.value = str(tmp_path / "panel.json")
    panel.confirm.value = True
    panel.generate_button.click()
    assert settled(panel)
    assert "read_counter" in panel.rows.value and panel.preview.value
    states = {k: wdg.get_state() for k, wdg in ipywidgets.widgets.widget._instances.items()
              if k not in earlier}
    assert states
    assert not _leaks(states)
    assert len(RecordingComm.sent) > 20 and not _leaks(RecordingComm.sent)
