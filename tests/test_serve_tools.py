"""serve's tools through the real ``mcp`` SDK client over Streamable HTTP: initialize, the tool lists,
every read tool's happy path against a root with promoted findings and a trend history, annotations,
and every error path (a JSON-RPC error with the tool layer's message, nothing written)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpeval_nb as me
from tests.serve_support import annotations, call, sdk, sdk_call, sdk_error, seed_call, seeded_root, serving

READ = ["list_findings", "get_finding", "get_readiness_trends", "record_annotation", "get_catalog_status"]
ALL = ["list_findings", "get_finding", "get_readiness_trends", "run_probe", "scaffold", "score",
       "verify_finding", "record_annotation", "get_catalog_status"]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seeded_root(tmp_path_factory.mktemp("serve") / "root")


@pytest.fixture
def server(seeded: Path) -> Iterator[me.FindingsServer]:
    with serving(seeded) as running:
        yield running


def _tools(url: str) -> list[dict[str, Any]]:
    async def work(client: Any) -> list[dict[str, Any]]:
        listed = await client.list_tools()
        return [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
    return sdk(url, work)


_call, _error = sdk_call, sdk_error


@pytest.mark.parametrize(("mode", "expected"), [("legacy", "2025-06-18"), ("auto", "2026-07-28"),
                                               ("2026-07-28", "2026-07-28")])
def test_the_sdk_initializes_and_lists_the_read_tools_in_spec_order(server: me.FindingsServer, mode: str,
                                                                     expected: str) -> None:
    async def work(client: Any) -> Any:
        info, caps = client.server_info, client.server_capabilities  # a pinned modern client skips discover
        return client.protocol_version, info and info.name, caps and caps.tools
    version, name, tools_capability = sdk(server.url, work, mode=mode)
    assert version == expected
    if mode != "2026-07-28":
        assert name == "mcpeval-nb" and tools_capability is not None
    tools = _tools(server.url)
    assert [t["name"] for t in tools] == READ
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object" and tool["description"]
        assert tool["outputSchema"]["type"] == "object"


def test_allow_spawn_lists_the_process_launching_tools_before_record_annotation(seeded: Path) -> None:
    with serving(seeded, allow_spawn=True) as running:
        assert [t["name"] for t in _tools(running.url)] == ALL


def test_list_findings_returns_lines_and_rows_best_first(server: me.FindingsServer, seeded: Path) -> None:
    result = _call(server.url, "list_findings", {})
    rows = result.structured_content["findings"]
    expected = [f["finding_id"] for f in me.findings(seeded).to_pylist()]
    assert [r["finding_id"] for r in rows] == expected and len(rows) >= 4
    blocks = result.content[0].text.split("\n\n")
    assert len(blocks) == len(rows)
    first = rows[0]
    assert blocks[0].startswith(f"{first['finding_id']} {first['server']}/{first['tool']} state=open "
                                f"severity={first['severity']} class={first['class']} probe=none "
                                f"failures={first['failures']}/{first['calls']} sessions={first['sessions']}")
    assert " repro=" in blocks[0]


def test_list_findings_filters_by_state_and_says_when_there_are_none(server: me.FindingsServer) -> None:
    assert len(_call(server.url, "list_findings", {"state": "open"}).structured_content["findings"]) >= 4
    closed = _call(server.url, "list_findings", {"state": "closed"})
    assert closed.structured_content == {"findings": []}
    assert closed.content[0].text == "no findings; run `mcpeval index` and `mcpeval promote` first"


def test_get_finding_returns_one_line_and_its_hint(server: me.FindingsServer) -> None:
    rows = _call(server.url, "list_findings", {}).structured_content["findings"]
    one = _call(server.url, "get_finding", {"finding_id": rows[1]["finding_id"]})
    assert one.structured_content == {"finding": rows[1]}
    line, hint = one.content[0].text.split("\n")
    assert line.startswith(rows[1]["finding_id"]) and hint == f"  hint: {rows[1]['hint']}"


def test_get_readiness_trends_applies_the_delta_rules(server: me.FindingsServer) -> None:
    result = _call(server.url, "get_readiness_trends", {})
    servers = result.structured_content["servers"]
    assert [s["server"] for s in servers] == ["alpha", "beta"]
    assert [p["delta"] for p in servers[0]["points"]] == [None, "+5", "+0"]
    assert [p["score"] for p in servers[0]["points"]] == [70, 75, 75]
    assert servers[1]["points"][0]["standard"] is None
    assert result.content[0].text == me.trends_text(root=server.config.root, last=10).rstrip("\n")


def test_trends_keep_the_newest_ten_per_server(root: Path) -> None:
    for i in range(12):
        me.record_trend(me.TrendPoint(ts=f"2026-08-01T00:00:{i:02d}.000Z", server="many", passed=True,
                                      cases_total=1, cases_passed=1, score=i), root=root)
    with serving(root) as running:
        points = _call(running.url, "get_readiness_trends", {}).structured_content["servers"][0]["points"]
    assert [p["score"] for p in points] == list(range(2, 12))


def test_an_empty_root_answers_no_findings_and_no_history(root: Path) -> None:
    with serving(root) as running:
        assert _call(running.url, "list_findings", {}).content[0].text.startswith("no findings;")
        assert _error(running.url, "get_finding", {"finding_id": "finding-0123456789abcdef"}) == \
            "no such finding"
        trends = _call(running.url, "get_readiness_trends", {})
    assert trends.structured_content == {"servers": []}
    assert trends.content[0].text == "no trend history yet; run `mcpeval probe` first"


def test_record_annotation_writes_through_the_annotate_writer(root: Path) -> None:
    seed_call(root, "raw-session", 3)
    with serving(root) as running:
        result = _call(running.url, "record_annotation",
                       {"session": "raw-session", "seq": 3, "kind": "false-success",
                        "note": "said ok, was not"})
    token = me.opaque_session("raw-session")
    assert result.content[0].text == f"recorded false-success annotation for {token} seq 3"
    assert result.structured_content == {"kind": "false-success", "session": token, "seq": 3}
    (line,) = annotations(root)
    stored = json.loads(line)
    assert (stored["session"], stored["seq"], stored["kind"], stored["note"]) == (token, 3, "false-success",
                                                                                 "said ok, was not")


@pytest.mark.parametrize(("arguments", "message"), [
    ({"session": "s", "seq": 1, "kind": "nonsense", "note": "n"},
     "record_annotation: argument kind is invalid (enum)"),
    ({"session": "s", "seq": -1, "kind": "workaround", "note": "n"},
     "record_annotation: argument seq is invalid (minimum)"),
    ({"session": "s", "seq": "1", "kind": "workaround", "note": "n"},
     "record_annotation: argument seq is invalid (type)"),
    ({"session": "s", "seq": 1, "kind": "workaround", "note": "x" * 241},
     "record_annotation: argument note is invalid (maxLength)"),
    ({"session": "s", "seq": 1, "kind": "workaround", "note": "a\nb"},
     "note must not contain control characters or newlines"),
    ({"session": "s", "seq": 1, "kind": "workaround"}, "record_annotation: missing required argument note"),
    ({"session": "s", "seq": 1, "kind": "workaround", "note": "n", "extra": 1},
     "record_annotation: unknown argument (accepted: session, seq, kind, note)"),
])
def test_invalid_annotations_are_refused_and_nothing_is_written(root: Path, arguments: dict[str, Any],
                                                                message: str) -> None:
    seed_call(root, "s", 1)
    with serving(root) as running:
        assert _error(running.url, "record_annotation", arguments) == message
    assert annotations(root) == []


def test_read_tool_errors(server: me.FindingsServer) -> None:
    assert _error(server.url, "get_finding", {"finding_id": "finding-0123456789abcdef"}) == "no such finding"
    assert _error(server.url, "get_finding", {"finding_id": "nope"}) == \
        "get_finding: argument finding_id is invalid (pattern)"
    assert _error(server.url, "get_finding", {}) == "get_finding: missing required argument finding_id"
    assert _error(server.url, "list_findings", {"state": "sideways"}) == \
        "list_findings: argument state is invalid (enum)"
    assert _error(server.url, "get_readiness_trends", {"last": 3}) == \
        "get_readiness_trends: unknown argument (accepted: none)"


def test_unknown_tools_and_non_object_arguments_are_jsonrpc_errors(server: me.FindingsServer) -> None:
    assert call(server.address, "no_such_tool", {})["error"] == {"code": -32000,
                                                                 "message": "unknown tool no_such_tool"}
    assert call(server.address, "bad tool!", {})["error"]["message"] == "unknown tool"
    reply = call(server.address, "list_findings", [1, 2])  # type: ignore[arg-type]
    assert reply["error"] == {"code": -32000, "message": "list_findings: arguments must be an object"}


@pytest.mark.parametrize("name", ["run_probe", "scaffold", "score", "verify_finding"])
def test_spawn_tools_without_the_flag_answer_the_disabled_message(server: me.FindingsServer,
                                                                  name: str) -> None:
    assert call(server.address, name, {"command": ["true"]})["error"] == {
        "code": -32000,
        "message": f"{name} launches server processes and is disabled; restart `mcpeval serve` with "
                   "--allow-spawn to enable it"}


def test_a_corrupt_index_is_an_error_not_an_empty_list(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "index.db").write_bytes(b"not a database" * 100)
    with serving(root) as running:
        message = _error(running.url, "list_findings", {})
    assert "index database" in message and "mcpeval-nb index" in message
