"""Helpers for the CI-format tests: the CLI in process, fixture servers by path, JUnit checked against
the schema CI servers read, and golden files (``MCPEVAL_UPDATE_GOLDEN=1`` rewrites them)."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from lxml import etree

from mcpeval_nb.cli import main
from tests.probe_support import fixture

__all__ = ["GOLDEN", "cli", "fixture", "golden", "junit", "mask", "outcomes"]

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
_XSD = etree.XMLSchema(etree.parse(str(HERE / "data" / "junit.xsd")))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``mcpeval-nb argv`` in this process: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return int(code or 0), out, err


def junit(text: str) -> ET.Element:
    """Validate ``text`` against the JUnit XML schema and parse it back.

    Raises:
        lxml.etree.DocumentInvalid: the document breaks the schema.
    """
    _XSD.assertValid(etree.fromstring(text.encode("utf-8")))
    return ET.fromstring(text)


def outcomes(root: ET.Element) -> dict[str, tuple[str, str | None]]:
    """test case name -> (status, failure/error type or skipped text) of a parsed JUnit document."""
    found: dict[str, tuple[str, str | None]] = {}
    for case in root.iter("testcase"):
        status, detail = "passed", None
        for tag in ("failure", "error", "skipped"):
            child = case.find(tag)
            if child is not None:
                status, detail = tag, child.get("type") if tag != "skipped" else child.text
        found[str(case.get("name"))] = (status, detail)
    return found


def mask(text: str) -> str:
    """Mask what varies between runs: latencies, the package version, paths of temporary dirs."""
    text = re.sub(r"(latency_ms[\"=:]\s*)\d+", r"\g<1>N", text)
    text = re.sub(r'("version": )"[^"]*"', r'\1"V"', text)
    return re.sub(r"/tmp/[^\s\"<]*/", "TMP/", text)


def golden(name: str, text: str) -> None:
    """Compare ``text`` (masked) with ``tests/golden/<name>``; rewrite it with MCPEVAL_UPDATE_GOLDEN=1."""
    path = GOLDEN / name
    masked = mask(text)
    if os.environ.get("MCPEVAL_UPDATE_GOLDEN") == "1":
        path.write_text(masked, encoding="utf-8")
    assert path.exists(), f"no golden file {name}: run with MCPEVAL_UPDATE_GOLDEN=1 and review it"
    assert masked == path.read_text(encoding="utf-8")
