"""Pins, the CI check, serve's status and gate's catalog section, on a root captured through the real shim:
an inventory server pinned at v1 that then changed to v2, and a weather server with flagged tools."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.testing.servers.catalog_drift import VARIANTS
from tests.catalog_support import calls, list_only, run_session, stdio_shim
from tests.ci_support import cli, junit, outcomes
from tests.serve_support import sdk_call, serving

V2_CHANGES = {("export_report", "removed"), ("bulk_import", "added"), ("remove_item", "renamed"),
              ("search_items", "description-changed"), ("get_item", "schema-changed"),
              ("update_item", "annotations-changed")}
WEATHER_FLAGS = {("weather_hidden", "hidden-text"), ("weather_directive", "model-directive"),
                 ("weather_mailer", "cross-tool-reference"), ("weather_secret", "secret-request"),
                 ("weather_long", "oversized")}


@pytest.fixture(scope="module")
def pinned_then_changed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog-check") / "root"
    run_session(stdio_shim(root, "inv", "v1"), calls("search_items"))
    run_session(stdio_shim(root, "inv", "v1"), list_only)
    me.pin_catalogs(root, server="inv")
    run_session(stdio_shim(root, "inv", "v2"), list_only)
    run_session(stdio_shim(root, "weather", "poisoned"), calls("weather_now"))
    return root


def _check(root: Path, fail_on: str = "any") -> me.CatalogCheck:
    return me.check_catalogs(root, fail_on=fail_on)


def test_the_pins_file_is_owner_only_audited_and_holds_digests_and_flags(pinned_then_changed: Path) -> None:
    path = pinned_then_changed / "catalog-pins.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    doc = json.loads(path.read_text())
    assert doc["schema"] == "mcpeval-nb.catalog-pins/v1" and list(doc["servers"]) == ["inv"]
    assert sorted(doc["servers"]["inv"]["tools"]) == sorted(t["name"] for t in VARIANTS["v1"]())
    assert "CANARY" not in path.read_text()
    [entry] = [e for e in me.read_audit(pinned_then_changed) if e["action"] == "catalog_pin"]
    assert entry["labels"] == {"server": "inv"} and entry["counts"] == {"servers": 1, "tools": 6}
    assert entry["paths"] == ["catalog-pins.json"]


def test_the_check_finds_every_change_since_the_pin_the_unpinned_server_and_its_flags(
        pinned_then_changed: Path) -> None:
    check = _check(pinned_then_changed)
    found = {(r["server"], r["tool"], r["what"]) for r in check.findings()}
    assert {(t, w) for s, t, w in found if s == "inv"} == V2_CHANGES
    assert {(t, w) for s, t, w in found if s == "weather"} == {(None, "unpinned"), *WEATHER_FLAGS}
    assert check.exit_code == 1
    assert [r for s in check.status.servers for r in check.failing(s)] == [
        "catalog-drift", "catalog-unpinned", "catalog-new-flag"]


def test_fail_on_chooses_what_fails_and_pinning_again_approves(pinned_then_changed: Path,
                                                                tmp_path: Path) -> None:
    assert [r for s in _check(pinned_then_changed, "flags").status.servers
            for r in _check(pinned_then_changed, "flags").failing(s)] == ["catalog-new-flag"]
    copy = tmp_path / "root"
    shutil.copytree(pinned_then_changed, copy)
    me.pin_catalogs(copy)
    assert _check(copy).exit_code == 0
    pins = json.loads((copy / "catalog-pins.json").read_text())
    assert set(pins["servers"]["weather"]["tools"]["weather_hidden"]["flags"]) == {"hidden-text"}
    with pytest.raises(me.UsageError, match="no complete tool listing recorded for server nobody"):
        me.pin_catalogs(copy, server="nobody")


def test_the_check_cli_prints_every_format_and_exits_one(pinned_then_changed: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    base = ["catalog", "check", "--root", str(pinned_then_changed)]
    code, out, err = cli(capsys, *base)
    assert (code, err) == (1, "") and out.endswith("catalog check failed (fail on any; 2 server(s))\n")
    assert "  renamed remove_item (was delete_item)" in out and "  new flag oversized on weather_long" in out
    code, out, _ = cli(capsys, *base, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["schema"] == "mcpeval-nb.catalog-check/v1" and doc["passed"] is False
    code, out, _ = cli(capsys, *base, "--format", "junit")
    assert outcomes(junit(out)) == {"inv catalog": ("failure", "catalog-drift"),
                                    "weather catalog": ("failure", "catalog-unpinned")}
    code, out, _ = cli(capsys, *base, "--format", "sarif", "--fail-on", "drift")
    sarif = json.loads(out)
    levels = {(r["ruleId"], r["level"]) for r in sarif["runs"][0]["results"]}
    assert levels == {("catalog-drift", "error"), ("catalog-unpinned", "error"),
                      ("catalog-new-flag", "warning")}
    code, out, _ = cli(capsys, *base, "--server", "inv", "--fail-on", "flags")
    assert code == 0 and "catalog check passed" in out


def test_the_catalog_and_usage_commands_report_without_text(pinned_then_changed: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    for fmt in ("text", "json", "md"):
        code, out, _ = cli(capsys, "catalog", "--root", str(pinned_then_changed), "--format", fmt)
        assert code == 0 and "weather_secret" in out and "CANARY" not in out
        code, out, _ = cli(capsys, "usage", "--root", str(pinned_then_changed), "--format", fmt)
        assert code == 0 and "search_items" in out and "CANARY" not in out
    code, out, _ = cli(capsys, "catalog", "--root", str(pinned_then_changed), "--format", "json")
    doc = json.loads(out)
    flags = {t["tool"]: t["flags"] for t in doc["catalogs"]["weather"]["tools"]}
    assert {(t, f) for t, fl in flags.items() for f in fl} == WEATHER_FLAGS
    code, _, err = cli(capsys, "usage", "--root", str(pinned_then_changed), "--since", "yesterday")
    assert code == 2 and "--since must be a day, YYYY-MM-DD" in err


def test_serve_answers_get_catalog_status(pinned_then_changed: Path) -> None:
    with serving(pinned_then_changed) as server:
        result = sdk_call(server.url, "get_catalog_status", {"server": "inv"})
    [status] = result.structured_content["servers"]
    assert status["server"] == "inv" and status["pinned"] is True
    assert {(c["tool"], c["change"]) for c in status["changes"]} == V2_CHANGES
    assert result.content[0].text.startswith("inv pinned at ")


def test_gate_runs_the_catalog_check_from_its_budgets_file(pinned_then_changed: Path, tmp_path: Path) -> None:
    budgets = tmp_path / "budgets.json"
    budgets.write_text(json.dumps({"version": 1, "budgets": [], "catalog": {"fail_on": "drift"}}))
    report = me.gate(pinned_then_changed, budgets)
    checks = {c.server: c for c in report.checks if c.limit_name == "catalog"}
    assert (checks["inv"].status, checks["weather"].status, report.exit_code) == ("fail", "fail", 1)
    assert "drift renamed remove_item" in checks["inv"].details
    budgets.write_text(json.dumps({"version": 1, "budgets": [], "catalog": {"fail_on": "sometimes"}}))
    with pytest.raises(me.DocumentError, match="/catalog/fail_on must be one of drift, flags, any"):
        me.gate(pinned_then_changed, budgets)


def test_catalog_check_offers_exactly_its_format_table() -> None:
    import click

    from mcpeval_nb.cli import cli as group

    catalog = group.get_command(click.Context(group), "catalog")
    assert isinstance(catalog, click.Group)
    check = catalog.get_command(click.Context(catalog), "check")
    assert check is not None
    option = next(p for p in check.params if p.name == "fmt")
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == me.CatalogCheck.FORMATS.names == ("text", "json", "junit", "sarif")
    with pytest.raises(me.UsageError, match="unknown catalog check format"):
        me.CatalogCheck(me.CatalogStatus(()), "any").render("xml")
