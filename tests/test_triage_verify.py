"""verify against the package's fixture servers: a broken tool fixed between runs walks open ->
fix-claimed -> verifying -> closed, a red run reopens it; preconditions and the mutation gate are
checked before any server starts; a server that cannot be reached changes nothing."""

from __future__ import annotations

import json
import socket
import sqlite3
import sys
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.demo.fixture_findings import FIXTURE_LABEL, REPRO_MANIFEST, capture_broken_sessions
from mcpeval_nb.testing import server_command
from tests import waiting


def _finding(root: Path) -> str:
    capture_broken_sessions(root, sessions=3)
    result = me.promote(root)
    assert result.promoted >= 1, result.line()
    rows = me.findings(root).to_pylist()
    (row,) = [r for r in rows if r["server"] == FIXTURE_LABEL and r["tool"] == "read_counter"]
    assert row["failures"] == 3 and row["calls"] == 9 and row["sessions"] == 3
    return str(row["finding_id"])


def _manifest(tmp_path: Path, document: dict[str, object] = REPRO_MANIFEST, name: str = "repro") -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document))
    return path


def _state(root: Path, finding: str) -> tuple[str, str | None, int]:
    row = next(r for r in me.findings(root).to_pylist() if r["finding_id"] == finding)
    return row["state"], row["probe_id"], row["consecutive_passes"]


def _marker_command(tmp_path: Path) -> list[str]:
    marker = tmp_path / "server-started"
    return [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]


def test_a_fixed_tool_walks_the_lifecycle_to_closed_and_a_red_run_reopens(root: Path, tmp_path: Path) -> None:
    finding = _finding(root)
    manifest = _manifest(tmp_path)
    assert _state(root, finding) == ("open", None, 0)

    def run(mode: str) -> me.VerifyResult:
        return me.verify_finding(
            root, finding, case="repeat-read", manifest=manifest, target=server_command("probe_clean", mode)
        )

    red = run("broken")
    assert (red.state, red.passed, red.exit_code) == ("fix-claimed", False, 1)
    assert (
        red.lines()[0]
        == f"{finding} state=fix-claimed probe=repeat-read consecutive_passes=0 reason={red.reason}"
        and red.lines()[1].startswith("  hint: ")
    )
    assert [run("clean").state for _ in range(3)] == ["verifying", "verifying", "closed"]
    assert _state(root, finding) == ("closed", "repeat-read", 3)
    assert run("broken").state == "open"
    history = me.finding_history(root, finding).to_pylist()
    assert [h["passed"] for h in history] == [False, True, True, True, False]
    assert {h["probe_id"] for h in history} == {"repeat-read"}
    severity = next(r for r in me.findings(root).to_pylist() if r["finding_id"] == finding)["severity"]
    assert severity in ("low", "medium", "high")
    db = sqlite3.connect(root / "index.db")  # the reference tool reads the lifecycle there (SPEC 12.4)
    assert db.execute("SELECT state, probe_id, consecutive_passes FROM finding_lifecycle "
                      "WHERE finding_id = ?", (finding,)).fetchone() == ("open", "repeat-read", 0)
    assert [p for (p,) in db.execute("SELECT passed FROM probe_history WHERE finding_id = ? ORDER BY id",
                                     (finding,))] == [0, 1, 1, 1, 0]
    stored = db.execute("SELECT severity FROM issues WHERE finding_id = ?", (finding,)).fetchone()
    assert stored == (severity,)


def test_the_cli_verify_lines_and_exit_codes(root: Path, tmp_path: Path) -> None:
    finding = _finding(root)
    manifest = _manifest(tmp_path)
    base = [
        sys.executable,
        "-m",
        "mcpeval_nb",
        "verify",
        "--root",
        str(root),
        "--finding",
        finding,
        "--case",
        "repeat-read",
        "--manifest",
        str(manifest),
        "--",
    ]
    red = waiting.run(
        [*base, *server_command("probe_clean", "broken")], capture_output=True, text=True, stall_s=120
    )
    assert red.returncode == 1 and red.stdout.startswith(f"{finding} state=fix-claimed probe=repeat-read")
    green = waiting.run(
        [*base, *server_command("probe_clean", "clean")], capture_output=True, text=True, stall_s=120
    )
    assert green.returncode == 0
    assert green.stdout == f"{finding} state=verifying probe=repeat-read consecutive_passes=1\n"


def test_an_unreachable_server_leaves_the_lifecycle_unchanged(root: Path, tmp_path: Path) -> None:
    finding = _finding(root)
    manifest = _manifest(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before = _state(root, finding)
    for target in (f"http://127.0.0.1:{port}/mcp", [sys.executable, "-c", "pass"]):
        result = me.verify_finding(root, finding, case="repeat-read", manifest=manifest, target=target)
        assert result.errored and result.exit_code == 3
        assert _state(root, finding) == before
    assert me.finding_history(root, finding).num_rows == 0


def test_mutation_is_refused_without_both_controls_before_any_server_starts(
    root: Path, tmp_path: Path
) -> None:
    finding = _finding(root)
    case = {**REPRO_MANIFEST["probes"][0], "access": "mutating", "sandbox": "fixture"}  # type: ignore[index]
    with_sandbox = _manifest(
        tmp_path, {"version": 1, "sandboxes": {"fixture": {"description": "its memory"}}, "probes": [case]}
    )
    marker = tmp_path / "server-started"
    with pytest.raises(me.UsageError, match="require --allow-mutation"):
        me.verify_finding(
            root, finding, case="repeat-read", manifest=with_sandbox, target=_marker_command(tmp_path)
        )
    no_sandbox = _manifest(tmp_path, {"version": 1, "sandboxes": {}, "probes": [case]}, "no-sandbox")
    with pytest.raises(me.ManifestError):
        me.verify_finding(
            root,
            finding,
            case="repeat-read",
            manifest=no_sandbox,
            allow_mutation=True,
            target=_marker_command(tmp_path),
        )
    assert not marker.exists()
    ok = me.verify_finding(
        root,
        finding,
        case="repeat-read",
        manifest=with_sandbox,
        allow_mutation=True,
        target=server_command("probe_clean", "clean"),
    )
    assert ok.passed and ok.state == "verifying"


@pytest.mark.parametrize(
    ("case", "document", "message"),
    [
        ("not an id", None, "must be an identifier"),
        ("missing", None, "is not in the manifest"),
        (
            "discovery",
            {
                "version": 1,
                "sandboxes": {},
                "probes": [
                    {
                        "id": "discovery",
                        "probe": "discovery-cost",
                        "access": "read_only",
                        "max_tools": 5,
                        "max_schema_bytes": 100,
                    }
                ],
            },
            "calls no tool",
        ),
        (
            "status",
            {
                "version": 1,
                "sandboxes": {},
                "probes": [
                    {
                        "id": "status",
                        "probe": "degradation-over-n",
                        "access": "read_only",
                        "tool": "describe_status",
                        "arguments": {},
                        "max_attempts": 3,
                    }
                ],
            },
            "but finding",
        ),
    ],
)
def test_preconditions_are_checked_before_any_server_starts(
    root: Path, tmp_path: Path, case: str, document: dict[str, object] | None, message: str
) -> None:
    finding = _finding(root)
    manifest = _manifest(tmp_path, document or REPRO_MANIFEST)
    with pytest.raises(me.UsageError, match=message):
        me.verify_finding(root, finding, case=case, manifest=manifest, target=_marker_command(tmp_path))
    with pytest.raises(me.UsageError, match="is not promoted"):
        me.verify_finding(
            root,
            "finding-0000000000000000",
            case="repeat-read",
            manifest=_manifest(tmp_path),
            target=_marker_command(tmp_path),
        )
    assert not (tmp_path / "server-started").exists()


def _rust_generated(finding: str) -> dict[str, object]:
    """A manifest as the Rust ``generate`` writes it (SPEC 8.5): the case's ``sandbox`` is ``null``."""
    return {"version": 1, "probes": [{"id": finding, "probe": "degradation-over-n", "access": "read_only",
                                      "sandbox": None, "tool": "read_counter", "arguments": {},
                                      "max_attempts": 3}]}


def test_a_manifest_with_a_null_sandbox_parses_as_no_sandbox() -> None:
    manifest = me.parse_manifest(json.dumps(_rust_generated("finding-0123456789abcdef")))
    assert [c.sandbox for c in manifest.cases] == [None]
    mutating = _rust_generated("c")
    mutating["probes"][0]["access"] = "mutating"  # type: ignore[index]
    with pytest.raises(me.ManifestError):  # null is no sandbox: the mutation gate still holds
        me.run_probes(["true"], manifest=json.dumps(mutating),
                      options=me.ProbeOptions(server="x", allow_mutation=True))


def test_verify_accepts_the_manifests_the_rust_generate_writes(root: Path, tmp_path: Path) -> None:
    finding = _finding(root)
    manifest = _manifest(tmp_path, _rust_generated(finding), name="rust")
    done = waiting.run([sys.executable, "-m", "mcpeval_nb", "verify", "--root", str(root), "--finding",
                           finding, "--case", finding, "--manifest", str(manifest), "--",
                           *server_command("probe_clean", "clean")], capture_output=True, text=True,
                       stall_s=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{finding} state=verifying probe={finding} consecutive_passes=1\n"
