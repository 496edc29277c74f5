"""No control character from a store reaches a terminal, from any command (issue 29: ``generate``
printed recorded argument keys raw, so escape sequences, CR and LF reached the terminal)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.cli.terminal import escape
from tests.ci_support import cli

KEY = "a\x1b[2J\rb\nc\u202ed\x9b"
TS = "2026-08-04T12:00:00.000Z"
#: What may reach a terminal: newline and tab, nothing else below 0x20, no DEL, C1 or bidi controls.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _store(root: Path) -> None:
    salt = me.load_salt(root)
    error = me.error_info({"code": -32000, "message": "boom"}, salt)
    me.append_records(root, [
        me.CallRecord(ts=TS, session=s, seq=1, server="srv", method="tools/call", tool="look",
                      args={KEY: "some text"}, outcome="error", error=error, latency_ms=3)
        for s in ("s1", "s2")])
    me.promote(root, threshold=0)


def test_escape_keeps_newlines_and_tabs_and_escapes_every_other_control() -> None:
    assert escape("ok\tline\n") == "ok\tline\n"
    assert escape(KEY) == "a\\x1b[2J\\x0db\nc\\u202ed\\x9b"
    assert escape(KEY, newlines=False) == "a\\x1b[2J\\x0db\\x0ac\\u202ed\\x9b"


def test_generate_prints_recorded_keys_escaped(root: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _store(root)
    finding = me.findings(root).to_pylist()[0]["finding_id"]
    code, out, err = cli(capsys, "generate", "--root", str(root), "--finding", finding, "--output",
                         str(tmp_path / "m.json"), "--confirm-read-only")
    assert code == 0, err
    assert "\\x0db\\x0ac\\u202ed\\x9b (str<" in out  # CR, LF, bidi and C1 of the key, escaped
    assert not CONTROL.search(out.replace("\n", "")) and not CONTROL.search(err)


@pytest.mark.parametrize("argv", [["findings"], ["findings", "--format", "md"], ["summary"], ["index"],
                                  ["promote", "--threshold", "0"], ["explain"]])
def test_other_commands_print_no_control_character(root: Path, capsys: pytest.CaptureFixture[str],
                                                   argv: list[str]) -> None:
    _store(root)
    (root / "store" / "calls-2026-08-05\x1b[31m.jsonl").write_text("not a record\n", encoding="utf-8")
    extra = [] if argv == ["explain"] else ["--root", str(root)]
    code, out, err = cli(capsys, *argv, *extra)
    assert code == 0, err
    assert not CONTROL.search(out + err)
