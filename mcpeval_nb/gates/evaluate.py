"""``gate``: budgets judged on captured traffic, from the public analysis functions.

The traffic is the store's *real* calls (``kind == "real"``: what agents actually did, not probe runs),
from ``since`` on.  Per (server, tool) of ``tools/call`` traffic the most specific budgets entry
applies: ``p95_ms``/``p99_ms`` against ``latency_summary``'s percentiles of the server's time (linear
interpolation; ``server_ms``: the latency less the time the server waited on its client in a multi
round-trip request or a task, so a person answering a question never fails a latency budget; for every
other call it is the latency ``summary`` and the notebooks show), ``max_error_rate`` on the Wilson 95%
interval of the error count (``wilson_interval``: fail only when its lower bound is over the budget,
warn when only its upper bound is), and fewer calls than ``min_calls`` is not judged.
``no_new_templates`` compares ``error_templates`` of that traffic with a baseline's (``baseline.py``).
The optional ``catalog`` rule adds one check per recorded or pinned server: ``catalog check`` against
``catalog-pins.json``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..analysis import error_templates, filter_calls, latency_summary, outcome_rates, wilson_interval
from ..clock import parse_day
from ..errors import UsageError
from ..root import RootLike
from ..tables import open_store
from .baseline import baseline_templates
from .budgets import ANY, BudgetEntry, Budgets, CatalogRule, load_budgets
from .report import GateCheck, GateReport, NewTemplate

__all__ = ["LIMITS", "gate"]

#: The limits a budgets entry can set, in report order.
LIMITS = ("p95_ms", "p99_ms", "max_error_rate")
_PAIR = ("server", "tool")


def _real(calls: pa.Table, day: dt.date | None) -> pa.Table:
    calls = filter_calls(calls, day_from=day)
    kind = calls.column("kind")
    kind = kind.cast(pa.string()) if pa.types.is_dictionary(kind.type) else kind
    return calls.filter(pc.fill_null(pc.equal(kind, "real"), False))


def _rows(table: pa.Table) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["server"], r["tool"]): r for r in table.to_pylist() if r["tool"] is not None}


def _check(name: str, b: BudgetEntry, limit: float, key: tuple[str, str], n: int,
           rates: dict[str, Any] | None, latency: dict[str, Any] | None) -> GateCheck:
    unjudged = GateCheck(server=key[0], tool=key[1], limit_name=name, status="not-judged", limit=limit,
                         observed=None, calls=n, budget=b.index)
    if n == 0 or n < b.min_calls:
        return unjudged
    if name == "max_error_rate":
        errors = int(rates["error"]) if rates is not None else 0
        low, high = wilson_interval(errors, n)
        status = "fail" if low > limit else "warn" if high > limit else "pass"
        return dataclasses.replace(unjudged, status=status, observed=errors / n, low=low, high=high)
    value = None if latency is None else latency[name.removesuffix("_ms")]
    if value is None:  # calls without a latency (no answer yet): nothing to judge
        return unjudged
    return dataclasses.replace(unjudged, status="fail" if value > limit else "pass", observed=float(value))


def _limit_checks(calls: pa.Table, budgets: Budgets) -> list[GateCheck]:
    rates = _rows(outcome_rates(calls, by=_PAIR))
    basis = "server_ms" if "server_ms" in calls.column_names else "latency_ms"  # a version 1 table
    latency = _rows(latency_summary(calls, by=_PAIR, value=basis))
    named = {(b.server, b.tool) for b in budgets.budgets if ANY not in (b.server, b.tool)}
    checks: list[GateCheck] = []
    for key in sorted(set(rates) | named):
        b = budgets.for_call(*key)
        if b is None:
            continue
        n = int(rates[key]["count"]) if key in rates else 0
        for name in LIMITS:
            limit = getattr(b, name)
            if limit is not None:
                checks.append(_check(name, b, limit, key, n, rates.get(key), latency.get(key)))
    return checks


def _template_check(real: pa.Table, known: frozenset[str]) -> GateCheck:
    new = tuple(NewTemplate(r["template_id"], int(r["count"]), tuple(r["tools"]))
                for r in error_templates(real).to_pylist() if r["template_id"] not in known)
    return GateCheck(server=ANY, tool=ANY, limit_name="no_new_templates", status="fail" if new else "pass",
                     limit=0, observed=float(len(new)), calls=real.num_rows, new_templates=new)


def _catalog_checks(store: Any, rule: CatalogRule) -> list[GateCheck]:
    """One check per recorded or pinned server: ``catalog check`` with the rule's ``fail_on``."""
    from ..catalog import check_catalogs

    check = check_catalogs(store, server=None if rule.server == ANY else rule.server, fail_on=rule.fail_on)
    found = check.findings()
    return [GateCheck(server=s.server, tool=ANY, limit_name="catalog",
                      status="fail" if check.failing(s) else "pass", limit=0,
                      observed=float(sum(r["server"] == s.server for r in found)), calls=0,
                      details=tuple(f"{r['rule'].removeprefix('catalog-')} {r['what']} {r['tool'] or '-'}"
                                    for r in found if r["server"] == s.server))
            for s in check.status.servers]


def gate(root: RootLike, budgets: Budgets | str | os.PathLike[str], *,
         since: str | dt.date | None = None,
         baseline: str | os.PathLike[str] | None = None) -> GateReport:
    """Judge the capture root's real traffic against budgets.

    Args:
        root: the capture root (default ``$MCPEVAL_HOME``, then ``~/.mcp-eval``).
        budgets: parsed ``Budgets`` or the path of a budgets file.
        since: judge only calls from this UTC day on (``YYYY-MM-DD`` or a date).
        baseline: a share envelope or Parquet export directory whose error templates are known
            (needed by ``no_new_templates``).

    Returns:
        The report: ``exit_code`` 0 when no check failed, else 1.

    Raises:
        DocumentError: the budgets file or the baseline is unusable (exit 2).
        UsageError: a bad ``since``, or ``no_new_templates`` without a baseline (exit 2).
        JournalError: the store could not be read (exit 3).
    """
    spec = budgets if isinstance(budgets, Budgets) else load_budgets(Path(budgets))
    day = parse_day(since, what="--since")
    if spec.no_new_templates and baseline is None:
        raise UsageError("the budgets set no_new_templates: pass --baseline DIR")
    known = baseline_templates(Path(baseline)) if baseline is not None else None
    store = open_store(None if root is None else Path(root))
    real = _real(store.calls, day)
    calls = filter_calls(real, method="tools/call")
    checks = _limit_checks(calls, spec)
    if spec.no_new_templates and known is not None:
        checks.append(_template_check(real, known))
    if spec.catalog is not None:
        checks += _catalog_checks(store, spec.catalog)
    return GateReport(tuple(checks), calls=calls.num_rows, since=None if day is None else day.isoformat(),
                      baseline=None if baseline is None else str(baseline),
                      skipped_lines=store.skipped_lines())
