"""``ResultSizes``: one sizes run, rendered as the "Result sizes (per call)" table or as the
``mcpeval-nb.result-sizes/v1`` JSON document (``schemas/result-sizes.schema.json``).

Informational: nothing here changes a readiness score or a gate; ``exit_code`` is 0 even when calls
errored (an error is a measurement), 3 only when the run could not reach the server at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..htmltext import lines_html
from ..probe.render import Format, FormatSet, aligned, json_text, render
from .measure import CallSize

__all__ = ["RESULT_SIZES_SCHEMA", "ResultSizes"]

RESULT_SIZES_SCHEMA = "mcpeval-nb.result-sizes/v1"
_TITLE = "Result sizes (per call)"
_COLUMNS = ("#", "tool", "outcome", "chars", "bytes", "tokens", "items", "structured", "latency_ms")


def _num(value: int | None) -> str:
    return "-" if value is None else str(value)


def _items(row: CallSize) -> str:
    return ",".join(f"{kind}:{n}" for kind, n in sorted(row.content.items())) or "-"


def _cells(row: CallSize) -> tuple[str, ...]:
    outcome = row.outcome if row.reason is None else f"{row.outcome}:{row.reason}"
    return (
        str(row.index),
        row.tool,
        outcome,
        _num(row.text_chars),
        _num(row.result_bytes),
        _num(row.tokens),
        _items(row),
        _num(row.structured_bytes),
        _num(row.latency_ms),
    )


@dataclass(frozen=True)
class ResultSizes:
    """The rows of one sizes run.

    Attributes:
        server: the server label. manifest_sha256: SHA-256 of the call manifest's bytes.
        calls: one row per listed call, in manifest order. ts: when the run finished (UTC).
        reached: False when no connection to the server could be made (every row a transport error).
        unreached: when not reached, why (``errors.describe`` of the first connection's failure: the
            server's exit status and stderr tail for a stdio server), for the terminal only: never in
            the document or the history.
    """

    #: The sizes run's format table.
    FORMATS: ClassVar[FormatSet[ResultSizes]] = FormatSet(
        (Format("text", lambda r, _: r.to_text()), Format("markdown", lambda r, _: r.to_markdown()),
         Format("json", lambda r, _: r.to_json())),
        unknown="format must be text, markdown or json")

    server: str
    manifest_sha256: str
    calls: tuple[CallSize, ...]
    ts: str
    reached: bool = True
    unreached: str | None = field(default=None, compare=False)

    @property
    def exit_code(self) -> int:
        """0 when the server was reached (calls that errored are measurements), 3 otherwise."""
        return 0 if self.reached else 3

    def totals(self) -> dict[str, int]:
        """Calls, errors, and the summed result bytes and tokens of the calls that returned a result."""
        return {
            "calls": len(self.calls),
            "errors": sum(r.outcome != "ok" for r in self.calls),
            "result_bytes": sum(r.result_bytes or 0 for r in self.calls),
            "tokens": sum(r.tokens or 0 for r in self.calls),
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``mcpeval-nb.result-sizes/v1`` document as a dict."""
        return {
            "schema": RESULT_SIZES_SCHEMA,
            "server": self.server,
            "manifest_sha256": self.manifest_sha256,
            "ts": self.ts,
            "reached": self.reached,
            "calls": [r.to_dict() for r in self.calls],
            "totals": self.totals(),
        }

    def to_json(self) -> str:
        """The document as pretty, key-sorted JSON with a trailing newline."""
        return json_text(self.to_dict())

    def _rows(self) -> list[tuple[str, ...]]:
        return [_COLUMNS, *(_cells(r) for r in self.calls)]

    def to_text(self) -> str:
        """The table in aligned columns, then a totals line."""
        lines = [f"{_TITLE}: {self.server}"]
        lines += ["  " + line for line in aligned(self._rows(), sep="  ")]
        t = self.totals()
        lines.append(
            f"  total calls={t['calls']} errors={t['errors']} bytes={t['result_bytes']} "
            f"tokens={t['tokens']} (informational: no score or gate uses it)"
        )
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        """The table as GitHub markdown."""
        rows = self._rows()
        lines = [
            f"### {_TITLE}: `{self.server}`",
            "",
            "| " + " | ".join(rows[0]) + " |",
            "|" + "---|" * len(_COLUMNS),
        ]
        lines += [
            "| " + " | ".join(f"`{c}`" if i == 1 else c for i, c in enumerate(r)) + " |" for r in rows[1:]
        ]
        t = self.totals()
        lines += [
            "",
            f"{t['calls']} calls, {t['errors']} errors, {t['result_bytes']} result bytes, "
            f"~{t['tokens']} tokens (informational).",
        ]
        return "\n".join(lines) + "\n"

    def render(self, fmt: str = "text") -> str:
        """``text``, ``markdown`` or ``json``.

        Raises:
            UsageError: an unknown format.
        """
        return render(self, fmt)

    def _repr_html_(self) -> str:
        """How a notebook cell shows it (the same lines as the CLI prints)."""
        return lines_html(f"result sizes: {self.server}", self.to_text().splitlines())
