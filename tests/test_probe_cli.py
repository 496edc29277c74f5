"""``mcpeval-nb probe``, ``explain``, ``schema manifest``: exit codes, formats, and the canary rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb
from mcpeval_nb.cli import main
from tests import waiting
from tests.probe_support import SANDBOXES, case, fixture, manifest, writer_case

CANARY_ARG = "CANARY-manifest-argument"


def cli(*args: str) -> tuple[int, str, str]:
    """Run ``python -m mcpeval_nb`` as a real process."""
    proc = waiting.run([sys.executable, "-m", "mcpeval_nb", *args], capture_output=True, text=True,
                       stall_s=120, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return int(code or 0), out.out, out.err


def write(path: Path, doc: dict[str, Any]) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def _store_text(root: Path) -> str:
    return "".join(p.read_text() for p in sorted((root / "store").glob("*.jsonl")))


def test_canary_arguments_results_and_errors_never_leave_the_privacy_boundary(root: Path,
                                                                               tmp_path: Path) -> None:
    args = {"secret": CANARY_ARG, "note": "CANARY note"}
    clean = write(tmp_path / "clean.json", manifest(
        case("repeat", "degradation-over-n", tool="read_counter", arguments=args, max_attempts=3),
        case("honest", "error-honesty", tool="flaky_read", arguments=args, max_attempts=4,
             expect_retryable=True),
        writer_case("fails", "instruction-fidelity", tool="break_session", arguments=args,
                    expect={"outcome": "ok", "equals": {"status": "ready"}}),
        case("payload", "payload-bounds", tool="read_counter", arguments=args, field="secret",
             size_bytes=5000,
             expect_handled=False),
        sandboxes=SANDBOXES,
    ))
    code, out, err = cli("probe", "--server", "demo", "--manifest", clean, "--format", "json", "--gate-only",
                         "--allow-mutation", "--", *fixture("probe_clean"))
    assert code == 1
    doc = json.loads(out)
    assert doc["gate"] == {"passed": 3, "total": 4}
    features = write(tmp_path / "features.json", manifest(
        case("garbage", "degradation-over-n", tool="garbage", arguments=args, max_attempts=2),
        case("schema", "output-schema", tool="out_invalid", arguments=args),
        case("sampling", "sampling", tool="sample_invalid", arguments=args, max_requests=2),
        case("crash", "payload-bounds", tool="crash", arguments=args, field="blob", size_bytes=10,
             expect_handled=True),
    ))
    code2, out2, err2 = cli("probe", "--server", "demo", "--manifest", features, "--gate-only", "--",
                            *fixture("probe_features"))
    assert code2 == 3 and "garbage transport-error: " in err2
    code3, out3, err3 = cli("probe", "--server", "demo", "--manifest", clean, "--format", "markdown",
                            "--gate-only", "--allow-mutation", "--", *fixture("probe_clean"))
    assert code3 == 1 and "| repeat | degradation-over-n | pass |" in out3
    journal = _store_text(root)
    assert journal.count('"kind":"synthetic"') >= 10
    for text in (out, err, out2, err2, out3, err3, journal):
        assert "CANARY" not in text


def test_probe_prints_text_lines_and_exits_zero_when_every_case_passes(
        root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "m.json", manifest(case("pages", "pagination", max_pages=3)))
    code, out, err = in_process(capsys, "probe", "--server", "demo", "--manifest", path, "--gate-only", "--",
                                *fixture("probe_clean"))
    assert code == 0
    assert out.splitlines() == ["pages pagination pass attempts=1 tools=7 pages=1", "demo gate 1/1 passed"]
    assert "probe [1/1] pages pass" in err


@pytest.mark.parametrize(("extra", "message"), [
    (["--url", "http://127.0.0.1:9/mcp", "--", "python"], "not both"),
    ([], "an HTTP endpoint or stdio command is required"),
    (["--probe", "workflow", "--", "python"], "no probe cases selected"),
    (["--probe", "pagination", "--case", "pages", "--", "python"], "not both"),
])
def test_usage_errors_exit_two_before_anything_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      extra: list[str], message: str) -> None:
    path = write(tmp_path / "m.json", manifest(case("pages", "pagination", max_pages=3)))
    code, out, err = in_process(capsys, "probe", "--server", "demo", "--manifest", path, *extra)
    assert code == 2 and message in err and out == ""


def test_invalid_manifest_and_label_exit_two_with_a_located_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path / "bad.json", manifest(case("pages", "pagination", max_pages=0)))
    code, _, err = in_process(capsys, "probe", "--server", "demo", "--manifest", bad, "--", "python")
    assert code == 2 and "bad.json: probe case pages: max_pages must be between 1 and 1000" in err
    code, _, err = in_process(capsys, "probe", "--server", "bad label", "--manifest", bad, "--", "python")
    assert code == 2 and "server label is invalid" in err


def test_mutating_manifest_without_the_flag_exits_two(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    doc = manifest({"id": "w", "probe": "contention", "access": "mutating", "sandbox": "box", "tool": "t",
                    "arguments": {}}, sandboxes={"box": {"description": "scratch"}})
    path = write(tmp_path / "m.json", doc)
    code, _, err = in_process(capsys, "probe", "--server", "demo", "--manifest", path, "--", "python")
    assert code == 2 and "mutating probes require --allow-mutation" in err


def test_explain_lists_every_reason_and_explains_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = in_process(capsys, "explain")
    labels = [line for line in out.splitlines() if not line.startswith("  ")]
    assert code == 0 and labels == [label for label, _ in mcpeval_nb.reason_hints()]
    code, out, _ = in_process(capsys, "explain", "payload-unhandled")
    assert code == 0 and out.startswith("payload-unhandled\n  ")
    code, _, err = in_process(capsys, "explain", "CANARY")
    assert code == 2 and "CANARY" not in err


def test_schema_manifest_prints_the_shipped_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = in_process(capsys, "schema", "manifest")
    assert code == 0 and out == mcpeval_nb.manifest_schema_text()
    assert json.loads(out)["properties"]["version"] == {"const": 1}


def test_full_run_appends_one_trend_point_and_gate_only_appends_none(
        root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "m.json", manifest(case("pages", "pagination", max_pages=3)))
    history = root / "store" / "probes" / "history.jsonl"
    code, out, _ = in_process(capsys, "probe", "--server", "old", "--manifest", path, "--gate-only", "--",
                              *fixture("old_protocol"))
    assert code == 0 and not history.exists()
    code, out, _ = in_process(capsys, "probe", "--server", "old", "--manifest", path, "--format", "json",
                              "--", *fixture("old_protocol"))
    readiness = json.loads(out)["readiness"]
    assert readiness is not None and isinstance(readiness["score"], int)
    lines = history.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["server"] == "old"
