"""Canary: strings planted in manifest args, in results and in tool descriptions never reach stdout, the
JSON document, the journals, the sizes history or the phase snapshots (through the public surface)."""

from __future__ import annotations

import json
from pathlib import Path

import mcpeval_nb
from tests.probe_support import fixture, run_cli

MARK = "CANARY"  # the fixture servers put it in every result, error text and description
# Argument values carry it too; argument *keys* are kept by design (docs/privacy.md), so none holds it.
CALLS = {
    "calls": [
        {"tool": "fixed_text", "args": {"key": "CANARY manifest argument"}},
        {"tool": "sized_text", "args": {"chars": 5, "note": "CANARY-value-2"}},
        {"tool": "mixed", "args": {"nested": {"deep": ["CANARY-in-a-list"]}}},
        {"tool": "tool_error", "args": {}},
        {"tool": "rpc_error", "args": {}},
        {"tool": "crash", "args": {"why": "CANARY-crash"}},
        {"tool": "get_table_details", "args": {"table_name": "CANARY-table"}},
    ]
}
CAPTURE = {
    "phases": [
        {"name": "design"},
        {"name": "run", "advance": [{"tool": "load_model", "args": {"model": {"name": "CANARY-model"}}}]},
    ]
}


def test_no_canary_crosses_the_boundary(root: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "calls.json"
    manifest.write_text(json.dumps(CALLS))
    capture = tmp_path / "capture.yaml"
    capture.write_text(json.dumps(CAPTURE))
    outputs = []
    for fmt in ("text", "markdown", "json"):
        done = run_cli(
            "sizes",
            "--call-manifest",
            str(manifest),
            "--server",
            "fx",
            "--format",
            fmt,
            "--",
            *fixture("result_sizes"),
            root=root,
        )
        assert done.returncode == 0, done.stderr
        outputs += [done.stdout, done.stderr]
    out = tmp_path / "exports" / "phases"
    done = run_cli(
        "capture-phases",
        "--capture",
        str(capture),
        "--server",
        "fx",
        "--out-dir",
        str(out),
        "--",
        *fixture("phase_swap"),
        root=root,
    )
    assert done.returncode == 0, done.stderr
    outputs += [done.stdout, done.stderr]
    for fmt in ("text", "json"):
        shown = run_cli("phases", str(out), "--format", fmt, root=root)
        outputs += [shown.stdout, shown.stderr]
    # the run did what it should: rows, records, history points and snapshots exist
    assert "Result sizes (per call): fx" in outputs[0] and '"result_bytes": 1039' in outputs[4]
    journals = sorted((root / "store").rglob("*.jsonl"))
    assert {p.name for p in journals} >= {"sizes.jsonl"} and any(
        p.name.startswith("calls-") for p in journals
    )
    assert len(mcpeval_nb.load_size_history(root=root)) == 3
    snapshots = sorted(out.iterdir())
    assert [p.name for p in snapshots] == ["01-design.json", "02-run.json", "phases.json"]
    for text in outputs:
        assert MARK not in text
    for path in [*journals, *snapshots]:
        assert MARK.encode() not in path.read_bytes(), path
    table = mcpeval_nb.result_size_history(root=root)
    assert MARK not in json.dumps(table.to_pylist(), default=str)


def test_the_redaction_check_passes_a_store_with_sizes_history(root: Path) -> None:
    mcpeval_nb.probe_result_sizes(
        fixture("result_sizes"), call_manifest=CALLS, options=mcpeval_nb.SizesOptions(server="fx", root=root)
    )
    report = mcpeval_nb.check_redaction(root)
    assert report.files_scanned >= 2 and report.flagged == ()


def test_the_share_envelope_carries_the_sizes_history_with_the_probe_history(
    root: Path, tmp_path: Path
) -> None:
    mcpeval_nb.probe_result_sizes(
        fixture("result_sizes"), call_manifest=CALLS, options=mcpeval_nb.SizesOptions(server="fx", root=root)
    )
    with_history = tmp_path / "with"
    mcpeval_nb.export_share(
        root, dest=with_history, options=mcpeval_nb.ShareOptions(include_probe_history=True)
    )
    shared = with_history / "store" / "probes" / "sizes.jsonl"
    assert shared.read_bytes() == (root / "store" / "probes" / "sizes.jsonl").read_bytes()
    assert MARK.encode() not in shared.read_bytes()
    without = tmp_path / "without"
    mcpeval_nb.export_share(root, dest=without)
    assert not (without / "store" / "probes").exists()
