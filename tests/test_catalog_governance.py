"""Catalog journals under the store's rules: the redaction check passes them, share exports and
re-sanitises them, erase and retention remove them, index.db ignores them as the Rust reader does."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.privacy.catalog import CatalogRecord, catalog_tool
from mcpeval_nb.testing.servers.catalog_drift import CANARY, VARIANTS
from tests.catalog_support import calls, list_only, run_session, stdio_shim

MARKER = "CANARY-hand!"


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog-governance") / "root"
    run_session(stdio_shim(root, "inv", "v1"), calls("get_item"))
    run_session(stdio_shim(root, "inv", "v2"), list_only)
    run_session(stdio_shim(root, "weather", "poisoned"), calls("weather_now"))
    salt = me.load_salt(root)
    old = CatalogRecord(ts="2026-01-02T09:00:00.000Z", session="old-session", seq=1, server="inv",
                        complete=True, tools=tuple(catalog_tool(t, salt) for t in VARIANTS["v1"]()))
    me.append_record(root, old)  # type: ignore[arg-type]
    return root


@pytest.fixture
def root_copy(captured: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "root"
    shutil.copytree(captured, copy)
    return copy


def _catalog_lines(root: Path) -> list[dict[str, object]]:
    return [json.loads(line) for p in sorted((root / "store").glob("catalogs-*.jsonl"))
            for line in p.read_text().splitlines()]


def test_the_redaction_check_passes_catalog_journals(captured: Path) -> None:
    report = me.check_redaction(captured)
    assert report.flagged == () and any("catalogs-" in str(p) for p in report.files)
    assert len(_catalog_lines(captured)) == 4


def test_share_exports_catalog_records_that_load_as_they_were(captured: Path, tmp_path: Path) -> None:
    envelope = tmp_path / "envelope"
    result = me.export_share(captured, dest=envelope)
    assert any(f.startswith("catalogs-") for f in result.files) and result.rewritten == 0
    text = "".join(p.read_text() for p in (envelope / "store").glob("catalogs-*.jsonl"))
    assert CANARY not in text
    # share writes every object with sorted keys (SPEC 11): a skeleton's keys are sorted in the envelope,
    # the tools keep the order they were listed in
    def rows(root: Path) -> list[dict[str, object]]:
        return [{**r, "skeleton": json.loads(r["skeleton"]) if r["skeleton"] else None}
                for r in me.catalog_history(root).to_pylist()]
    assert rows(envelope) == rows(captured)


def test_share_re_sanitises_a_hand_edited_catalog_line(root_copy: Path, tmp_path: Path) -> None:
    line = {"ts": "2026-08-04T10:00:00.000Z", "session": MARKER, "seq": 1, "server": "inv", "complete": True,
            "note": MARKER, "tools": [{"name": MARKER, "def_digest": MARKER, "flags": [MARKER],
                                       "skeleton": {"properties": {MARKER: {}}, "enum": [MARKER]}}]}
    with (root_copy / "store" / "catalogs-2026-08-04.jsonl").open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    result = me.export_share(root_copy, dest=tmp_path / "envelope")
    assert result.rewritten == 1
    exported = (tmp_path / "envelope" / "store" / "catalogs-2026-08-04.jsonl").read_text()
    assert MARKER not in exported and "unlisted" in exported
    assert MARKER not in json.dumps(me.catalog_history(root_copy).to_pylist(), default=str)


def test_erase_removes_a_session_s_or_a_server_s_catalog_records(root_copy: Path) -> None:
    sessions = [r["session"] for r in _catalog_lines(root_copy) if r["server"] == "inv"]
    result = me.erase(root_copy, session=str(sessions[1]))
    assert result.removed["catalogs"] == 1 and result.removed["calls"] >= 1
    assert sessions[1] not in {r["session"] for r in _catalog_lines(root_copy)}
    assert "catalog record(s)" in result.lines()[0]
    result = me.erase(root_copy, server="weather")
    assert result.removed["catalogs"] == 1
    assert {r["server"] for r in _catalog_lines(root_copy)} == {"inv"}
    entries = [e for e in me.read_audit(root_copy) if e["action"] == "erase"]
    assert [e["counts"]["catalogs"] for e in entries] == [1, 1]


def test_retention_removes_old_catalog_journals(root_copy: Path) -> None:
    result = me.apply_retention(root_copy, days=30)
    assert "catalogs-2026-01-02.jsonl" in result.files
    assert result.records["catalogs"] == 1
    assert not (root_copy / "store" / "catalogs-2026-01-02.jsonl").exists()


def test_index_db_ignores_catalog_journals_and_holds_no_catalog_text(root_copy: Path) -> None:
    before = me.build_index(root_copy)
    with sqlite3.connect(root_copy / "index.db") as db:
        calls_in_index = db.execute("select count(*) from calls").fetchone()[0]
    assert calls_in_index == me.open_store(root_copy).calls.num_rows == before.calls
    assert CANARY.encode() not in (root_copy / "index.db").read_bytes()
