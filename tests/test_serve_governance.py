"""serve and governance wired together (issues 14 and 16): every writing or spawning tool call is in
the audit log, refused ones too, never with content; a configured retention runs once when serve starts
(then hourly, on its own thread) and --print-config says so."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import mcpeval_nb as me
from tests.review_support import append_raw, call, run_cli_process
from tests.serve_support import sdk_call, sdk_error, seed_call, serving
from tests.waiting import until

CANARY = "zq7servaudit"


_call, _refused = sdk_call, sdk_error


def test_annotations_and_refusals_through_serve_are_audited_without_content(root: Path) -> None:
    root.mkdir(parents=True)
    seed_call(root, f"{CANARY}-session", 2)
    with serving(root) as running:
        _call(running.url, "record_annotation",
              {"session": f"{CANARY}-session", "seq": 2, "kind": "workaround", "note": f"{CANARY} note"})
        _refused(running.url, "record_annotation",
                 {"session": "s", "seq": 1, "kind": "workaround", "note": "a\nb"})
        _call(running.url, "list_findings", {})  # a read: never audited
    records = me.read_audit(root)
    assert [(r["action"], r["outcome"]) for r in records] == [("record_annotation", "done"),
                                                               ("record_annotation", "refused")]
    assert all(r["labels"]["tool"] == "record_annotation" for r in records)
    assert CANARY not in (root / "audit.jsonl").read_text()


def test_a_spawn_tool_call_is_audited_as_spawn(root: Path, tmp_path: Path) -> None:
    root.mkdir(parents=True)
    manifest = json.dumps({"schema": "mcpeval.manifest/v1", "cases": [
        {"id": "w", "probe": "latency", "tool": "t", "arguments": {}, "access": "mutating",
         "sandbox": "scratch"}]})
    with serving(root, allow_spawn=True) as running:
        _refused(running.url, "run_probe", {"manifest": manifest, "command": ["true"]})
    (record,) = me.read_audit(root)
    assert (record["action"], record["outcome"], record["labels"]) == ("spawn", "refused",
                                                                       {"tool": "run_probe"})


def _old_day(days: int) -> str:
    return (dt.datetime.now(dt.UTC) - dt.timedelta(days=days)).strftime("%Y-%m-%d")


def test_a_configured_retention_runs_when_serve_starts(root: Path) -> None:
    me.append_records(root, [call(1)])
    old = root / "store" / f"calls-{_old_day(40)}.jsonl"
    append_raw(old, (root / "store").joinpath(sorted(p.name for p in (root / "store").glob("calls-*"))[0])
               .read_text())
    (root / "config.json").write_text(json.dumps({"retention_days": 30}))
    printed = run_cli_process("serve", "--listen", "127.0.0.1:0", "--print-config", root=root)
    assert printed.returncode == 0, printed.stderr
    assert "retention 30 day(s) from config.json: applied at start, then hourly" in printed.stdout
    assert old.exists()  # --print-config changes nothing
    with serving(root):
        assert until(lambda: not old.exists())  # while serve works on it (tests/waiting.py)
    assert [r["action"] for r in me.read_audit(root)] == ["retention"]


def test_without_retention_serve_deletes_nothing(root: Path) -> None:
    me.append_records(root, [call(1)])
    before = sorted(p.name for p in (root / "store").iterdir())
    printed = run_cli_process("serve", "--listen", "127.0.0.1:0", "--print-config", root=root)
    assert "retention unset: nothing is ever deleted" in printed.stdout
    with serving(root):
        pass
    assert sorted(p.name for p in (root / "store").iterdir()) == before
