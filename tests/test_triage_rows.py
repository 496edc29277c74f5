"""A finding declared once (``triage/rows.py``): the ``issues`` table SQLite holds, the rows promote
wrote read back unchanged, and every output (JSON, Arrow, serve's structured content) agrees with the
schemas derived from the declaration, on the hand-computed store of ``triage_support``."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import jsonschema
import pyarrow as pa
import pytest

import mcpeval_nb as me
from mcpeval_nb.jsonfmt import loads
from mcpeval_nb.serve.base import ToolContext
from mcpeval_nb.serve.call import call_tool
from mcpeval_nb.serve.table import SPAWN_TOOLS, TOOLS
from mcpeval_nb.triage.findings import list_findings
from mcpeval_nb.triage.index.database import INDEX_FILE, SCHEMA
from mcpeval_nb.triage.rows import (
    FIELDS,
    FINDING_JSON_SCHEMA,
    FINDINGS_SCHEMA,
    ISSUES_TABLE,
    Issue,
    insert_issues,
    select_issues,
    table_of,
)

from .triage_support import build

#: SPEC 12.2's issue fields as index.db stores them (name, type, NOT NULL); ``severity`` since
#: checkpoint version 3 (the reference tool reads it).
ISSUES = [("id", "INTEGER", 0), ("finding_id", "TEXT", 1), ("server", "TEXT", 0), ("tool", "TEXT", 0),
          ("err_code", "TEXT", 0), ("err_codes", "TEXT", 1), ("err_template_id", "TEXT", 0),
          ("failures", "INTEGER", 1), ("calls", "INTEGER", 1), ("sessions", "INTEGER", 1),
          ("last_seen", "TEXT", 0), ("last_seen_ms", "INTEGER", 1), ("cost", "REAL", 1),
          ("blast", "INTEGER", 1), ("rate", "REAL", 1), ("confidence", "REAL", 1), ("recency", "REAL", 1),
          ("score", "REAL", 1), ("threshold", "REAL", 1), ("severity", "TEXT", 1), ("class", "TEXT", 1),
          ("retryable", "INTEGER", 0),
          ("annotated", "INTEGER", 1), ("args", "TEXT", 0), ("promoted_at", "INTEGER", 1),
          ("since_ms", "INTEGER", 0), ("until_ms", "INTEGER", 0)]


@pytest.fixture(scope="module")
def promoted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rows") / "root"
    build(root)
    me.promote(root, threshold=0)
    return root


def test_index_db_holds_the_declared_issues_table(promoted: Path) -> None:
    with closing(sqlite3.connect(promoted / INDEX_FILE)) as db:
        info = db.execute("PRAGMA table_info(issues)").fetchall()
    assert [(name, kind, notnull) for _, name, kind, notnull, _, _ in info] == ISSUES
    assert ISSUES_TABLE in SCHEMA


def test_issues_read_back_as_promote_wrote_them(promoted: Path) -> None:
    with closing(sqlite3.connect(promoted / INDEX_FILE)) as db:
        stored = select_issues(db, promoted=False)
        assert len(stored) == 5 and all(isinstance(i, Issue) for i in stored)
        assert {type(i.retryable) for i in stored} <= {bool, type(None)}
        assert {type(i.annotated) for i in stored} == {bool}
        assert len(select_issues(db, promoted=True)) == 4
    with closing(sqlite3.connect(":memory:")) as copy:
        copy.execute(ISSUES_TABLE)
        insert_issues(copy, stored)
        assert select_issues(copy, promoted=False) == stored


def test_every_output_follows_the_declaration(promoted: Path) -> None:
    found = list_findings(promoted, promoted=False)
    table = table_of(found)
    assert table.schema == FINDINGS_SCHEMA
    for finding, row in zip(found, table.to_pylist(), strict=True):
        document = finding.to_json()
        assert tuple(document) == FIELDS
        jsonschema.validate(document, FINDING_JSON_SCHEMA)
        for name in ("err_code", "repro", "err_codes"):
            assert (None if row[name] is None else loads(row[name])) == document[name], name
        assert row["last_seen"] == (None if finding.last_seen is None else
                                    pa.scalar(finding.last_seen_ms, pa.timestamp("ms", tz="UTC")).as_py())
        assert row["rate_high"] == finding.rate_high and row["class"] == document["class"]


def test_the_tool_table_answers_within_its_output_schemas(promoted: Path) -> None:
    assert len({t.name for t in TOOLS}) == len(TOOLS)
    assert SPAWN_TOOLS == ("run_probe", "scaffold", "score", "verify_finding")
    assert [t.name for t in TOOLS if t.writes and not t.spawns] == ["record_annotation"]
    first = list_findings(promoted)[0].finding_id
    ctx = ToolContext(root=promoted, allow_spawn=False)
    for name, arguments in (("list_findings", {}), ("get_finding", {"finding_id": first}),
                            ("get_readiness_trends", {})):
        tool = next(t for t in TOOLS if t.name == name)
        assert tool.output is not None
        jsonschema.validate(call_tool(TOOLS, ctx, name, arguments)["structuredContent"], tool.output)


def test_each_findings_format_owns_its_empty_case(promoted: Path) -> None:
    none = me.findings_view(promoted, state="closed")
    assert none.findings == () and me.FINDINGS_FORMATS == ("agent", "md", "json")
    empty = {fmt: me.render(none, fmt) for fmt in me.FINDINGS_FORMATS}
    assert empty == {"agent": "", "md": "", "json": "[]\n"}
    assert me.render_findings(promoted, format="json", state="closed") == "[]\n"
    some = me.findings_view(promoted)
    assert me.render(some, "json") == me.render_findings(promoted, format="json")
    assert loads(me.render(some, "json")) == [f.to_json() for f in some.findings]
    assert me.render(some, "md").count("\n| `finding-") == len(some.findings) == 4
    with pytest.raises(me.UsageError, match=r"^unknown format; expected agent, md or json$"):
        me.render(some, "csv")
    with pytest.raises(me.UsageError, match=r"^unknown format 'csv'; expected agent, md or json$"):
        me.render_findings(promoted, format="csv")
