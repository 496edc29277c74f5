"""The DuckDB engine: the analysis functions as SQL over the Parquet dataset, for stores past memory.

``DuckDBEngine(source)`` opens a dataset directory (or a capture root, exported incrementally first) in
an in-process DuckDB with a memory limit, so a store of any size is analysed in bounded memory (DuckDB
spills to its temporary directory).  ``latency_summary``, ``outcome_rates``, ``error_templates``,
``template_daily`` and ``readiness_history`` return the same Arrow tables as the in-memory functions of
``mcpeval_nb.analysis``, column for column: percentiles are ``quantile_cont`` (linear interpolation
between closest ranks, numpy's and pandas' default), counts are exact, and rates and Wilson intervals are
computed from the counts by the very code the in-memory ``outcome_rates`` uses.  No extension is
installed or loaded from the network (``autoinstall_known_extensions`` is off).
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import pandas as pd
import pyarrow as pa

from ..analysis.filters import FILTER_COLUMNS
from ..analysis.latency import PERCENTILES, bucket_ms, latency_schema
from ..analysis.outcomes import OUTCOMES, outcome_schema, rates_table
from ..analysis.readiness import HISTORY_SCHEMA
from ..analysis.templates import DAILY_SCHEMA, TEMPLATES_SCHEMA
from ..clock import day_start
from ..errors import UsageError
from ..tables.parquet import PARQUET_SCHEMA
from .dataset import Source, dataset_files, resolve_dataset, stored_trends
from .extras import require

__all__ = ["DEFAULT_MEMORY_LIMIT", "DuckDBEngine", "duckdb_engine"]

#: DuckDB's memory limit unless told otherwise (it spills past it).
DEFAULT_MEMORY_LIMIT = "512MB"
#: Columns a query may group by: the calls table's text columns and ``label`` (tool, else method).
_GROUPABLE = ("server", "tool", "method", "outcome", "session", "kind", "error_template_id", "error_kind",
              "error_layer", "error_code", "label", "day")
_TS_MS = pa.timestamp("ms", tz="UTC")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _keys(by: tuple[str, ...]) -> None:
    for name in by:
        if name not in _GROUPABLE:
            raise UsageError(f"cannot group by {name!r}; expected one of {', '.join(_GROUPABLE)}")


def _order(keys: list[str]) -> str:
    return ", ".join(f'"{k}" ASC NULLS LAST' for k in keys)


def _cast(table: pa.Table, schema: pa.Schema, *, ms: tuple[str, ...] = ()) -> pa.Table:
    cols = []
    for f in schema:
        col = table.column(f.name)
        if f.name in ms:
            col = col.cast(pa.int64()).cast(_TS_MS)
        cols.append(col.cast(f.type))
    return pa.Table.from_arrays(cols, schema=schema)


class DuckDBEngine:
    """The analysis functions on DuckDB over one Parquet dataset.

    Args:
        source: a dataset directory written by ``Store.to_parquet``/``export-parquet``, a capture root or
            an open ``Store`` (exported incrementally to ``<root>/calls.parquet`` first).
        memory_limit: DuckDB's ``memory_limit`` (``512MB``, ``2GB``); it spills past it.
        threads: worker threads (default: DuckDB's, one per core).
        temp_directory: where DuckDB spills (default: its own, beside nothing on disk we own).

    Attributes:
        dataset: the dataset directory. files: its Parquet files.

    Every query method takes the ``filter_calls`` filters as keywords (``server``, ``tool``, ``method``,
    ``outcome``, ``day_from``, ``day_to``).

    Raises:
        MissingExtra: DuckDB is not installed (extra ``scale``).
    """

    def __init__(self, source: Source, *, memory_limit: str = DEFAULT_MEMORY_LIMIT,
                 threads: int | None = None, temp_directory: str | os.PathLike[str] | None = None) -> None:
        duckdb = require("duckdb", extra="scale", what="the DuckDB engine")
        self.dataset = resolve_dataset(source)
        self.files = dataset_files(self.dataset)
        config: dict[str, Any] = {"memory_limit": memory_limit, "autoinstall_known_extensions": False,
                                  "preserve_insertion_order": False}
        if threads is not None:
            config["threads"] = threads
        if temp_directory is not None:
            config["temp_directory"] = os.fspath(temp_directory)
        self.con = duckdb.connect(":memory:", config=config)
        self._register_calls()

    def _register_calls(self) -> None:
        if self.files:
            listing = ", ".join(_quote(f) for f in self.files)
            source = (f"read_parquet([{listing}], hive_partitioning = true, "
                      "hive_types = {'day': VARCHAR, 'server': VARCHAR})")
        else:
            self.con.register("_empty_calls", PARQUET_SCHEMA.empty_table())
            source = "_empty_calls"
        self.con.execute(f"CREATE VIEW calls AS SELECT *, coalesce(CAST(tool AS VARCHAR), "
                         f"CAST(method AS VARCHAR)) AS label FROM {source}")

    def close(self) -> None:
        """Close the DuckDB connection."""
        self.con.close()

    def __enter__(self) -> DuckDBEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- selection ---------------------------------------------------------------------------------
    def _selection(self, filters: dict[str, Any]) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for name, value in filters.items():
            if value is None:
                continue
            if name in FILTER_COLUMNS:
                clauses.append(f'CAST("{name}" AS VARCHAR) = ?')
                params.append(str(value))
            elif name in ("day_from", "day_to"):
                day = value + dt.timedelta(days=1) if name == "day_to" else value
                start = day_start(day)
                clauses.append(f"epoch_ms(ts) {'>=' if name == 'day_from' else '<'} ?")
                params.append(int(start.timestamp() * 1000))
            else:
                raise UsageError(f"unknown filter {name!r}")
        where = " AND ".join(clauses) or "TRUE"
        return f"(SELECT * FROM calls WHERE {where})", params

    def _arrow(self, sql: str, params: list[Any]) -> pa.Table:
        result: pa.Table = self.con.sql(sql, params=params or None).to_arrow_table()
        return result

    def count(self, **filters: Any) -> int:
        """The calls that match the filters."""
        sel, params = self._selection(filters)
        rows = self.con.execute(f"SELECT count(*) FROM {sel}", params).fetchall()
        return int(rows[0][0]) if rows else 0

    def distinct(self, column: str, **filters: Any) -> list[str]:
        """The distinct non-null values of one group column, sorted."""
        _keys((column,))
        sel, params = self._selection(filters)
        rows = self.con.execute(f'SELECT DISTINCT CAST("{column}" AS VARCHAR) AS v FROM {sel} '
                                "WHERE v IS NOT NULL ORDER BY v", params).fetchall()
        return [r[0] for r in rows]

    def days(self, **filters: Any) -> list[dt.date]:
        """The UTC days that hold calls with a known timestamp, oldest first."""
        sel, params = self._selection(filters)
        rows = self.con.execute(f"SELECT DISTINCT CAST(day AS DATE) AS d FROM {sel} WHERE ts IS NOT NULL "
                                "ORDER BY d", params).fetchall()
        return [r[0] for r in rows]

    def sample(self, columns: tuple[str, ...], *, rows: int, seed: int = 0, **filters: Any) -> pa.Table:
        """A uniform random sample of at most ``rows`` calls (reservoir sampling, repeatable by ``seed``)."""
        for name in columns:
            _keys((name,)) if name != "latency_ms" else None
        sel, params = self._selection(filters)
        cols = ", ".join(f'"{c}"' for c in columns)
        return self._arrow(f"SELECT {cols} FROM {sel} USING SAMPLE reservoir({int(rows)} ROWS) "
                           f"REPEATABLE ({int(seed)})", params)

    # -- the analysis functions ----------------------------------------------------------------------
    def latency_summary(self, *, by: tuple[str, ...] = ("server", "tool", "method"),
                        bucket: str | None = None, **filters: Any) -> pa.Table:
        """``analysis.latency_summary`` on DuckDB: count, p50, p90, p95, p99 and max per group.

        Percentiles are exact: each group is ranked (a sort DuckDB spills when it must), the two closest
        ranks are picked, and they are interpolated as pandas does, ``lo + (hi - lo) * frac``.
        """
        _keys(by)
        sel, params = self._selection(filters)
        keys = [f'CAST("{k}" AS VARCHAR) AS "{k}"' for k in by]
        names = list(by)
        if bucket is not None:
            width = bucket_ms(bucket)
            keys.append(f'(epoch_ms(ts) // {width}) * {width} AS "bucket"')
            names.append("bucket")
        schema = latency_schema(by, bucket is not None)
        out = self._arrow(_latency_sql(keys, names, sel), params)
        if out.num_rows == 0 or out.column("count").null_count:
            return schema.empty_table()
        n = out.column("count").to_numpy().astype("float64")
        cols = {name: out.column(name) for name in (*names, "count")}
        for p in PERCENTILES:
            lo = out.column(f"lo{p}").to_numpy()
            hi = out.column(f"hi{p}").to_numpy()
            pos = (n - 1) * (p / 100)
            cols[f"p{p}"] = pa.array(lo + (hi - lo) * (pos % 1))
        cols["max"] = out.column("max")
        return _cast(pa.table(cols), schema, ms=("bucket",))

    def outcome_counts(self, *, by: tuple[str, ...] = ("server", "tool"), **filters: Any) -> pd.DataFrame:
        """Per group: one count column per outcome in ``OUTCOMES`` (what ``outcome_rates`` finishes)."""
        _keys(by)
        sel, params = self._selection(filters)
        keys = [f'CAST("{k}" AS VARCHAR) AS "{k}"' for k in by]
        counts = [f"count(*) FILTER (WHERE CAST(outcome AS VARCHAR) = {_quote(o)}) AS \"{o}\""
                  for o in OUTCOMES]
        group = f"GROUP BY {', '.join(str(i + 1) for i in range(len(keys)))} ORDER BY {_order(list(by))}" \
            if keys else ""
        table = self._arrow(f"SELECT {', '.join([*keys, *counts, 'count(*) AS _rows'])} FROM {sel} {group}",
                            params)
        frame: pd.DataFrame = table.to_pandas()
        return frame[frame["_rows"] > 0].drop(columns="_rows").reset_index(drop=True)

    def outcome_rates(self, *, by: tuple[str, ...] = ("server", "tool"), **filters: Any) -> pa.Table:
        """``analysis.outcome_rates`` on DuckDB: counts, rates and Wilson 95% intervals per group."""
        counts = self.outcome_counts(by=by, **filters)
        if counts.empty:
            return outcome_schema(by).empty_table()
        return rates_table(counts, by)

    def error_templates(self, **filters: Any) -> pa.Table:
        """``analysis.error_templates`` on DuckDB: one row per template id, most frequent first."""
        sel, params = self._selection(filters)
        out = self._arrow(
            "SELECT CAST(error_template_id AS VARCHAR) AS template_id, count(*) AS \"count\", "
            "count(DISTINCT session) AS sessions, "
            "list_sort(list_distinct(list(CAST(tool AS VARCHAR)))) AS tools, "
            "list_sort(list_distinct(list(CAST(error_code AS VARCHAR)))) AS codes, "
            "epoch_ms(min(ts)) AS first_seen, epoch_ms(max(ts)) AS last_seen "
            f"FROM {sel} WHERE error_template_id IS NOT NULL GROUP BY 1 "
            "ORDER BY \"count\" DESC, template_id ASC", params)
        return _cast(out, TEMPLATES_SCHEMA, ms=("first_seen", "last_seen"))

    def template_daily(self, **filters: Any) -> pa.Table:
        """``analysis.template_daily`` on DuckDB: counts per template id and UTC day."""
        sel, params = self._selection(filters)
        out = self._arrow(
            "SELECT CAST(error_template_id AS VARCHAR) AS template_id, CAST(day AS DATE) AS day, "
            f"count(*) AS \"count\" FROM {sel} WHERE error_template_id IS NOT NULL AND ts IS NOT NULL "
            "GROUP BY 1, 2 ORDER BY 1, 2", params)
        return _cast(out, DAILY_SCHEMA)

    def readiness_history(self, *, last: int | None = None, trends: Any = None) -> pa.Table:
        """``analysis.readiness_history`` on DuckDB (window functions for the SPEC 7.3 delta rules).

        Args:
            last: keep only the newest ``last`` points per server.
            trends: the trends table (default: the one stored beside the calls).
        """
        table = stored_trends(self.dataset) if trends is None else trends
        if isinstance(table, pd.DataFrame):
            table = pa.Table.from_pandas(table, preserve_index=False)
        cols = [c for c in HISTORY_SCHEMA.names[:9]]
        table = table.select(cols)
        table = table.append_column("_row", pa.array(range(table.num_rows), pa.int64()))
        self.con.register("_trends_in", table)
        keep = "TRUE" if last is None else ("FALSE" if last <= 0 else f"_back <= {int(last)}")
        try:
            out = self._arrow(_HISTORY_SQL.format(keep=keep), [])
        finally:
            self.con.unregister("_trends_in")
        return _cast(out, HISTORY_SCHEMA, ms=("ts",))


def _latency_sql(keys: list[str], names: list[str], sel: str) -> str:
    part = f"PARTITION BY {', '.join(f'{chr(34)}{k}{chr(34)}' for k in names)}" if names else ""
    picks = []
    for p in PERCENTILES:
        pos = f"floor((n - 1) * {p / 100!r}::DOUBLE)"
        picks.append(f"max(x) FILTER (WHERE rk = {pos}) AS lo{p}")
        picks.append(f"max(x) FILTER (WHERE rk = least({pos} + 1, n - 1)) AS hi{p}")
    quoted = ", ".join(f'"{k}"' for k in names)
    columns = [*(f'"{k}"' for k in names), "any_value(n) AS count"]
    group = f"GROUP BY {quoted} ORDER BY {_order(names)}" if names else ""
    return (f"WITH v AS (SELECT {', '.join([*keys, 'CAST(latency_ms AS DOUBLE) AS x'])} FROM {sel} "
            "WHERE latency_ms IS NOT NULL), "
            f"r AS (SELECT *, row_number() OVER ({part} ORDER BY x) - 1 AS rk, count(*) OVER ({part}) AS n "
            "FROM v) "
            f"SELECT {', '.join([*columns, *picks, 'CAST(max(x) AS BIGINT) AS max'])} "
            f"FROM r {group}")


_HISTORY_SQL = """
WITH ranked AS (
    SELECT *, row_number() OVER (PARTITION BY server ORDER BY ts DESC NULLS FIRST, _row DESC) AS _back
    FROM _trends_in
), shown AS (
    SELECT * FROM ranked WHERE {keep}
), paired AS (
    SELECT *,
        row_number() OVER w AS _nth,
        lag(standard) OVER w AS p_standard,
        lag(measurement_profile) OVER w AS p_profile,
        lag(manifest_sha256) OVER w AS p_manifest,
        lag(score) OVER w AS p_score
    FROM shown
    WINDOW w AS (PARTITION BY server ORDER BY ts ASC NULLS LAST, _row ASC)
), judged AS (
    SELECT *, CASE
        WHEN _nth = 1 THEN ''
        WHEN p_standard IS DISTINCT FROM standard THEN 'standard changed'
        WHEN standard IS NOT NULL AND (p_profile IS NULL OR measurement_profile IS NULL)
            THEN 'measurement profile unavailable'
        WHEN p_profile IS DISTINCT FROM measurement_profile THEN 'measurement profile changed'
        WHEN standard IS NOT NULL OR p_manifest IS NOT DISTINCT FROM manifest_sha256 THEN
            CASE WHEN CAST(score AS BIGINT) - CAST(p_score AS BIGINT) >= 0
                 THEN '+' || CAST(CAST(score AS BIGINT) - CAST(p_score AS BIGINT) AS VARCHAR)
                 ELSE CAST(CAST(score AS BIGINT) - CAST(p_score AS BIGINT) AS VARCHAR) END
        ELSE 'manifest changed' END AS delta
    FROM paired
)
SELECT epoch_ms(ts) AS ts, server, passed, cases_total, cases_passed, score, manifest_sha256, standard,
       measurement_profile, delta,
       delta = 'standard changed' AS standard_changed,
       starts_with(delta, 'measurement profile') AS profile_changed,
       _nth > 1 AND p_manifest IS DISTINCT FROM manifest_sha256 AS manifest_changed
FROM judged
ORDER BY server ASC, ts ASC NULLS LAST, _row ASC
"""


def duckdb_engine(source: Source, **options: Any) -> DuckDBEngine:
    """Open the DuckDB engine over a dataset, a capture root or a store (see ``DuckDBEngine``).

    Raises:
        MissingExtra: DuckDB is not installed (extra ``scale``).
    """
    return DuckDBEngine(source, **options)
