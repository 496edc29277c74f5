"""Shared helpers: accept a table or a frame, return Arrow tables with plain string columns."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from ..errors import UsageError
from ..tables.coerce import as_table

__all__ = ["as_frame", "require", "to_table"]


def as_frame(data: Any, columns: tuple[str, ...]) -> pd.DataFrame:
    """The named columns of a ``pyarrow.Table``, a ``pandas.DataFrame`` or any Arrow stream as a DataFrame.

    Dictionary (categorical) columns become plain object columns so group keys keep nulls.

    Raises:
        UsageError: the input is neither a table nor a frame, or lacks a column.
    """
    if not isinstance(data, pa.Table | pd.DataFrame):
        data = as_table(data)  # any Arrow stream: polars, DuckDB, ... (raises UsageError otherwise)
    if isinstance(data, pa.Table):
        require(data.column_names, columns)
        table = data.select(list(columns))
        cols = {n: (c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c)
                for n, c in zip(table.column_names, table.columns, strict=True)}
        frame: pd.DataFrame = pa.table(cols).to_pandas()
        return frame
    if isinstance(data, pd.DataFrame):
        require(list(data.columns), columns)
        frame = data[list(columns)].copy()
        for name in columns:
            if isinstance(frame[name].dtype, pd.CategoricalDtype):
                frame[name] = frame[name].astype(object)
        return frame
    raise UsageError("expected a pyarrow.Table or a pandas.DataFrame")


def require(have: list[str], columns: tuple[str, ...]) -> None:
    """Raise UsageError naming the first missing column."""
    for name in columns:
        if name not in have:
            raise UsageError(f"input has no column {name!r}")


def to_table(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """A frame as a table with exactly ``schema`` (columns in schema order)."""
    return pa.Table.from_pandas(frame[[f.name for f in schema]], schema=schema, preserve_index=False)
