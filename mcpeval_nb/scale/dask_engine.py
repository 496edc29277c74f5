"""The Dask engine: the analysis functions on a cluster, over a Parquet dataset on any fsspec path.

``DaskEngine(dataset, client=...)`` reads the dataset (a local directory, ``s3://bucket/calls.parquet``,
``gs://...``: whatever fsspec reaches, with ``storage_options``), shuffles the calls so that every group
of a query lands whole in one partition, and runs the in-memory function of ``mcpeval_nb.analysis`` on
each partition.  Results are exact (per-group percentiles over every value, not approximate quantiles)
and equal the in-memory ones column for column; the partitions' tables are concatenated and sorted as
the in-memory function sorts.  The trend points come from ``_mcpeval_trends.arrow`` beside the calls.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ..analysis.filters import filter_calls
from ..analysis.latency import latency_schema, latency_summary
from ..analysis.outcomes import outcome_rates, outcome_schema
from ..analysis.readiness import HISTORY_SCHEMA, readiness_history
from ..analysis.templates import DAILY_SCHEMA, TEMPLATES_SCHEMA, error_templates, template_daily
from ..root.layout import DATASET_TRENDS
from ..tables.schemas import CALLS_SCHEMA, TRENDS_SCHEMA
from ..tables.store import Store
from .dataset import resolve_dataset
from .extras import require

__all__ = ["DaskEngine", "dask_engine"]

_FILTERS = ("server", "tool", "method", "outcome")


def _as_calls(frame: Any) -> pa.Table:
    """A pandas partition as a calls table with the store's column types (what the in-memory path sees)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    cols = {}
    for name in table.column_names:
        col = table.column(name)
        want = CALLS_SCHEMA.field(name).type if name in CALLS_SCHEMA.names else pa.string()
        if pa.types.is_dictionary(want):
            want = pa.string()
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        cols[name] = col.cast(want)
    return pa.table(cols)


def _run(part: Any, fn: Callable[..., pa.Table], filters: dict[str, Any],
         options: dict[str, Any]) -> pa.Table:
    return fn(filter_calls(_as_calls(part), **filters), **options)


def _sorted(tables: list[pa.Table], schema: pa.Schema, keys: list[tuple[str, str]]) -> pa.Table:
    table = pa.concat_tables([t.cast(schema) for t in tables]) if tables else schema.empty_table()
    if not keys:
        return table
    try:  # pyarrow >= 25 takes the null placement per key
        return table.sort_by([(k, order, "at_end") for k, order in keys])
    except (TypeError, ValueError):
        return table.sort_by(keys, null_placement="at_end")


class DaskEngine:
    """The analysis functions on a Dask cluster over one Parquet dataset.

    Args:
        dataset: a dataset directory or fsspec URL (``s3://bucket/calls.parquet``), a capture root or a
            ``Store`` (exported incrementally first).
        client: a ``distributed.Client`` (default: the current one, else Dask's local scheduler).
        storage_options: fsspec options for a remote dataset (credentials stay with fsspec).

    Every query method takes the ``filter_calls`` filters as keywords.

    Raises:
        MissingExtra: Dask is not installed (extra ``scale``).
    """

    def __init__(self, dataset: Store | str | os.PathLike[str], *, client: Any = None,
                 storage_options: dict[str, Any] | None = None) -> None:
        self._dd = require("dask.dataframe", extra="scale", what="the Dask engine")
        self._dask = require("dask", extra="scale", what="the Dask engine")
        text = os.fspath(dataset) if not isinstance(dataset, Store) else ""
        self.url = text if "://" in text else os.fspath(resolve_dataset(dataset))
        self.client = client
        self.storage_options = storage_options or {}

    def _frame(self, columns: list[str]) -> Any:
        return self._dd.read_parquet(self.url, columns=columns, storage_options=self.storage_options or None)

    def _compute(self, frame: Any, on: list[str], fn: Callable[..., pa.Table], filters: dict[str, Any],
                 options: dict[str, Any]) -> list[pa.Table]:
        frame = frame.shuffle(on=on) if on else frame.repartition(npartitions=1)
        tasks = [self._dask.delayed(_run)(part, fn, filters, options) for part in frame.to_delayed()]
        if self.client is not None:
            return list(self.client.gather(self.client.compute(tasks)))
        return list(self._dask.compute(*tasks))

    def _columns(self, need: tuple[str, ...], filters: dict[str, Any]) -> list[str]:
        extra = [k for k in _FILTERS if filters.get(k) is not None]
        if filters.get("day_from") is not None or filters.get("day_to") is not None:
            extra.append("ts")
        return list(dict.fromkeys([*need, *extra]))

    def latency_summary(self, *, by: tuple[str, ...] = ("server", "tool", "method"),
                        bucket: str | None = None, **filters: Any) -> pa.Table:
        """``analysis.latency_summary`` on Dask: shuffled by the group keys, exact per group."""
        cols = self._columns((*by, "latency_ms", *(("ts",) if bucket else ())), filters)
        options = {"by": by, "bucket": bucket}
        parts = self._compute(self._frame(cols), list(by), latency_summary, filters, options)
        keys = [*by, *(("bucket",) if bucket else ())]
        return _sorted(parts, latency_schema(by, bucket is not None), [(k, "ascending") for k in keys])

    def outcome_rates(self, *, by: tuple[str, ...] = ("server", "tool"), **filters: Any) -> pa.Table:
        """``analysis.outcome_rates`` on Dask: exact counts, rates and Wilson intervals per group."""
        cols = self._columns((*by, "outcome"), filters)
        parts = self._compute(self._frame(cols), list(by), outcome_rates, filters, {"by": by})
        return _sorted(parts, outcome_schema(by), [(k, "ascending") for k in by])

    def _by_template(self, fn: Callable[..., pa.Table], filters: dict[str, Any]) -> list[pa.Table]:
        cols = self._columns(("error_template_id", "ts", "session", "tool", "error_code"), filters)
        frame = self._frame(cols)
        frame = frame[frame["error_template_id"].notnull()]
        return self._compute(frame, ["error_template_id"], fn, filters, {})

    def error_templates(self, **filters: Any) -> pa.Table:
        """``analysis.error_templates`` on Dask: shuffled by template id."""
        parts = self._by_template(error_templates, filters)
        return _sorted(parts, TEMPLATES_SCHEMA, [("count", "descending"), ("template_id", "ascending")])

    def template_daily(self, **filters: Any) -> pa.Table:
        """``analysis.template_daily`` on Dask: counts per template id and UTC day."""
        parts = self._by_template(template_daily, filters)
        return _sorted(parts, DAILY_SCHEMA, [("template_id", "ascending"), ("day", "ascending")])

    def readiness_history(self, *, last: int | None = None) -> pa.Table:
        """``analysis.readiness_history`` on Dask: the stored trend points, shuffled by server."""
        import fsspec
        import pyarrow.feather as feather

        fs, path = fsspec.core.url_to_fs(self.url, **self.storage_options)
        trends = TRENDS_SCHEMA.empty_table()
        if fs.exists(f"{path}/{DATASET_TRENDS}"):
            with fs.open(f"{path}/{DATASET_TRENDS}", "rb") as fh:
                trends = feather.read_table(fh).cast(TRENDS_SCHEMA)
        frame = self._dd.from_pandas(trends.to_pandas(), npartitions=2)
        tasks = [self._dask.delayed(readiness_history)(part, last=last)
                 for part in frame.shuffle(on=["server"]).to_delayed()]
        parts = list(self.client.gather(self.client.compute(tasks)) if self.client is not None
                     else self._dask.compute(*tasks))
        return _sorted(parts, HISTORY_SCHEMA, [("server", "ascending")])


def dask_engine(dataset: Store | str | os.PathLike[str], **options: Any) -> DaskEngine:
    """Open the Dask engine over a dataset (see ``DaskEngine``).

    Raises:
        MissingExtra: Dask is not installed (extra ``scale``).
    """
    return DaskEngine(dataset, **options)
