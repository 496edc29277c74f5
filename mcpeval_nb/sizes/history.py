"""The result-size history: ``store/probes/sizes.jsonl``, one point per sizes run (docs/formats.md).

A point holds the run's time, server label, manifest hash and, per call, the tool name and the numbers
of its row (never arguments or result text).  It is written through the journal writer
(``journal.append.append_line``: 4 MiB bound, exclusive flock on the file, one write) and read through
the one line reader (``journal.read``: shared lock, bounded lines, tolerant tail).  Both directions pass
``SizePoint.sanitized``: labels outside their grammar become ``invalid``/``unlisted``, unknown labels and
non-numbers are dropped, so a hand-edited line cannot carry prose into a table or chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..clock import valid_rfc3339
from ..errors import InvalidRecord, RecordTooLarge, TrendHistoryCorrupt
from ..journal.append import append_line
from ..journal.read import iter_lines, parse_line
from ..jsonfmt import dumps
from ..privacy.grammar import valid_server, valid_template_id
from ..probe.cases import listed
from ..probe.reasons import TRANSPORT_REASONS
from ..root import Root, RootLike
from ..root.layout import sizes_path
from .report import ResultSizes

__all__ = ["SIZE_POINT_SCHEMA", "SizePoint", "load_size_history", "record_sizes", "sizes_path"]

SIZE_POINT_SCHEMA = "mcpeval-nb.sizes-point/v1"
_REASONS = frozenset({"tool-error", "rpc-error"}) | TRANSPORT_REASONS
_NUMBERS = ("index", "text_chars", "result_bytes", "tokens", "structured_bytes", "latency_ms")


def _u64(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64
    return value if ok else None


def _call(row: Any) -> dict[str, Any]:
    row = row if isinstance(row, dict) else {}
    out: dict[str, Any] = {key: _u64(row.get(key)) for key in _NUMBERS}
    out["tool"] = listed(row.get("tool"))
    out["outcome"] = "ok" if row.get("outcome") == "ok" else "error"
    out["reason"] = row.get("reason") if row.get("reason") in _REASONS else None
    out["template_id"] = row.get("template_id") if valid_template_id(row.get("template_id")) else None
    return out


@dataclass(frozen=True)
class SizePoint:
    """One sizes run in the history.

    Attributes:
        ts: when the run finished. server: its label. manifest_sha256: the call manifest's hash.
        calls: per call ``index``, ``tool``, ``outcome``, ``reason``, ``template_id`` and the numbers.
    """

    ts: str
    server: str
    manifest_sha256: str | None
    calls: tuple[dict[str, Any], ...]

    def sanitized(self) -> SizePoint:
        """The point with every field passed through its rule (idempotent)."""
        sha = self.manifest_sha256
        ok_sha = isinstance(sha, str) and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)
        return SizePoint(
            ts=self.ts if valid_rfc3339(self.ts) else "unknown",
            server=self.server if valid_server(self.server) else "invalid",
            manifest_sha256=sha if ok_sha else None,
            calls=tuple(_call(c) for c in self.calls),
        )

    def encode(self) -> str:
        """Compact, key-sorted JSON (no newline)."""
        return dumps(
            {
                "schema": SIZE_POINT_SCHEMA,
                "ts": self.ts,
                "server": self.server,
                "manifest_sha256": self.manifest_sha256,
                "calls": list(self.calls),
            },
            sort_keys=True,
        )

    @classmethod
    def from_dict(cls, d: Any) -> SizePoint:
        """Read a stored point (then ``sanitized``).

        Raises:
            ValueError: not an object of this schema.
        """
        if (
            not isinstance(d, dict)
            or d.get("schema") != SIZE_POINT_SCHEMA
            or not isinstance(d.get("calls"), list)
        ):
            raise ValueError("not a sizes point")
        return cls(
            ts=str(d.get("ts")),
            server=str(d.get("server")),
            manifest_sha256=d.get("manifest_sha256"),
            calls=tuple(d["calls"]),
        )

    @classmethod
    def of(cls, sizes: ResultSizes) -> SizePoint:
        """The point of one run."""
        return cls(
            ts=sizes.ts,
            server=sizes.server,
            manifest_sha256=sizes.manifest_sha256,
            calls=tuple(_call(r.to_dict()) for r in sizes.calls),
        ).sanitized()


def record_sizes(sizes: ResultSizes, *, root: RootLike = None) -> Path:
    """Append the run's point to ``<root>/store/probes/sizes.jsonl`` (created on demand).

    Raises:
        RecordTooLarge, LockTimeout, JournalError: from the journal writer; nothing was written.
    """
    return append_line(sizes_path(Root.of(root).path), SizePoint.of(sizes).encode())


def load_size_history(*, root: RootLike = None) -> list[SizePoint]:
    """Every point in file order ([] when there is no history yet).

    Raises:
        TrendHistoryCorrupt: a complete line is oversized or not a sizes point (named by file and line).
        LockTimeout, JournalError: the file could not be read.
    """
    path = sizes_path(Root.of(root).path)
    if not path.exists():
        return []
    points: list[SizePoint] = []
    try:
        for raw in iter_lines(path):
            point = parse_line(raw, path, SizePoint.from_dict, True)
            if point is not None:
                points.append(point)
    except RecordTooLarge as exc:
        raise TrendHistoryCorrupt(path, exc.line, "line exceeds 4 MiB") from None
    except InvalidRecord as exc:
        raise TrendHistoryCorrupt(path, exc.line, None) from None
    return points
