"""The official conformance suite's results and baseline, read and judged, for one CI report.

``@modelcontextprotocol/conformance`` (npm) saves each scenario's checks as ``checks.json`` in a result
directory (``<out>/server-<scenario>-<timestamp>/`` for server scenarios, ``<out>/<scenario>-<timestamp>/``
for client ones) and takes a baseline of expected failures (``--expected-failures``, YAML: ``server:``
and ``client:`` lists of ``<scenario>`` or ``<scenario>:<check-id>``).  It prints a terminal report
only; ``read_conformance_results`` and ``load_conformance_baseline`` read both, and
``judge_conformance`` applies the suite's own rules:

- a whole-scenario entry: the scenario failing is expected, passing makes the entry stale;
- a per-check entry: each failing check of the scenario (duplicates collapsed, most severe first) is
  expected when named, unexpected otherwise; a named check that passed is stale; absent or skipped is
  tolerated;
- no entry: a failing check (``FAILURE`` or ``WARNING``) is an unexpected failure.

Exit 0 when there is no unexpected failure and no stale entry, else 1 (the suite's rule).  The result is
rendered as text, JSON (``mcpeval-nb.conformance/v1``), JUnit (a test case per scenario and check) or
SARIF (a result per unexpected failure, stale entry and expected failure).  Only the suite's check ids,
statuses and scenario names are read: a check's details, error message and logs (which can quote what a
server sent) are never read into anything printed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..errors import DocumentError
from ..jsonfmt import JSONFormatError, loads
from ..junit import JUnitCase, JUnitSuite, render_junit
from .render import Format, FormatSet, json_text, lines_text, render
from .sarif import SARIF_SCHEMA

__all__ = ["CONFORMANCE_SCHEMA", "Conformance", "ConformanceBaseline", "SuiteCheck", "SuiteScenario",
           "judge_conformance", "load_conformance_baseline", "read_conformance_results"]

CONFORMANCE_SCHEMA = "mcpeval-nb.conformance/v1"
STATUSES = ("SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO")
_FAILED = ("FAILURE", "WARNING")
_SEVERITY = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}")
#: A check id: a scenario name's characters and ``$`` (the suite's ``json-schema-2020-12-$defs``).
_CHECK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/$-]{0,127}")
_STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
_MAX_FILE = 16 * 1024 * 1024
_MAX_BASELINE = 1024 * 1024


@dataclass(frozen=True)
class SuiteCheck:
    """One check of a scenario: the suite's id and its status (``STATUSES``)."""

    id: str
    status: str


@dataclass(frozen=True)
class SuiteScenario:
    """One scenario's checks, duplicates collapsed (the most severe occurrence kept; INFO dropped).

    Attributes:
        mode: ``server`` or ``client``. scenario: the scenario name. checks: its checks in order.
    """

    mode: str
    scenario: str
    checks: tuple[SuiteCheck, ...]

    @property
    def failed(self) -> bool:
        """A check failed or warned."""
        return any(c.status in _FAILED for c in self.checks)

    def status(self, check_id: str) -> str | None:
        """The collapsed status of a check id, or None when the scenario did not emit it."""
        return next((c.status for c in self.checks if c.id == check_id), None)


@dataclass(frozen=True)
class ConformanceBaseline:
    """Expected failures: per mode, ``(scenario, check id or None)`` entries."""

    server: tuple[tuple[str, str | None], ...] = ()
    client: tuple[tuple[str, str | None], ...] = ()

    def entries(self, mode: str) -> tuple[tuple[str, str | None], ...]:
        """The entries of ``server`` or ``client``."""
        return self.server if mode == "server" else self.client


def _collapse(raw: Iterable[SuiteCheck]) -> tuple[SuiteCheck, ...]:
    kept: dict[str, SuiteCheck] = {}
    for check in raw:
        if check.status == "INFO":
            continue
        current = kept.get(check.id)
        if current is None or _SEVERITY.get(check.status, 0) >= _SEVERITY.get(current.status, 0):
            kept.pop(check.id, None)
            kept[check.id] = check
    return tuple(kept.values())


def _checks(path: Path) -> tuple[SuiteCheck, ...]:
    try:
        data = path.read_bytes()[:_MAX_FILE + 1]
    except OSError:
        raise DocumentError(f"{path}: cannot be read") from None
    if len(data) > _MAX_FILE:
        raise DocumentError(f"{path}: larger than 16 MiB")
    try:
        doc = loads(data)
    except (JSONFormatError, UnicodeDecodeError):
        raise DocumentError(f"{path}: not valid JSON") from None
    if not isinstance(doc, list):
        raise DocumentError(f"{path}: not a conformance checks.json (an array of checks)")
    out = []
    for i, item in enumerate(doc, start=1):
        check_id = item.get("id") if isinstance(item, dict) else None
        status = item.get("status") if isinstance(item, dict) else None
        if not (isinstance(check_id, str) and _CHECK.fullmatch(check_id) and status in STATUSES):
            raise DocumentError(f"{path}: check {i} has no valid id or status")
        out.append(SuiteCheck(check_id, status))
    return _collapse(out)


def _scenario(result_dir: Path, base: Path) -> tuple[str, str]:
    rel = result_dir.relative_to(base).as_posix() if result_dir != base else result_dir.name
    name = _STAMP.sub("", rel)
    mode = "server" if name.startswith("server-") else "client"
    name = name.removeprefix("server-")
    if not _NAME.fullmatch(name):
        raise DocumentError(f"{result_dir}: not a conformance result directory name")
    return mode, name


def read_conformance_results(path: str | Path) -> tuple[SuiteScenario, ...]:
    """Every scenario result under ``path`` (a ``-o`` output directory, or one result directory).

    Raises:
        DocumentError: no ``checks.json`` found, or one that is not the suite's (named, never quoted).
    """
    base = Path(path)
    found = sorted(base.rglob("checks.json")) if base.is_dir() else []
    if not found:
        raise DocumentError(f"{base}: no conformance checks.json found (run the suite with -o {base})")
    scenarios = []
    for checks in found:
        mode, name = _scenario(checks.parent, base)
        scenarios.append(SuiteScenario(mode, name, _checks(checks)))
    return tuple(sorted(scenarios, key=lambda s: (s.mode, s.scenario)))


def _entries(raw: Any, section: str, where: str) -> tuple[tuple[str, str | None], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise DocumentError(f"{where}: '{section}' must be a list of scenario names")
    out: list[tuple[str, str | None]] = []
    for i, entry in enumerate(raw, start=1):
        if not isinstance(entry, str) or not entry:
            raise DocumentError(f"{where}: '{section}' entry {i} is not '<scenario>' or "
                                "'<scenario>:<check-id>' (a mapping means a space after the colon)")
        scenario, sep, check = entry.partition(":")
        if sep and (not scenario or not check):
            raise DocumentError(f"{where}: '{section}' entry {i} needs both sides of the colon")
        if not _NAME.fullmatch(scenario) or (check and not _CHECK.fullmatch(check)):
            raise DocumentError(f"{where}: '{section}' entry {i} is not a scenario or check name")
        out.append((scenario, check or None))
    wholesale = {s for s, c in out if c is None}
    if any(c is not None and s in wholesale for s, c in out):
        raise DocumentError(f"{where}: '{section}' lists a scenario both wholesale and per check")
    return tuple(out)


def load_conformance_baseline(path: str | Path) -> ConformanceBaseline:
    """Read an expected-failures YAML file (the suite's ``--expected-failures``).

    Raises:
        DocumentError: unreadable, larger than 1 MiB, not YAML, or an entry outside the grammar (named
            by its section and position, never quoted).
    """
    import yaml

    where = str(path)
    try:
        data = Path(path).read_bytes()[:_MAX_BASELINE + 1]
    except OSError:
        raise DocumentError(f"{where}: cannot be read") from None
    if len(data) > _MAX_BASELINE:
        raise DocumentError(f"{where}: larger than 1 MiB")
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError:
        raise DocumentError(f"{where}: not valid YAML") from None
    if doc is None:
        return ConformanceBaseline()
    if not isinstance(doc, dict):
        raise DocumentError(f"{where}: expected an object with 'server' and/or 'client' lists")
    return ConformanceBaseline(_entries(doc.get("server"), "server", where),
                    _entries(doc.get("client"), "client", where))


#: A judged check: ``passed``, ``failed`` (unexpected), ``expected`` (in the baseline), ``stale`` (baselined
#: but passing), ``skipped``.
VERDICTS = ("passed", "failed", "expected", "stale", "skipped")


def _judge_scenario(s: SuiteScenario, entries: tuple[tuple[str, str | None], ...]) -> list[tuple[str, str]]:
    whole = (s.scenario, None) in entries
    named = {c for sc, c in entries if sc == s.scenario and c is not None}
    out = []
    for check in s.checks:
        failed, listed = check.status in _FAILED, whole or check.id in named
        if check.status == "SKIPPED":
            verdict = "skipped"
        elif failed:
            verdict = "expected" if listed else "failed"
        else:
            verdict = "stale" if check.id in named else "passed"
        out.append((check.id, verdict))
    if whole and not s.failed:
        out.append(("(scenario)", "stale"))
    return out


@dataclass(frozen=True)
class Conformance:
    """The suite's results judged against a baseline: per scenario, each check's verdict."""

    FORMATS: ClassVar[FormatSet[Conformance]] = FormatSet(
        (Format("text", lambda c, _: c.render_text()), Format("json", lambda c, _: json_text(c.to_json())),
         Format("junit", lambda c, _: render_junit(c.junit_suites(), name="mcpeval-nb conformance")),
         Format("sarif", lambda c, _: json_text(c.sarif()))),
        unknown="unknown conformance format; use one of text, json, junit, sarif")

    scenarios: tuple[tuple[SuiteScenario, tuple[tuple[str, str], ...]], ...]

    def count(self, verdict: str) -> int:
        """How many checks have ``verdict``."""
        return sum(v == verdict for _, judged in self.scenarios for _, v in judged)

    @property
    def exit_code(self) -> int:
        """0 when nothing failed unexpectedly and no baseline entry is stale, else 1."""
        return 1 if self.count("failed") or self.count("stale") else 0

    def to_json(self) -> dict[str, Any]:
        """``mcpeval-nb.conformance/v1``: counts and every scenario's judged checks."""
        return {"counts": {v: self.count(v) for v in VERDICTS}, "exit_code": self.exit_code,
                "scenarios": [{"checks": [{"id": cid, "verdict": v} for cid, v in judged], "mode": s.mode,
                               "scenario": s.scenario} for s, judged in self.scenarios],
                "schema": CONFORMANCE_SCHEMA}

    def render(self, fmt: str = "text") -> str:
        """Render in text, json, junit or sarif.

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)

    def render_text(self) -> str:
        """One line per scenario, one per check that is not a plain pass, then the totals."""
        lines = []
        for s, judged in self.scenarios:
            bad = [(cid, v) for cid, v in judged if v != "passed"]
            lines.append(f"{s.mode} {s.scenario}: {len(judged) - len(bad)}/{len(judged)} passed")
            lines += [f"  {v} {cid}" for cid, v in bad]
        counts = " ".join(f"{v}={self.count(v)}" for v in VERDICTS)
        lines.append(f"conformance: {counts}")
        return lines_text(lines)

    def junit_suites(self) -> tuple[JUnitSuite, ...]:
        """A suite per scenario, a case per check (expected failures and skipped checks are ``skipped``)."""
        status = {"passed": "passed", "failed": "failure", "stale": "failure", "expected": "skipped",
                  "skipped": "skipped"}
        message = {"failed": "unexpected failure", "stale": "stale baseline entry: it passes now",
                   "expected": "expected failure (baseline)", "skipped": "skipped by the suite"}
        return tuple(JUnitSuite(f"{s.mode} {s.scenario}", tuple(
            JUnitCase(cid, f"conformance.{s.mode}.{s.scenario}", status[v], message=message.get(v),
                      type=v if v in ("failed", "stale") else None) for cid, v in judged))
            for s, judged in self.scenarios)

    def sarif(self) -> dict[str, Any]:
        """A SARIF 2.1.0 log: an ``error`` per unexpected failure, a ``warning`` per stale entry, a
        ``note`` per expected failure; rules are the check ids."""
        level = {"failed": "error", "stale": "warning", "expected": "note"}
        flagged = [(s, cid, v) for s, judged in self.scenarios for cid, v in judged if v in level]
        results = [{"ruleId": cid, "level": level[v],
                    "message": {"text": f"{s.mode} {s.scenario}: {cid} {v}"}} for s, cid, v in flagged]
        rules = [{"id": rid, "shortDescription": {"text": f"conformance check {rid}"}}
                 for rid in sorted({cid for _, cid, _ in flagged})]
        driver = {"name": "mcpeval-nb conformance", "rules": rules,
                  "informationUri": "https://github.com/modelcontextprotocol/conformance"}
        return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
                "runs": [{"tool": {"driver": driver}, "results": results,
                          "properties": {"exit_code": self.exit_code}}]}


def judge_conformance(scenarios: tuple[SuiteScenario, ...],
                      baseline: ConformanceBaseline | None = None) -> Conformance:
    """Judge the suite's results against a baseline (none: every failure is unexpected).

    Returns:
        The judged results (``exit_code`` 0 or 1, as the suite's own).
    """
    chosen = baseline or ConformanceBaseline()
    return Conformance(tuple((s, tuple(_judge_scenario(s, chosen.entries(s.mode)))) for s in scenarios))
