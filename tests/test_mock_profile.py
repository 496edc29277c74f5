"""The mock profile: built from a recorded store (outcomes, codes, templates, shapes, latency quantiles and
bootstrap intervals, catalog or shape-derived schemas, unknown tools), its document and read rules, the
redaction check, and the engine's deterministic draws."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.jsonfmt import dumps
from mcpeval_nb.mock.engine import MockEngine, answer
from mcpeval_nb.mock.schemas import input_schema, skeleton_from_shapes
from mcpeval_nb.schemacheck import SchemaChecker, packaged_schema
from mcpeval_nb.serve.rpc import RpcFailure
from mcpeval_nb.testing import canary_store
from tests import waiting
from tests.mock_support import CANARY, SERVER, WIDE, write_recorded


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mock-profile") / "root"
    write_recorded(root, unknown=5)
    return root


@pytest.fixture(scope="module")
def profile(recorded: Path) -> me.MockProfile:
    return me.mock_profile(recorded, server=SERVER)


def test_outcomes_codes_and_templates_are_counted_per_tool_in_catalog_order(profile: me.MockProfile) -> None:
    assert [t.name for t in profile.tools] == ["lookup", "fetch", "ping_status"]
    lookup = profile.tool("lookup")
    assert lookup is not None and lookup.calls == 200 and lookup.schema_source == "catalog"
    kinds = {(o.outcome, o.code): o.count for o in lookup.outcomes}
    assert kinds == {("ok", None): 160, ("tool-error", None): 20, ("rpc-error", -32001): 20}
    assert all(len(o.template_id or "") == 16 for o in lookup.outcomes if o.outcome != "ok")
    assert profile.calls == 605 and profile.catalog_listings == 1


def test_calls_of_tools_no_listing_carried_are_the_unknown_tool_evidence(profile: me.MockProfile) -> None:
    assert profile.unknown_tool is not None
    assert (profile.unknown_tool.outcome, profile.unknown_tool.code, profile.unknown_tool.count) == \
        ("rpc-error", -32602, 5)
    assert profile.tool("missing_tool") is None


def test_latency_quantiles_and_bootstrap_intervals_bracket_the_sample(profile: me.MockProfile) -> None:
    fetch = profile.tool("fetch")
    assert fetch is not None
    q = fetch.latency.quantiles
    assert len(q) == 101 and list(q) == sorted(q) and 0 < q[0] < q[50] < q[-1]
    for p in (fetch.latency.p50, fetch.latency.p95):
        assert p.low is not None and p.high is not None and p.value is not None
        assert p.low <= p.value <= p.high


def test_the_skeleton_rebuilds_a_schema_with_keys_types_required_and_enums(profile: me.MockProfile) -> None:
    fetch = profile.tool("fetch")
    assert fetch is not None
    schema = input_schema(fetch.skeleton)
    assert schema["type"] == "object"
    assert schema["properties"]["mode"] == {"type": "string", "enum": ["fast", "deep"]}
    assert "description" not in json.dumps(schema)


def test_without_a_catalog_the_schema_is_derived_from_shapes_and_said_so(tmp_path: Path) -> None:
    write_recorded(tmp_path / "root", catalog=False)
    profile = me.mock_profile(tmp_path / "root", server=SERVER)
    fetch = profile.tool("fetch")
    assert fetch is not None and fetch.schema_source == "shapes" and not fetch.listed
    assert input_schema(fetch.skeleton)["properties"] == {"id": {"type": "string"},
                                                          "mode": {"type": "string", "enum": ["fast"]}}
    assert input_schema(fetch.skeleton)["required"] == ["id", "mode"]


def test_shape_derived_skeletons_keep_types_enums_arrays_and_required_keys() -> None:
    skeleton = skeleton_from_shapes([
        {"n": "num:3", "e": "enum:a", "xs": {"array": 2, "items": "str<8"}},
        {"n": "num:1.5", "e": "enum:b", "flag": "bool:true"}])
    assert skeleton == {"type": ["object"], "properties": {
        "n": {"type": ["number"]}, "e": {"type": ["string"], "enum": ["a", "b"]},
        "xs": {"type": ["array"], "items": {"type": ["string"]}}, "flag": {"type": ["boolean"]}},
        "required": ["n", "e"]}


def test_the_document_follows_the_published_schema_and_round_trips(profile: me.MockProfile) -> None:
    document = profile.to_json()
    assert not list(SchemaChecker(packaged_schema("mock-profile")).iter_errors(document))
    assert me.parse_profile(profile.to_text()).to_json() == document
    assert me.parse_profile(document).outcomes.equals(profile.outcomes)


def test_schema_mock_profile_prints_the_published_schema_a_written_profile_follows(profile: me.MockProfile,
                                                                                  tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mcpeval_nb", "schema", "mock-profile"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == packaged_schema("mock-profile")
    written = json.loads(profile.write(tmp_path / "p.json").read_text(encoding="utf-8"))
    assert not list(SchemaChecker(json.loads(done.stdout)).iter_errors(written))


def test_a_written_profile_passes_the_redaction_check_of_doctor(profile: me.MockProfile,
                                                               tmp_path: Path) -> None:
    path = profile.write(tmp_path / "p.json")
    store = tmp_path / "root" / "store"
    store.mkdir(parents=True)
    (store / "profile.jsonl").write_text(dumps(me.load_profile(path).to_json(), sort_keys=True) + "\n")
    shutil.copy(path, store / "profile-pretty.jsonl")
    done = waiting.run([sys.executable, "-m", "mcpeval_nb", "doctor", "--check-redaction", "--root",
                           str(tmp_path / "root")], capture_output=True, text=True, stall_s=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "scanned 2 files" in done.stdout
    assert CANARY not in path.read_text()


def test_a_hand_edited_profile_loses_every_text_through_the_read_rules(profile: me.MockProfile) -> None:
    document = profile.to_json()
    tool = document["tools"][0]
    tool["skeleton"]["properties"]["CANARY! key"] = {"type": ["string"], "enum": ["CANARY! enum", "ok"]}
    tool["shapes"].append({"shape": {"CANARY!": "str<8"}, "calls": 3, "outcomes": []})
    tool["shapes"].append({"shape": {"q": "CANARY! value"}, "calls": 4, "outcomes": []})
    text = json.dumps(me.parse_profile(document).to_json())
    assert "CANARY!" not in text
    parsed = me.parse_profile(document).tools[0]
    assert parsed.other_shape_calls == tool["other_shape_calls"] + 3  # a key outside the label grammar
    assert parsed.shapes[-1].shape == {"q": "str<32"}  # a value that is no token is re-bucketed


@pytest.mark.parametrize(("edit", "pointer"), [
    (lambda d: d.update(schema="other/v1"), "/schema"),
    (lambda d: d["tools"][0].update(calls=-1), "/tools/0/calls"),
    (lambda d: d["tools"][0]["outcomes"][0].update(outcome="CANARY!"), "/tools/0/outcomes/0/outcome"),
    (lambda d: d.update(extra=1), "/"),
    (lambda d: d["tools"][0]["outcomes"][1].update(template_id="CANARY!"), "/tools/0/outcomes/1/template_id"),
    (lambda d: d["tools"][0].update(name="CANARY! tool"), "/tools/0/name"),
])
def test_an_invalid_profile_is_refused_naming_where_never_what(profile: me.MockProfile, edit: object,
                                                               pointer: str) -> None:
    document = json.loads(profile.to_text())
    edit(document)  # type: ignore[operator]
    with pytest.raises(me.DocumentError) as info:
        me.parse_profile(document, source="p.json")
    assert f"p.json is not a mcpeval-nb.mock-profile/v1 document: {pointer}" in str(info.value)
    assert "CANARY" not in str(info.value)


def test_a_canary_store_builds_a_profile_without_a_marker(tmp_path: Path) -> None:
    planted = canary_store(tmp_path / "root", invalid_lines=False)
    text = me.mock_profile(planted.root, server="canary-demo").to_text()
    assert not [m for m in planted.markers if m in text]


def test_the_same_seed_draws_the_same_answers_and_another_seed_others(profile: me.MockProfile) -> None:
    def answers(seed: int) -> list[str]:
        engine = MockEngine(profile, seed=seed, sleep=lambda _s: None)
        out = []
        for i in range(60):
            drawn = engine.draw(WIDE[i % 3].name, WIDE[i % 3].args[0])
            out.append(f"{drawn.outcome}/{drawn.latency_ms}/{drawn.size}")
        return out

    assert answers(3) == answers(3)
    assert answers(3) != answers(4)


def test_draws_are_counted_per_tool_so_interleaving_does_not_change_them(profile: me.MockProfile) -> None:
    one = MockEngine(profile, seed=1, sleep=lambda _s: None)
    two = MockEngine(profile, seed=1, sleep=lambda _s: None)
    first = [one.draw("lookup", {"q": "x"}) for _ in range(5)]
    second = []
    for _ in range(5):
        two.draw("fetch", {"id": "y"})
        second.append(two.draw("lookup", {"q": "x"}))
    assert first == second


def test_answers_carry_the_recorded_code_and_a_placeholder_with_the_template(profile: me.MockProfile) -> None:
    engine = MockEngine(profile, seed=0, sleep=lambda _s: None)
    seen: dict[str, object] = {}
    for _ in range(400):
        drawn = engine.draw("lookup", {"q": "x"})
        assert drawn.outcome is not None
        try:
            result = answer(drawn)
        except RpcFailure as failure:
            seen["rpc"] = (failure.code, str(failure), failure.data)
            continue
        seen["tool-error" if result.get("isError") else "ok"] = result["content"][0]["text"]
    code, message, data = seen["rpc"]  # type: ignore[misc]
    assert code == -32001 and data["template_id"] in message and "mcpeval-nb mock" in message
    assert "template " in str(seen["tool-error"]) and CANARY not in json.dumps(seen, default=str)


def test_an_unknown_tool_is_answered_as_recorded_else_with_invalid_params(profile: me.MockProfile) -> None:
    engine = MockEngine(profile, seed=0, sleep=lambda _s: None)
    assert engine.draw("nope", {}).outcome == profile.unknown_tool
    bare = me.parse_profile({**profile.to_json(), "unknown_tool": None})
    with pytest.raises(RpcFailure) as info:
        answer(MockEngine(bare, seed=0, sleep=lambda _s: None).draw("nope", {}))
    assert info.value.code == -32602


def test_bad_windows_and_labels_are_usage_errors(recorded: Path) -> None:
    with pytest.raises(me.UsageError, match="--since must be a day"):
        me.mock_profile(recorded, server=SERVER, since="yesterday")
    with pytest.raises(me.UsageError, match="server label is invalid"):
        me.mock_profile(recorded, server="bad label")
    with pytest.raises(me.UsageError, match="nothing recorded for server other"):
        me.mock_profile(recorded, server="other")
    assert me.mock_profile(recorded, server=SERVER, since="2026-08-01", until="2026-08-01").calls == 605
    with pytest.raises(me.UsageError, match="nothing recorded"):
        me.mock_profile(recorded, server=SERVER, since="2026-09-01")
