"""Catalog records: what a listing becomes (digests, skeleton, hints, flags), the read rules, the watcher."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpeval_nb import append_record, read_records
from mcpeval_nb.capture import Correlator
from mcpeval_nb.journal import encode_line
from mcpeval_nb.privacy.catalog import CatalogRecord, CatalogTool, catalog_tool, tool_tokens
from mcpeval_nb.privacy.catalog_schema import schema_depth, skeleton_of, skeleton_size, valid_label
from mcpeval_nb.privacy.fingerprint import content_digest
from mcpeval_nb.testing.servers.catalog_drift import CANARY, VARIANTS

SALT = bytes(range(32))
OTHER_SALT = bytes(range(1, 33))


def _entry(**extra: Any) -> dict[str, Any]:
    base = {"name": "get_item", "description": f"Fetch an item. {CANARY}",
            "inputSchema": {"type": "object", "properties": {"item_id": {"type": "string",
                                                                         "description": CANARY}},
                            "required": ["item_id"]},
            "annotations": {"readOnlyHint": True, "title": CANARY}}
    return {**base, **extra}


def test_a_tool_keeps_labels_digests_counts_and_a_skeleton_and_never_its_text() -> None:
    tool = catalog_tool(_entry(icons=[{"src": f"https://{CANARY}.example/icon.png"}]), SALT)
    assert tool.name == "get_item" and tool.desc_bucket == "str<128" and tool.icons == 1
    assert tool.hints == {"readOnlyHint": True, "destructiveHint": None, "idempotentHint": None,
                          "openWorldHint": None}
    assert tool.skeleton == {"type": ["object"], "properties": {"item_id": {"type": ["string"]}},
                             "required": ["item_id"]}
    assert tool.depth == 1 and tool.tokens == tool_tokens(_entry(icons=[{"src": f"https://{CANARY}"
                                                                                ".example/icon.png"}]))
    assert tool.desc_digest == content_digest(SALT, "description", f"Fetch an item. {CANARY}")
    assert all(len(d or "") == 16 for d in (tool.def_digest, tool.schema_digest, tool.annotations_digest))
    assert CANARY not in json.dumps(tool.to_dict())


def test_digests_use_the_salt_so_two_roots_cannot_be_compared() -> None:
    assert catalog_tool(_entry(), SALT).def_digest != catalog_tool(_entry(), OTHER_SALT).def_digest
    assert catalog_tool(_entry(), SALT).desc_digest != catalog_tool(_entry(), OTHER_SALT).desc_digest


def test_the_definition_digest_ignores_the_name_so_a_rename_keeps_it() -> None:
    first, renamed = catalog_tool(_entry(), SALT), catalog_tool(_entry(name="fetch_item"), SALT)
    assert first.def_digest == renamed.def_digest and renamed.name == "fetch_item"
    assert catalog_tool(_entry(title="x"), SALT).def_digest != first.def_digest


def test_a_name_outside_the_grammar_is_recorded_as_unlisted() -> None:
    assert catalog_tool(_entry(name=f"bad name {CANARY}"), SALT).name == "unlisted"
    assert catalog_tool(_entry(name=7), SALT).name == "unlisted"


def test_absent_parts_are_null_not_guessed() -> None:
    tool = catalog_tool({"name": "bare"}, SALT)
    absent = (tool.desc_digest, tool.schema_digest, tool.annotations_digest, tool.desc_bucket, tool.skeleton)
    assert absent == (None, None, None, None, None)
    assert tool.def_digest is not None and tool.depth == 0


def test_the_skeleton_keeps_keys_types_required_and_admitted_enums_in_schema_order() -> None:
    schema = {"type": "object", "properties": {
        "zeta": {"type": ["string", "null"], "enum": ["fast", "slow", f"{CANARY} spaced", 3]},
        "alpha": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        f"{CANARY} key": {"type": "string"}, "password": {"type": "string"},
        "choice": {"anyOf": [{"type": "string"}, {"type": "number", "description": CANARY}]}},
        "required": ["zeta", f"{CANARY} key"], "description": CANARY, "$defs": {"x": {"type": "string"}}}
    skeleton = skeleton_of(schema)
    assert skeleton is not None
    assert list(skeleton["properties"]) == ["zeta", "alpha", "choice"]
    assert skeleton["properties"]["zeta"] == {"type": ["string", "null"], "enum": ["fast", "slow"],
                                              "dropped": 1}
    assert skeleton["properties"]["alpha"]["items"]["properties"] == {"n": {"type": ["integer"]}}
    assert skeleton["properties"]["choice"] == {"anyOf": [{"type": ["string"]}, {"type": ["number"]}]}
    assert skeleton["required"] == ["zeta"] and skeleton["dropped"] == 3
    assert CANARY not in json.dumps(skeleton) and "password" not in json.dumps(skeleton)
    assert skeleton_of(skeleton) == skeleton  # the read rule is the same function: idempotent
    assert schema_depth(schema) == 3 and skeleton_size(skeleton) == 4


def test_labels_follow_the_tool_grammar_and_never_a_word_the_redaction_check_flags() -> None:
    assert valid_label("waitUntil") and valid_label("a.b:c-d_1")
    assert not valid_label("has space") and not valid_label("x/y") and not valid_label("user_Password")
    assert not valid_label("x" * 129) and not valid_label("")


def test_a_deep_or_huge_schema_is_cut_and_counted_never_unbounded() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        deep = {"type": "object", "properties": {"n": deep}}
    skeleton = skeleton_of(deep)
    assert schema_depth(deep) == 40
    text = json.dumps(skeleton)
    assert text.count('"properties"') == 16 and '"dropped": 1' in text
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5000)}}
    kept = skeleton_of(wide)
    assert kept is not None and len([v for v in kept["properties"].values() if v]) < 2100


def test_records_round_trip_and_sanitising_is_idempotent(tmp_path: Path) -> None:
    tools = tuple(catalog_tool(e, SALT) for e in VARIANTS["v1"]())
    record = CatalogRecord(ts="2026-08-04T10:00:00.000Z", session="raw CANARY session", seq=3, server="inv",
                           complete=True, tools=tools).sanitized()
    assert record.sanitized() == record
    path = append_record(tmp_path, record)
    assert path.name == "catalogs-2026-08-04.jsonl"
    [entry] = list(read_records(path))
    assert entry.record == record
    assert encode_line(entry.record) == path.read_bytes()
    assert "CANARY" not in path.read_text()


def test_a_hand_edited_line_loses_every_text_it_smuggles(tmp_path: Path) -> None:
    marker = "CANARY-edit!"
    line = {"ts": marker, "session": marker, "seq": 1, "server": marker, "complete": marker, "extra": marker,
            "tools": [{"name": marker, "def_digest": marker, "desc_digest": "0123456789abcdef",
                       "schema_digest": None, "annotations_digest": 5, "desc_bucket": marker,
                       "skeleton": {"type": [marker, "string"],
                                    "properties": {marker: {}, "ok": {"x": marker}},
                                    "enum": [marker, "fine"], "description": marker, "dropped": marker},
                       "depth": marker, "hints": {"readOnlyHint": marker, "destructiveHint": True, marker: 1},
                       "icons": -1, "tokens": marker, "flags": [marker, "hidden-text"], marker: marker}]}
    store = tmp_path / "store"
    store.mkdir()
    (store / "catalogs-2026-08-04.jsonl").write_text(json.dumps(line) + "\n")
    [entry] = list(read_records(store / "catalogs-2026-08-04.jsonl"))
    text = entry.record.encode()
    assert marker not in text
    tool = entry.record.tools[0]
    assert (tool.name, tool.def_digest, tool.desc_digest) == ("unlisted", None, "0123456789abcdef")
    assert tool.flags == ("hidden-text",)
    assert tool.skeleton == {"type": ["string"], "properties": {"ok": {}}, "enum": ["fine"], "dropped": 2}
    assert entry.record.server == "invalid" and entry.record.complete is False


def _list(c: Correlator, id_: int, cursor: str | None, tools: list[Any], nxt: str | None = None,
          error: bool = False) -> None:
    params = {} if cursor is None else {"cursor": cursor}
    c.on_outbound(json.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/list", "params": params}))
    result: dict[str, Any] = {"tools": tools}
    if nxt is not None:
        result["nextCursor"] = nxt
    answer = {"error": {"code": -32603, "message": CANARY}} if error else {"result": result}
    c.on_inbound(json.dumps({"jsonrpc": "2.0", "id": id_, **answer}))


def test_pages_make_one_listing_and_a_missing_page_makes_it_incomplete() -> None:
    tools = VARIANTS["v1"]()
    c = Correlator(server="inv", session="s", salt=SALT)
    assert c.catalog is not None
    _list(c, 1, None, tools[:2], "p2")
    _list(c, 2, "p2", tools[2:4], "p3")
    assert c.catalog.drain() == []
    _list(c, 3, "p3", tools[4:])
    [whole] = c.catalog.drain()
    assert whole.complete and whole.seq == 1 and [t.name for t in whole.tools] == [t["name"] for t in tools]
    _list(c, 4, "never-returned", tools[:1])  # earlier pages never seen
    _list(c, 5, None, tools[:1], "q2")
    _list(c, 6, "q2", [], error=True)  # a page that failed
    _list(c, 7, None, tools[:3], "r2")  # the client never asks for page two
    mid, failed = c.catalog.drain()
    assert (mid.complete, mid.seq, failed.complete, len(failed.tools)) == (False, 4, False, 1)
    [abandoned] = c.catalog.close()
    assert abandoned.complete is False and len(abandoned.tools) == 3


def test_an_empty_listing_is_recorded_and_a_failed_first_page_is_not() -> None:
    c = Correlator(server="inv", session="s", salt=SALT)
    assert c.catalog is not None
    _list(c, 1, None, [], error=True)
    _list(c, 2, None, [])
    [empty] = c.catalog.drain()
    assert empty.complete and empty.tools == () and empty.seq == 2


def test_catalog_capture_can_be_switched_off() -> None:
    c = Correlator(server="inv", session="s", salt=SALT, catalog=False)
    _list(c, 1, None, VARIANTS["v1"]())
    assert c.catalog is None


def test_cross_tool_references_see_the_names_other_servers_listed() -> None:
    entry = {"name": "mailer", "description": "Call fetch_weather before sending."}
    assert catalog_tool(entry, SALT).flags == ()
    assert catalog_tool(entry, SALT, frozenset({"fetch_weather"})).flags == ("cross-tool-reference",)
    c = Correlator(server="inv", session="s", salt=SALT, known_names=lambda: frozenset({"fetch_weather"}))
    _list(c, 1, None, [entry])
    assert c.catalog is not None
    [record] = c.catalog.drain()
    assert record.tools[0].flags == ("cross-tool-reference",)


def test_a_listing_too_large_for_one_line_keeps_its_digests_without_skeletons() -> None:
    props = {f"{i:04d}" + "p" * 120: {"type": "string"} for i in range(1500)}  # ~200 KB of skeleton a tool
    tools = [{"name": f"tool_{i}", "inputSchema": {"type": "object", "properties": props}} for i in range(24)]
    c = Correlator(server="inv", session="s", salt=SALT)
    _list(c, 1, None, tools)
    assert c.catalog is not None
    [record] = c.catalog.drain()
    assert all(t.skeleton is None and t.schema_digest for t in record.tools)
    assert len(encode_line(record)) < 4 * 1024 * 1024


def test_a_catalog_tool_reads_back_from_its_dict() -> None:
    tool = catalog_tool(_entry(), SALT)
    assert CatalogTool.from_dict(tool.to_dict()).sanitized() == tool


def test_a_cached_tool_is_the_tool_built_afresh_and_a_read_one_is_sanitised() -> None:
    from mcpeval_nb.privacy.catalog import ToolCache

    cache = ToolCache(size=2)
    names = frozenset({"get_item"})
    first = catalog_tool(_entry(), SALT, names, cache=cache)
    assert catalog_tool(_entry(), SALT, names, cache=cache) is first  # a hit
    assert first == catalog_tool(_entry(), SALT, names)
    assert first.sanitized() is first  # built by the rules themselves
    read = CatalogTool.from_dict({**first.to_dict(), "desc_bucket": "prose!"})
    assert read.sanitized().desc_bucket is None and read.sanitized() == read.sanitized().sanitized()
    for i in range(3):
        catalog_tool(_entry(name=f"t{i}"), SALT, names, cache=cache)
    assert catalog_tool(_entry(), SALT, names, cache=cache) is not first  # evicted, built again


def test_shim_http_builds_catalog_records_in_a_helper_process(root: Path) -> None:
    from mcpeval_nb.capture.catalog_worker import CatalogWorker

    worker = CatalogWorker(root=root, server="inv", session="session:" + "ab" * 32,
                           capture_id="a06cb20e-37b2-4e72-87b2-1a2edab8bf17")
    worker.ship(seq=3, complete=True, ts="2026-08-04T10:00:00.000Z", entries=VARIANTS["v1"]())
    worker.ship(seq=9, complete=False, ts="2026-08-04T10:00:01.000Z", entries=[])
    assert worker.close() == 0
    records = [e.record for e in read_records(root / "store" / "catalogs-2026-08-04.jsonl")]
    assert [(r.seq, r.complete, len(r.tools)) for r in records] == [(3, True, 6), (9, False, 0)]
    assert records[0].identity is not None and records[0].identity.capture_id.startswith("a06cb20e")
    assert CANARY not in (root / "store" / "catalogs-2026-08-04.jsonl").read_text()


def test_a_helper_that_cannot_write_reports_the_listing_as_lost(tmp_path: Path) -> None:
    from mcpeval_nb.capture.catalog_worker import CatalogWorker

    (tmp_path / "store").write_text("not a directory")  # the journal cannot be created
    (tmp_path / ".salt").write_bytes(SALT)
    worker = CatalogWorker(root=tmp_path, server="inv", session="s", capture_id="a06cb20e-37b2-4e72-87b2-"
                                                                                   "1a2edab8bf17")
    worker.ship(seq=1, complete=True, ts="2026-08-04T10:00:00.000Z", entries=VARIANTS["v1"]())
    worker.ship(seq=2, complete=True, ts="2026-08-04T10:00:01.000Z", entries=VARIANTS["v1"]())
    assert worker.close() == 2  # each listing the helper could not journal counts


def test_a_helper_that_stops_making_progress_is_ended_and_what_it_held_counts_as_lost(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """close() waits while the helper acknowledges listings (a loaded machine may make that slow); one
    that stops acknowledging for STALL_S is ended, and the listing it never acknowledged is lost."""
    import os
    import signal

    from mcpeval_nb.capture import catalog_worker
    from tests.shim_helpers import wait_for

    monkeypatch.setattr(catalog_worker, "STALL_S", 1.0)
    worker = catalog_worker.CatalogWorker(root=root, server="inv", session="session:" + "ab" * 32,
                                          capture_id="a06cb20e-37b2-4e72-87b2-1a2edab8bf17")
    worker.ship(seq=1, complete=True, ts="2026-08-04T10:00:00.000Z", entries=VARIANTS["v1"]())
    journal = root / "store" / "catalogs-2026-08-04.jsonl"
    assert wait_for(lambda: journal.exists() and journal.read_bytes().endswith(b"\n"), 600)
    assert worker._proc is not None
    os.kill(worker._proc.pid, signal.SIGSTOP)  # a helper that never gets the core again
    worker.ship(seq=2, complete=True, ts="2026-08-04T10:00:01.000Z", entries=VARIANTS["v1"]())
    assert worker.close() == 1
    assert worker._proc.returncode == -signal.SIGKILL
    assert [e.record.seq for e in read_records(journal)] == [1]
