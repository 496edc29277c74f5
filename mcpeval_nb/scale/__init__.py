"""When the store outgrows the notebook: the DuckDB engine (past memory), the Dask engine (past one
machine), both over the incremental Parquet dataset and returning the in-memory functions' tables, and
the OTLP export to an observability stack.  DuckDB and Dask come with the ``scale`` extra, OpenTelemetry
with ``otel``; without them the entry points raise ``MissingExtra`` naming the extra."""

from __future__ import annotations

from .dask_engine import DaskEngine, dask_engine
from .duck import DuckDBEngine, duckdb_engine
from .otlp import OTLPExport, export_otlp

__all__ = ["DaskEngine", "DuckDBEngine", "OTLPExport", "dask_engine", "duckdb_engine", "export_otlp"]
