"""``--price-per-mtok``: what one session pays to carry the server's catalog, from the token estimates.

A session's context holds the whole tool catalog; its size in tokens is the readiness ``context``
area's ``catalog_tokens`` (``ceil(entry_bytes / 4)`` per tool, SPEC 9.3), or, in a gate-only or
selected run, a ``token-cost`` case's ``total_tokens``.  Priced at the operator's USD per million
tokens, that is the session cost the text and markdown reports print (never the JSON document).
"""

from __future__ import annotations

import math

from ..errors import UsageError
from .render import RenderOptions
from .report_view import ReportView

__all__ = ["check_price", "cost_suffix", "session_cost_line", "session_tokens"]


def session_tokens(report: ReportView) -> tuple[int, str] | None:
    """The report's estimate of the tokens a session spends on the catalog, and where it came from:
    the readiness ``context`` area's ``catalog_tokens``, else a ``token-cost`` case's ``total_tokens``."""
    r = report.readiness
    if r is not None and not r.display_only:
        for area in r.areas:
            tokens = area.measurements.get("catalog_tokens")
            if area.name == "context" and isinstance(tokens, int):
                return tokens, "catalog"
    for case in report.cases:
        tokens = case.measurements.get("total_tokens")
        if case.probe == "token-cost" and isinstance(tokens, int):
            return tokens, f"case:{case.id}"
    return None


def session_cost_line(report: ReportView, price_per_mtok: float, fmt: str) -> str:
    """The cost line of ``--price-per-mtok``: the catalog's tokens, priced, once per session.

    Raises:
        UsageError: the price is not a positive finite number.
    """
    check_price(RenderOptions(price_per_mtok=price_per_mtok))
    found = session_tokens(report)
    price = f"${price_per_mtok:g}/Mtok"
    if found is None:
        return (f"{report.server} session cost unknown at {price}: no token estimate" if fmt == "text"
                else f"**Session cost:** unknown at {price} (no token estimate)")
    tokens, where = found
    cost = f"${tokens * price_per_mtok / 1_000_000:.6f}"
    if fmt == "text":
        return f"{report.server} session cost {cost} at {price} tokens={tokens} source={where}"
    return f"**Session cost:** {cost} per session at {price} ({tokens} tokens; source: {where})"


def check_price(options: RenderOptions) -> None:
    """Refuse a price that is not a positive finite number (before a report writes in any format).

    Raises:
        UsageError: ``--price-per-mtok must be a positive number of USD``.
    """
    price = options.price_per_mtok
    if price is not None and not (math.isfinite(price) and price > 0):
        raise UsageError("--price-per-mtok must be a positive number of USD")


def cost_suffix(report: ReportView, options: RenderOptions, fmt: str) -> str:
    """What a report's ``text`` or ``markdown`` ends with under ``--price-per-mtok`` (nothing without it)."""
    if options.price_per_mtok is None:
        return ""
    line = session_cost_line(report, options.price_per_mtok, fmt)
    return f"{line}\n" if fmt == "text" else f"\n{line}\n"
