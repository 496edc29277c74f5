"""``capture_phases`` / ``phases`` against the phase-swapped fixture server (real processes and files)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb
from mcpeval_nb import ProbeError, ShareOutputError, SizesOptions, UsageError, capture_phases, load_phases
from tests.probe_support import fixture, run_cli

SERVER = fixture("phase_swap")
DATA = Path(__file__).resolve().parents[1] / "data" / "xray"


def capture(doc: Any, out: Path, root: Path, **options: Any) -> mcpeval_nb.PhaseCapture:
    return capture_phases(
        SERVER, capture_manifest=doc, out_dir=out, options=SizesOptions(server="fx", root=root, **options)
    )


def tree(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def advance(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"phases": [{"name": "design"}, {"name": "run", "advance": list(calls)}]}


def test_the_mcp_xray_capture_example_runs_unchanged(root: Path, tmp_path: Path) -> None:
    result = capture(DATA / "capture.yaml", tmp_path / "phases", root)
    assert [(p["name"], p["file"], p["tool_count"]) for p in result.phases] == [
        ("design", "01-design.json", 3),
        ("run", "02-run.json", 4),
    ]
    view = load_phases(result.dest)
    design, run = view.phases
    assert design.added == ("describe_model", "list_models", "load_model")
    assert run.added == ("run_query", "unload_model") and run.removed == ("load_model",)
    assert run.changed == (("describe_model", ("description", "schema")),)
    assert (run.resources, run.prompts) == (2, 1)
    assert run.total_tokens > design.total_tokens > 0


def test_a_snapshot_keeps_facts_and_digests_never_text(root: Path, tmp_path: Path) -> None:
    result = capture(DATA / "capture.yaml", tmp_path / "phases", root)
    snap = json.loads((result.dest / "02-run.json").read_text())
    query = next(t for t in snap["tools"] if t["name"] == "run_query")
    assert set(query) == {
        "name",
        "hints",
        "schema_bytes",
        "property_count",
        "tokens",
        "description_digest",
        "schema_digest",
    }
    assert query["property_count"] == 2 and query["hints"] == {"readOnlyHint": True}
    unload = next(t for t in snap["tools"] if t["name"] == "unload_model")
    assert unload["hints"] == {"readOnlyHint": False}
    salt = mcpeval_nb.load_salt(root)
    from mcpeval_nb.privacy.fingerprint import content_digest

    assert query["description_digest"] == content_digest(
        salt, "description", "Run a query against the loaded model. CANARY tool description"
    )
    for path in result.dest.iterdir():
        assert b"CANARY" not in path.read_bytes()


def test_the_output_is_owner_only_and_replaces_an_earlier_capture(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "exports" / "phases"
    capture(DATA / "capture.yaml", out, root)
    first = tree(out)
    capture({"phases": [{"name": "design"}]}, out, root)
    assert sorted(tree(out)) == ["01-design.json", "phases.json"] and tree(out) != first
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o700
    assert all(stat.S_IMODE(os.stat(p).st_mode) == 0o600 for p in out.iterdir())
    assert [p.name for p in out.parent.iterdir()] == ["phases"]  # no staging left behind


@pytest.mark.parametrize(
    ("doc", "options", "error", "message"),
    [
        (
            advance({"tool": "no_such_tool", "args": {}}),
            {},
            UsageError,
            "phase run advance call #1: the tool was not declared by the server",
        ),
        (
            {
                "phases": [
                    {"name": "design"},
                    {"name": "run", "advance": [{"tool": "load_model", "args": {}}]},
                    {"name": "back", "advance": [{"tool": "unload_model", "args": {}}]},
                ]
            },
            {"allow_mutation": True},
            UsageError,
            "phase back advance call #1: refuses a tool annotated as a writer",
        ),
        (
            {
                "phases": [
                    {"name": "design"},
                    {"name": "run", "advance": [{"tool": "load_model", "args": {}}]},
                    {
                        "name": "back",
                        "advance": [
                            {"tool": "unload_model", "args": {}, "access": "mutating", "sandbox": "fixture"}
                        ],
                    },
                ]
            },
            {},
            UsageError,
            "mutating calls require --allow-mutation",
        ),
        (
            advance({"tool": "load_model", "args": {}}, {"tool": "load_model", "args": {}}),
            {},
            ProbeError,
            "phase run: advance call #2 answered rpc-error; nothing was published",
        ),
    ],
)
def test_a_refused_or_failed_capture_leaves_the_prior_directory(
    root: Path, tmp_path: Path, doc: Any, options: dict[str, Any], error: type, message: str
) -> None:
    out = tmp_path / "exports" / "phases"
    capture(DATA / "capture.yaml", out, root)
    before = tree(out)
    with pytest.raises(error, match=message):
        capture(doc, out, root, **options)
    assert tree(out) == before
    assert [p.name for p in out.parent.iterdir()] == ["phases"]


def test_a_writer_advance_runs_with_both_controls(root: Path, tmp_path: Path) -> None:
    doc = {
        "phases": [
            {"name": "design"},
            {"name": "run", "advance": [{"tool": "load_model", "args": {}}]},
            {
                "name": "back",
                "advance": [{"tool": "unload_model", "args": {}, "access": "mutating", "sandbox": "fixture"}],
            },
        ]
    }
    result = capture(doc, tmp_path / "phases", root, allow_mutation=True)
    back = load_phases(result.dest).phases[2]
    assert back.added == ("load_model",) and back.removed == ("run_query", "unload_model")
    records = [e.record for p in (root / "store").glob("calls-*.jsonl") for e in mcpeval_nb.read_records(p)]
    assert [r.tool for r in records] == ["load_model", "unload_model"]


def test_a_non_empty_directory_that_is_not_a_capture_is_refused(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep")
    with pytest.raises(ShareOutputError, match="holds no earlier capture"):
        capture(DATA / "capture.yaml", out, root)
    assert tree(out) == {"notes.txt": b"keep"}


def test_phases_refuses_a_directory_that_is_not_a_capture(tmp_path: Path) -> None:
    with pytest.raises(mcpeval_nb.DocumentError, match="cannot read"):
        load_phases(tmp_path)
    (tmp_path / "phases.json").write_text('{"schema": "other"}')
    with pytest.raises(mcpeval_nb.DocumentError, match="is not a phase capture index"):
        load_phases(tmp_path)


def test_a_hand_edited_snapshot_cannot_put_prose_on_the_terminal(root: Path, tmp_path: Path) -> None:
    result = capture(DATA / "capture.yaml", tmp_path / "phases", root)
    path = result.dest / "02-run.json"
    snap = json.loads(path.read_text())
    snap["tools"][0]["name"] = "CANARY prose with spaces"
    path.write_text(json.dumps(snap))
    text = load_phases(result.dest).render("text")
    assert "CANARY" not in text


def test_cli_capture_and_render(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "phases"
    done = run_cli("capture-phases", "--capture", str(DATA / "capture.yaml"), "--server", "fx", "--out-dir",
                   str(out), "--", *SERVER, root=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"captured 2 phases in {out}\n"
    assert done.stderr.splitlines() == ["capture [1/2] design tools=3", "capture [2/2] run tools=4"]
    shown = run_cli("phases", str(out), root=root)
    assert shown.returncode == 0
    assert "  run tools=4" in shown.stdout and "    removed load_model" in shown.stdout
    as_json = run_cli("phases", str(out), "--format", "json", root=root)
    assert json.loads(as_json.stdout)["schema"] == "mcpeval-nb.phase-diff/v1"
    missing = run_cli("phases", str(tmp_path / "none"), root=root)
    assert missing.returncode == 2 and missing.stderr.startswith("mcpeval-nb: cannot read")
