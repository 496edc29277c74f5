"""``probe_result_sizes`` and ``mcpeval-nb sizes`` against the result-size fixture server (real processes)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import mcpeval_nb
from mcpeval_nb import SizesOptions, UsageError, load_size_history, probe_result_sizes, read_records
from tests import waiting
from tests.probe_support import fixture, run_cli

SERVER = fixture("result_sizes")
DATA = Path(__file__).resolve().parents[1] / "data" / "xray"
CANARY_ERROR = "CANARY private error"


def calls(*entries: tuple[str, dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    return {"calls": [e if isinstance(e, dict) else {"tool": e[0], "args": e[1]} for e in entries]}


def run(doc: Any, root: Path, **options: Any) -> mcpeval_nb.ResultSizes:
    return probe_result_sizes(
        SERVER, call_manifest=doc, options=SizesOptions(server="fx", root=root, **options)
    )


def journal(root: Path) -> list[mcpeval_nb.CallRecord]:
    return [e.record for path in sorted((root / "store").glob("calls-*.jsonl")) for e in read_records(path)]


def test_known_result_sizes_are_measured_exactly(root: Path) -> None:
    sizes = run(calls(("fixed_text", {}), ("sized_text", {"chars": 2000}), ("mixed", {})), root)
    fixed, sized, mixed = sizes.calls
    # {"content":[{"text":"é"*500,"type":"text"}]}: 21 + 1000 + 18 bytes; 500 code points
    assert (fixed.outcome, fixed.text_chars, fixed.result_bytes, fixed.tokens) == ("ok", 500, 1039, 260)
    assert dict(fixed.content) == {"text": 1} and fixed.structured_bytes is None
    assert (sized.text_chars, sized.result_bytes, sized.tokens) == (2000, 2039, 510)
    assert dict(mixed.content) == {"text": 1, "image": 1, "resource_link": 1, "other": 1}
    assert mixed.structured_bytes == len('{"rows":[1,2,3]}')
    assert all(r.latency_ms is not None and r.latency_ms >= 0 for r in sizes.calls)
    assert sizes.exit_code == 0


def test_error_results_are_rows_with_reason_and_template_and_never_abort_the_rest(root: Path) -> None:
    sizes = run(calls(("tool_error", {}), ("rpc_error", {}), ("fixed_text", {})), root)
    salt = mcpeval_nb.load_salt(root)
    tool_error, rpc_error, after = sizes.calls
    assert (tool_error.outcome, tool_error.reason) == ("error", "tool-error")
    assert tool_error.template_id == mcpeval_nb.template_id(salt, CANARY_ERROR)
    assert tool_error.text_chars == len(CANARY_ERROR)  # an isError result still has a size
    assert (rpc_error.reason, rpc_error.error_code, rpc_error.result_bytes) == ("rpc-error", -32001, None)
    assert rpc_error.template_id == mcpeval_nb.template_id(salt, CANARY_ERROR)
    assert after.outcome == "ok" and sizes.totals()["errors"] == 2


def test_a_transport_crash_is_an_error_row_and_the_next_call_reconnects(root: Path) -> None:
    sizes = run(
        calls(("fixed_text", {}), ("crash", {}), ("fixed_text", {}), ("crash", {}), ("mixed", {})), root
    )
    assert [(r.outcome, r.reason) for r in sizes.calls] == [
        ("ok", None),
        ("error", "transport-closed"),
        ("ok", None),
        ("error", "transport-closed"),
        ("ok", None),
    ]
    assert sizes.calls[1].template_id is not None and sizes.calls[1].result_bytes is None


def test_every_call_is_one_synthetic_record_in_order(root: Path) -> None:
    run(
        calls(
            ("fixed_text", {}),
            ("sized_text", {"chars": 3, "note": "CANARY manifest argument"}),
            ("tool_error", {}),
            ("crash", {}),
        ),
        root,
    )
    records = journal(root)
    assert [(r.seq, r.tool, r.outcome, r.kind) for r in records] == [
        (1, "fixed_text", "ok", "synthetic"),
        (2, "sized_text", "ok", "synthetic"),
        (3, "tool_error", "error", "synthetic"),
        (4, "crash", "error", "synthetic"),
    ]
    assert records[1].args == {"chars": "num:3", "note": "str<32"}
    assert records[2].error["code"] == "tool-error"
    assert records[3].error == {"code": "transport-closed"}
    assert len({r.session for r in records}) == 1


def test_each_run_appends_one_history_point_and_never_a_readiness_trend(root: Path) -> None:
    run(calls(("fixed_text", {}), ("mixed", {})), root)
    run(
        calls(
            ("sized_text", {"chars": 10}),
        ),
        root,
    )
    points = load_size_history(root=root)
    assert [[c["tool"] for c in p.calls] for p in points] == [["fixed_text", "mixed"], ["sized_text"]]
    assert points[0].calls[0]["result_bytes"] == 1039 and points[1].server == "fx"
    table = mcpeval_nb.result_size_history(root=root)
    assert table.num_rows == 3 and table.column("run").to_pylist() == [1, 1, 2]
    assert not (root / "store" / "probes" / "history.jsonl").exists()


def test_no_history_and_no_journal_write_nothing(root: Path) -> None:
    run(
        calls(
            ("fixed_text", {}),
        ),
        root,
        history=False,
        journal=False,
    )
    assert load_size_history(root=root) == [] and journal(root) == []


def test_the_json_document_matches_its_published_schema(root: Path) -> None:
    sizes = run(
        calls(("fixed_text", {}), ("mixed", {}), ("tool_error", {}), ("rpc_error", {}), ("crash", {})), root
    )
    doc = json.loads(sizes.render("json"))
    schema = json.loads(mcpeval_nb.sizes_schema_text("result-sizes"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema)
    assert doc["schema"] == "mcpeval-nb.result-sizes/v1" and doc["totals"]["calls"] == 5


def test_text_and_markdown_render_the_per_call_table(root: Path) -> None:
    sizes = run(calls(("fixed_text", {}), ("crash", {})), root)
    text, markdown = sizes.render("text"), sizes.render("markdown")
    assert text.startswith("Result sizes (per call): fx\n") and "error:transport-closed" in text
    assert "| 1 | `fixed_text` | ok | 500 | 1039 | 260 | text:1 | - |" in markdown
    with pytest.raises(UsageError):
        sizes.render("sarif")


def test_the_mcp_xray_example_runs_unchanged(root: Path) -> None:
    sizes = run(DATA / "safe.yaml", root)
    assert [(r.tool, r.outcome) for r in sizes.calls] == [("list_labels", "ok"), ("get_table_details", "ok")]
    assert sizes.calls[1].structured_bytes == len('{"columns":["id","total"]}')


@pytest.mark.parametrize(
    ("entry", "allow", "message"),
    [
        ({"tool": "wipe", "args": {}}, False, "calls entry #2: refuses a tool annotated as a writer"),
        ({"tool": "wipe", "args": {}}, True, "calls entry #2: refuses a tool annotated as a writer"),
        (
            {"tool": "wipe", "args": {}, "access": "mutating", "sandbox": "fixture"},
            False,
            "mutating calls require --allow-mutation",
        ),
        (
            {"tool": "no_such_tool", "args": {}},
            True,
            "calls entry #2: the tool was not declared by the server",
        ),
    ],
)
def test_refusals_come_before_any_call(root: Path, entry: dict[str, Any], allow: bool, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        run(calls(("fixed_text", {}), entry), root, allow_mutation=allow)
    assert journal(root) == [] and load_size_history(root=root) == []


def test_a_writer_is_called_with_both_controls(root: Path) -> None:
    entry = {"tool": "wipe", "args": {}, "access": "mutating", "sandbox": "fixture"}
    sizes = run(calls(entry), root, allow_mutation=True)
    assert sizes.calls[0].outcome == "ok" and sizes.calls[0].access == "mutating"


def test_an_oversized_manifest_is_refused_before_the_server_starts(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(calls(("fixed_text", {"pad": "x" * (1024 * 1024)}))))
    with pytest.raises(mcpeval_nb.ManifestError, match="exceeds 1 MiB"):
        probe_result_sizes(["/nonexistent/server"], call_manifest=path, options=SizesOptions(server="fx"))


def test_an_unreachable_server_gives_transport_rows_and_exit_3(root: Path) -> None:
    sizes = probe_result_sizes(
        ["/nonexistent/server"],
        call_manifest=calls(("a", {}), ("b", {})),
        options=SizesOptions(server="fx", root=root),
    )
    assert [r.reason for r in sizes.calls] == ["transport-error", "transport-error"]
    assert sizes.exit_code == 3


def test_an_invalid_label_is_a_usage_error(root: Path) -> None:
    with pytest.raises(UsageError, match="server label is invalid"):
        probe_result_sizes(SERVER, call_manifest=calls(("a", {})), options=SizesOptions(server="bad label"))


def test_cli_prints_the_table_progress_and_exit_codes(root: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "calls.yaml"
    manifest.write_text("calls:\n  - tool: fixed_text\n    args: {}\n  - tool: tool_error\n    args: {}\n")
    done = run_cli("sizes", "--call-manifest", str(manifest), "--server", "fx", "--", *SERVER, root=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Result sizes (per call): fx")
    assert done.stderr.splitlines() == [
        "sizes [1/2] fixed_text ok",
        "sizes [2/2] tool_error error:tool-error",
    ]
    as_json = run_cli(
        "sizes",
        "--call-manifest",
        str(manifest),
        "--server",
        "fx",
        "--format",
        "json",
        "--no-history",
        "--",
        *SERVER,
        root=root,
    )
    assert json.loads(as_json.stdout)["calls"][0]["result_bytes"] == 1039
    manifest.write_text("calls:\n  - tool: wipe\n    args: {}\n")
    refused = run_cli("sizes", "--call-manifest", str(manifest), "--server", "fx", "--", *SERVER, root=root)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("mcpeval-nb: calls entry #1: refuses a tool annotated as a writer")
    assert len(refused.stderr.splitlines()) == 1


def test_cli_schemas_are_the_shipped_files() -> None:
    for name in ("calls", "capture", "result-sizes"):
        done = waiting.run(
            [sys.executable, "-m", "mcpeval_nb", "schema", name], capture_output=True, text=True, stall_s=60
        )
        assert done.returncode == 0 and json.loads(done.stdout)["$id"].endswith(f"/{name}.schema.json")


@pytest.fixture
def sizes_http() -> Iterator[str]:
    proc = subprocess.Popen(fixture("result_sizes", "http"), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)


def test_sizes_run_over_streamable_http(root: Path, sizes_http: str) -> None:
    assert sizes_http.startswith("http://127.0.0.1:")
    sizes = probe_result_sizes(
        sizes_http,
        call_manifest=calls(("fixed_text", {}), ("tool_error", {})),
        options=SizesOptions(server="fx", root=root),
    )
    assert [(r.outcome, r.result_bytes) for r in sizes.calls] == [("ok", 1039), ("error", 74)]
    done = run_cli(
        "sizes",
        "--call-manifest",
        str(DATA / "safe.yaml"),
        "--server",
        "fx",
        "--url",
        sizes_http,
        "--format",
        "json",
        root=root,
    )
    assert done.returncode == 0, done.stderr
    assert [c["tool"] for c in json.loads(done.stdout)["calls"]] == ["list_labels", "get_table_details"]
