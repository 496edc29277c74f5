"""The reference's flags and formats, and ours past it, against real fixture server processes.

``probe --format sarif|junit``, ``--price-per-mtok`` on ``probe`` and ``report``, ``diff --format
markdown|junit``, ``compare --manifest/--gate-only/--allow-mutation/--format json``, ``score --brief``
and ``--format junit``, ``init --server``, ``annotate --event-id``.  Goldens live in tests/golden/
(latencies and versions masked); JUnit is validated against the schema and parsed back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb
from mcpeval_nb.privacy.records import Identity
from tests.ci_support import cli, fixture, golden, junit, outcomes

CANARY = "CANARY-manifest-argument"
CASES: list[dict[str, Any]] = [
    {
        "id": "surface",
        "probe": "discovery-cost",
        "access": "read_only",
        "max_tools": 3,
        "max_schema_bytes": 100000,
    },
    {"id": "tokens", "probe": "token-cost", "access": "read_only", "max_total_tokens": 100000},
    {
        "id": "repeat",
        "probe": "degradation-over-n",
        "access": "read_only",
        "tool": "read_counter",
        "arguments": {"secret": CANARY},
        "max_attempts": 5,
    },
    {
        "id": "literal",
        "probe": "instruction-fidelity",
        "access": "read_only",
        "tool": "describe_status",
        "arguments": {"secret": CANARY},
        "expect": {"outcome": "ok", "equals": {"status": "ready"}},
    },
    {"id": "pages", "probe": "pagination", "access": "read_only", "max_pages": 3},
]


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return str(path)


@pytest.fixture
def manifest(tmp_path: Path) -> str:
    return write(tmp_path / "mcp-eval.manifest.json", {"version": 1, "probes": CASES})


def probe(
    capsys: pytest.CaptureFixture[str], manifest: str, *extra: str, mode: str = "broken"
) -> tuple[int, str]:
    code, out, err = cli(
        capsys,
        "probe",
        "--server",
        "demo",
        "--manifest",
        manifest,
        "--gate-only",
        "--no-journal",
        *extra,
        "--",
        *fixture("probe_clean", mode),
    )
    assert CANARY not in out + err and "CANARY" not in out + err
    return code, out


def test_probe_sarif_locates_failed_cases_at_their_manifest_lines(
    root: Path, manifest: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = probe(capsys, manifest, "--format", "sarif")
    assert code == 1
    golden("probe.sarif.json", out.replace(manifest, "MANIFEST"))
    results = json.loads(out)["runs"][0]["results"]
    lines = Path(manifest).read_text().splitlines()
    located = {
        r["ruleId"]: lines[r["locations"][0]["physicalLocation"]["region"]["startLine"] - 1] for r in results
    }
    assert set(located) == {"discovery-limit-exceeded", "unexpected-outcome", "value-mismatch"}
    assert '"surface"' in located["discovery-limit-exceeded"] and '"literal"' in located["value-mismatch"]


def test_probe_junit_has_one_testcase_per_case_with_reason_labels_and_hints(
    root: Path, manifest: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = probe(capsys, manifest, "--format", "junit")
    assert code == 1
    golden("probe.junit.xml", out)
    doc = junit(out)
    assert outcomes(doc) == {
        "surface": ("failure", "discovery-limit-exceeded"),
        "tokens": ("passed", None),
        "repeat": ("failure", "unexpected-outcome"),
        "literal": ("failure", "value-mismatch"),
        "pages": ("passed", None),
    }
    suite = doc.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("5", "3")
    failure = doc.find(".//testcase[@name='literal']/failure")
    assert failure is not None and failure.text is not None
    assert failure.text.startswith(mcpeval_nb.hint_for("value-mismatch"))


def test_probe_markdown_and_text_price_the_session_from_the_token_estimate(
    root: Path, manifest: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = probe(capsys, manifest, "--format", "markdown", "--price-per-mtok", "3")
    assert code == 1
    golden("probe.price.md", out)
    report = mcpeval_nb.parse_report(probe(capsys, manifest, "--format", "json")[1])
    tokens = next(c.measurements["total_tokens"] for c in report.cases if c.id == "tokens")
    code, text = probe(capsys, manifest, "--price-per-mtok", "2.5", "--brief")
    assert text.splitlines()[-1] == (
        f"demo session cost ${tokens * 2.5 / 1e6:.6f} at $2.5/Mtok tokens={tokens} source=case:tokens"
    )
    assert "hint:" not in text
    code, json_out = probe(capsys, manifest, "--format", "json", "--price-per-mtok", "3")
    assert "session cost" not in json_out and "Mtok" not in json_out  # JSON keeps the v2 document
    code, _, err = cli(
        capsys,
        "probe",
        "--server",
        "demo",
        "--manifest",
        manifest,
        "--price-per-mtok",
        "-1",
        "--",
        *fixture("probe_clean"),
    )
    assert code == 2 and "--price-per-mtok" in err


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A saved score report of the clean fixture, and its junit rendering by the command."""
    path = tmp_path_factory.mktemp("scored")
    saved = path / "score.json"
    args = ["score", "--server", "demo", "--no-history", "--root", str(path / "root")]
    done = subprocess.run(
        [sys.executable, "-m", "mcpeval_nb", *args, "--format", "json", "--", *fixture("probe_clean")],
        capture_output=True,
        text=True,
        check=False,
    )
    saved.write_text(done.stdout)
    xml = subprocess.run(
        [sys.executable, "-m", "mcpeval_nb", *args, "--format", "junit", "--", *fixture("probe_clean")],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return str(saved), xml


def test_score_junit_lists_each_lost_check_and_each_clean_area(scored: tuple[str, str]) -> None:
    saved, xml = scored
    report = mcpeval_nb.parse_report(Path(saved).read_bytes())
    assert report.readiness is not None
    cases = outcomes(junit(xml))
    lost = {
        (f"{c.id} {c.tool}" if c.tool else c.id): c.reason for a in report.readiness.areas for c in a.checks
    }
    clean = {a.name for a in report.readiness.areas if not a.checks}
    assert {k: v for k, v in cases.items() if v[0] == "failure"} == {
        k: ("failure", r) for k, r in lost.items()
    }
    assert {k for k, v in cases.items() if v[0] == "passed"} == clean
    assert "reliability.success flaky_read" in cases


def test_score_brief_keeps_the_readiness_and_surface_lines(
    root: Path, scored: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    saved, _ = scored
    code, full, _ = cli(capsys, "report", saved)
    code, brief, _ = cli(capsys, "report", saved, "--brief")
    assert brief.splitlines() == full.splitlines()[:2] and "  lost " in full
    code, out, _ = cli(
        capsys, "score", "--server", "demo", "--brief", "--no-history", "--", *fixture("probe_clean")
    )
    assert code == 0 and [line.split()[1] for line in out.splitlines()] == ["readiness", "surface"]


def test_report_prices_the_catalog_and_renders_junit(
    scored: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    saved, xml = scored
    report = mcpeval_nb.parse_report(Path(saved).read_bytes())
    assert report.readiness is not None
    tokens = report.readiness.area("context").measurements["catalog_tokens"]
    code, out, _ = cli(capsys, "report", saved, "--price-per-mtok", "15")
    assert out.splitlines()[-1] == (
        f"demo session cost ${tokens * 15 / 1e6:.6f} at $15/Mtok tokens={tokens} source=catalog"
    )
    code, out, _ = cli(capsys, "report", saved, "--format", "junit")
    assert code == 0 and out == xml


def _report(path: Path, cases: list[tuple[str, str, bool, str | None]], score: int | None = None) -> str:
    doc = {
        "cases": [
            {
                "attempts": 1,
                "detail": None,
                "first_failure": None if ok else 1,
                "hint": None if ok else mcpeval_nb.hint_for(reason or ""),
                "id": cid,
                "measurements": {},
                "passed": ok,
                "probe": kind,
                "reason": reason,
                "tool": None,
            }
            for cid, kind, ok, reason in cases
        ],
        "gate": {"passed": sum(c[2] for c in cases), "total": len(cases)},
        "generator": {"name": "mcpeval-nb", "version": "0.1.0"},
        "manifest_sha256": "ab" * 32,
        "passed": all(c[2] for c in cases),
        "readiness": None,
        "readiness_error": None,
        "schema": "mcpeval.probe-report/v2",
        "server": "demo",
    }
    return write(path, doc)


def test_diff_markdown_follows_the_text_and_junit_fails_regressions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _report(
        tmp_path / "base.json",
        [
            ("a", "pagination", True, None),
            ("b", "token-cost", False, "token-budget-exceeded"),
            ("c", "pagination", True, None),
            ("gone", "pagination", True, None),
        ],
    )
    current = _report(
        tmp_path / "cur.json",
        [
            ("a", "pagination", False, "pagination-stalled-cursor"),
            ("b", "token-cost", True, None),
            ("c", "pagination", True, None),
            ("new", "pagination", True, None),
        ],
    )
    code, text, _ = cli(capsys, "diff", base, current)
    code, md, _ = cli(capsys, "diff", base, current, "--format", "markdown")
    assert code == 0
    golden("diff.md", md)
    rows = [line.split(" | ") for line in md.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [f"{r[0][2:]} {r[1]} {r[2]} {r[3]} -> {r[4][:-2]}" for r in rows] == text.splitlines()[:-1]
    for flag, changed in (([], "passed"), (["--fail-on-change"], "failure")):
        code, xml, _ = cli(capsys, "diff", base, current, "--format", "junit", *flag)
        assert outcomes(junit(xml)) == {
            "a": ("failure", "regressed"),
            "b": ("passed", None),
            "c": ("passed", None),
            "gone": ("failure", "regressed"),
            "new": (changed, "changed" if flag else None),
        }
        assert code == (1 if flag else 0)


def test_compare_runs_a_manifest_on_every_target_and_prints_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "m.json",
        {
            "version": 1,
            "probes": [
                {
                    "id": "repeat",
                    "probe": "degradation-over-n",
                    "access": "read_only",
                    "tool": "tool_000",
                    "arguments": {},
                    "max_attempts": 2,
                },
                {
                    "id": "surface",
                    "probe": "discovery-cost",
                    "access": "read_only",
                    "max_tools": 4,
                    "max_schema_bytes": 100000,
                },
            ],
        },
    )
    server = subprocess.Popen(fixture("many_tools", "5", "--http"), stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        targets = ["--endpoint", f"five={url}", "--", *fixture("many_tools", "3")]
        code, out, _ = cli(capsys, "compare", "--manifest", path, "--gate-only", "--format", "json", *targets)
        assert code == 0
        doc = json.loads(out)
        assert doc["schema"] == "mcpeval-nb.compare/v1"
        assert [(t["label"], t["report"]["gate"], t["report"]["readiness"]) for t in doc["targets"]] == [
            ("five", {"passed": 1, "total": 2}, None),
            ("stdio", {"passed": 2, "total": 2}, None),
        ]
        code, out, _ = cli(capsys, "compare", "--manifest", path, "--gate-only", *targets)
        assert [line.split() for line in out.splitlines()] == [
            ["area", "five", "stdio"],
            ["gate", "1/2", "2/2"],
        ]
        code, out, _ = cli(capsys, "compare", "--manifest", path, *targets)
        lines = out.splitlines()
        assert code == 0 and lines[1].split() == ["gate", "1/2", "2/2"] and lines[-1].startswith("overall")
    finally:
        server.kill()
        server.wait(timeout=10)


def test_compare_applies_the_mutation_gate_once_before_any_target_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "m.json",
        {
            "version": 1,
            "sandboxes": {"box": {"description": "scratch"}},
            "probes": [
                {
                    "id": "w",
                    "probe": "contention",
                    "access": "mutating",
                    "sandbox": "box",
                    "tool": "t",
                    "arguments": {},
                }
            ],
        },
    )
    targets = ["--endpoint", "a=http://127.0.0.1:9/mcp", "--endpoint", "b=http://127.0.0.1:9/mcp"]
    code, _, err = cli(capsys, "compare", "--manifest", path, *targets)
    assert code == 2 and "require --allow-mutation" in err
    code, _, err = cli(capsys, "compare", "--manifest", path, "--allow-mutation", *targets)
    assert code == 3  # authorised: the targets were tried (and are unreachable)
    code, _, err = cli(capsys, "compare", "--gate-only", *targets)
    assert code == 2 and "--gate-only needs --manifest" in err


def test_init_names_the_server_label_and_refuses_an_invalid_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_path = tmp_path / "m.json"
    code, out, _ = cli(
        capsys, "init", "--server", "demo", "--output", str(out_path), "--", *fixture("probe_clean")
    )
    assert code == 0 and out.splitlines()[-1].endswith(" cases for demo")
    code, _, err = cli(capsys, "init", "--server", "bad label", "--dry-run", "--", *fixture("probe_clean"))
    assert code == 2 and "server label is invalid" in err


def test_annotate_by_event_id_writes_the_newer_record_form(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event = "0B6A2C8E-4D1F-4A5B-9C3D-2E1F0A9B8C7D"
    mcpeval_nb.append_record(root, mcpeval_nb.CallRecord(  # the call the annotations target
        identity=Identity("1d2c3b4a-0000-4000-8000-000000000001", event.lower()),
        ts="2026-08-04T12:00:00.000Z", session="s1", seq=4, server="srv", method="tools/call", outcome="ok"))
    code, out, _ = cli(
        capsys,
        "annotate",
        "--session",
        "s1",
        "--event-id",
        event,
        "--kind",
        "workaround",
        "--note",
        "used the other tool",
    )
    assert code == 0 and out.endswith(f" event {event.lower()}\n") and " seq " not in out
    [line] = (root / "store").glob("annotations-*.jsonl")
    record = json.loads(line.read_text())
    assert list(record) == ["ts", "session", "event_id", "kind", "note"]
    assert record["event_id"] == event.lower()
    code, out, _ = cli(
        capsys,
        "annotate",
        "--session",
        "s1",
        "--seq",
        "4",
        "--event-id",
        event,
        "--kind",
        "workaround",
        "--note",
        "both",
    )
    assert code == 0 and out.endswith(f" seq 4 event {event.lower()}\n")
    for extra, message in (
        (["--event-id", "CANARY-not-a-uuid"], "event id must be a UUID"),
        ([], "needs --seq or --event-id"),
    ):
        code, _, err = cli(
            capsys, "annotate", "--session", "s1", *extra, "--kind", "workaround", "--note", "x"
        )
        assert code == 2 and message in err and "CANARY" not in err
