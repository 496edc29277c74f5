"""``catalog check``: the CI gate on catalogs, in text, JSON, JUnit and SARIF (docs/catalog.md).

Every server with a recorded complete listing or a pin is judged against its pin (``catalog_status``):
a change of any listing recorded since the pinned one, or a server without a pin, is *drift*; a flag the
pin does not hold is a *new flag*.  ``fail_on`` picks what fails the check (``drift``, ``flags`` or
``any``); everything found is reported either way.  Exit 0 when nothing in scope was found, 1 otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..analysis.catalog import Source
from ..errors import UsageError
from ..junit import JUnitCase, JUnitSuite, render_junit
from ..probe.render import Format, FormatSet, json_text, lines_text, render
from .status import CatalogStatus, ServerStatus, catalog_status

__all__ = ["CHECK_FORMATS", "CHECK_SCHEMA", "FAIL_ON", "CatalogCheck", "check_catalogs"]

CHECK_SCHEMA = "mcpeval-nb.catalog-check/v1"
FAIL_ON = ("drift", "flags", "any")
_SARIF = "https://json.schemastore.org/sarif-2.1.0.json"
#: Rule id -> what it means (SARIF rules, JUnit failure bodies).
RULES = {
    "catalog-unpinned": "The server has no pinned catalog: run `mcpeval-nb catalog pin --server <label>` "
                        "once its catalog is reviewed.",
    "catalog-drift": "The server's catalog changed since it was pinned: review the change (a quiet change "
                     "is how a rug pull looks), then pin again to approve it.",
    "catalog-new-flag": "A tool carries a signal flag its pin does not hold (docs/catalog.md lists the "
                        "rules): review the tool's definition, then pin again to approve it.",
}


@dataclass(frozen=True)
class CatalogCheck:
    """The check of every server against its pin, and what fails it."""

    #: The check's format table.
    FORMATS: ClassVar[FormatSet[CatalogCheck]] = FormatSet(
        (Format("text", lambda c, _: c.render_text()), Format("json", lambda c, _: json_text(c.to_json())),
         Format("junit", lambda c, _: render_junit(c.junit_suites(), name="mcpeval-nb catalog check")),
         Format("sarif", lambda c, _: json_text(c.sarif()))),
        unknown="unknown catalog check format; use text, json, junit or sarif")

    status: CatalogStatus
    fail_on: str

    def failing(self, s: ServerStatus) -> list[str]:
        """The rule ids that fail server ``s`` under ``fail_on``."""
        rules = []
        if self.fail_on in ("drift", "any") and not s.pinned:
            rules.append("catalog-unpinned")
        if self.fail_on in ("drift", "any") and s.changes:
            rules.append("catalog-drift")
        if self.fail_on in ("flags", "any") and s.new_flags:
            rules.append("catalog-new-flag")
        return rules

    @property
    def passed(self) -> bool:
        """Nothing in scope of ``fail_on`` was found."""
        return not any(self.failing(s) for s in self.status.servers)

    @property
    def exit_code(self) -> int:
        """0 when passed, else 1."""
        return 0 if self.passed else 1

    def findings(self) -> list[dict[str, Any]]:
        """One row per finding: ``server``, ``rule``, ``tool``, ``what`` (the change kind or the flag),
        ``first_seen``."""
        rows: list[dict[str, Any]] = []
        for s in self.status.servers:
            if not s.pinned:
                rows.append({"server": s.server, "rule": "catalog-unpinned", "tool": None, "what": "unpinned",
                             "first_seen": None})
            rows += [{"server": s.server, "rule": "catalog-drift", "tool": c.tool, "what": c.change,
                      "first_seen": c.to_json()["first_seen"]} for c in s.changes]
            rows += [{"server": s.server, "rule": "catalog-new-flag", "tool": f.tool, "what": f.flag,
                      "first_seen": f.to_json()["first_seen"]} for f in s.new_flags]
        return rows

    def to_json(self) -> dict[str, Any]:
        """The ``mcpeval-nb.catalog-check/v1`` document."""
        return {"schema": CHECK_SCHEMA, "fail_on": self.fail_on, "passed": self.passed,
                "findings": self.findings(), "servers": self.status.to_json()["servers"]}

    def render(self, fmt: str = "text") -> str:
        """``text``, ``json``, ``junit`` or ``sarif``; every format ends with a newline.

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)

    def render_text(self) -> str:
        """One line per server, one per finding under it, then the verdict."""
        lines = []
        for s in self.status.servers:
            lines += s.lines()
        if not self.status.servers:
            lines.append("no catalog recorded and none pinned")
        failed = sorted({r for s in self.status.servers for r in self.failing(s)})
        lines += [f"  hint: {RULES[r]}" for r in failed]
        verdict = "passed" if self.passed else "failed"
        lines.append(f"catalog check {verdict} (fail on {self.fail_on}; "
                     f"{len(self.status.servers)} server(s))")
        return lines_text(lines)

    def junit_suites(self) -> list[JUnitSuite]:
        """One case per server: a failure names its rules and lists its findings."""
        cases = []
        for s in self.status.servers:
            rules = self.failing(s)
            name, classname = f"{s.server} catalog", f"mcpeval.catalog.{s.server}"
            if not rules:
                cases.append(JUnitCase(name, classname))
                continue
            body = "\n".join([*(RULES[r] for r in rules), *(
                f"{row['rule']} {row['tool'] or '-'} {row['what']}" for row in self.findings()
                if row["server"] == s.server)])
            cases.append(JUnitCase(name, classname, "failure", message=rules[0], type=rules[0], text=body))
        return [JUnitSuite("catalog", tuple(cases), (("fail_on", self.fail_on),))]

    def sarif(self) -> dict[str, Any]:
        """A SARIF 2.1.0 log: one result per finding, located at the server and tool (logical)."""
        scope = {"drift": ("catalog-unpinned", "catalog-drift"), "flags": ("catalog-new-flag",)}
        failing = set(RULES) if self.fail_on == "any" else set(scope[self.fail_on])
        results = []
        for row in self.findings():
            where = row["server"] if row["tool"] is None else f"{row['server']}/{row['tool']}"
            logical = [{"fullyQualifiedName": where, "kind": "member"}]
            results.append({"ruleId": row["rule"], "level": "error" if row["rule"] in failing else "warning",
                            "message": {"text": f"{row['what']}: {RULES[row['rule']]}"},
                            "locations": [{"logicalLocations": logical}]})
        rules = [{"id": rule, "shortDescription": {"text": text}} for rule, text in RULES.items()]
        return {"$schema": _SARIF, "version": "2.1.0", "runs": [{
            "tool": {"driver": {"name": "mcpeval-nb catalog check", "rules": rules}}, "results": results}]}


def check_catalogs(root: Source = None, *, server: str | None = None, fail_on: str = "any",
                   pins: Any = True) -> CatalogCheck:
    """Judge every recorded or pinned server's catalog against its pin.

    Args:
        root: the capture root, or an open ``Store``.
        server: only this server label.
        fail_on: ``drift`` (a change since the pin, or no pin), ``flags`` (a flag the pin does not hold)
            or ``any``.
        pins: the pins (True: the root's ``catalog-pins.json``).

    Returns:
        The check: ``exit_code`` 0 when it passed, else 1.

    Raises:
        UsageError: a bad ``fail_on`` or pins file.
    """
    if fail_on not in FAIL_ON:
        raise UsageError("--fail-on must be drift, flags or any")
    return CatalogCheck(catalog_status(root, server=server, pins=pins), fail_on)


#: What ``CatalogCheck.render`` writes, in ``--format`` order.
CHECK_FORMATS = CatalogCheck.FORMATS.names
