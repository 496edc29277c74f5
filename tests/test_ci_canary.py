"""Canary: no marker from a manifest, a server's results or errors, or a hand-edited journal reaches any
of the CI outputs (gate in every format, JUnit, SARIF, markdown, priced text)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpeval_nb.testing import canary_store
from tests.ci_support import cli, fixture, junit

FORMATS = ("text", "markdown", "json", "junit")


def test_gate_prints_no_journal_marker_in_any_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = canary_store(tmp_path / "root", invalid_lines=False)
    budgets = tmp_path / "b.json"
    budgets.write_text(
        json.dumps(
            {
                "version": 1,
                "no_new_templates": True,
                "budgets": [{"p95_ms": 1, "p99_ms": 1, "max_error_rate": 0.01}],
            }
        )
    )
    base = canary_store(tmp_path / "base", invalid_lines=False, tag="b4s3")
    (base.root / "store" / "calls-2026-08-04.jsonl").write_text("")  # a baseline without the templates
    seen = ""
    for fmt in FORMATS:
        code, out, err = cli(
            capsys,
            "gate",
            "--budgets",
            str(budgets),
            "--root",
            str(store.root),
            "--baseline",
            str(base.root),
            "--format",
            fmt,
        )
        assert code == 1, err
        seen += out + err
        if fmt == "junit":
            junit(out)
    assert "no_new_templates fail" in seen
    assert [m for m in store.markers if m in seen] == []


def test_gate_over_invalid_journal_lines_names_the_place_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = canary_store(tmp_path / "root")
    budgets = tmp_path / "b.json"
    budgets.write_text(json.dumps({"version": 1, "budgets": [{"p95_ms": 1}]}))
    code, out, err = cli(capsys, "gate", "--budgets", str(budgets), "--root", str(store.root))
    # The bad lines are skipped and named (file and line), the rest is judged.
    assert code in (0, 1) and "skipped 5 journal line(s) that are not usable records:" in err
    assert err.count(":") >= 5 and "calls-" in err
    assert [m for m in store.markers if m in out + err] == []


@pytest.mark.parametrize("fmt", ["junit", "sarif", "markdown", "text"])
def test_probe_and_score_outputs_carry_no_argument_result_or_error_text(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(
        json.dumps(
            {
                "version": 1,
                "probes": [
                    {
                        "id": "repeat",
                        "probe": "degradation-over-n",
                        "access": "read_only",
                        "tool": "read_counter",
                        "arguments": {"secret": "CANARY-manifest-argument"},
                        "max_attempts": 4,
                    },
                    {"id": "tokens", "probe": "token-cost", "access": "read_only", "max_total_tokens": 10},
                ],
            }
        )
    )
    code, out, err = cli(
        capsys,
        "probe",
        "--server",
        "demo",
        "--manifest",
        str(manifest),
        "--format",
        fmt,
        "--price-per-mtok",
        "1",
        "--no-history",
        "--",
        *fixture("probe_clean", "broken"),
    )
    assert code == 1
    assert "CANARY" not in out + err
    if fmt == "junit":
        junit(out)
