"""Any table a user hands the package, as one ``pyarrow.Table``: the one place inputs are coerced.

Accepted: a ``pyarrow.Table`` (returned as is), a ``pyarrow.RecordBatch`` or ``RecordBatchReader``, a
pandas ``DataFrame`` (without its index), and anything that exports an Arrow stream through the Arrow
PyCapsule interface (``__arrow_c_stream__``: polars frames, DuckDB relations, pandas >= 2.2 frames,
nanoarrow and more), read without a copy where Arrow can.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..errors import UsageError

__all__ = ["as_table"]

_EXPECTED = ("expected a table: a pyarrow.Table, a pandas or polars DataFrame, a DuckDB relation, or "
             "any object with __arrow_c_stream__")


def as_table(data: Any, *, decode: bool = False) -> pa.Table:
    """``data`` as a ``pyarrow.Table``.

    Args:
        data: a table, batch, reader, DataFrame or Arrow stream (see the module docstring).
        decode: cast dictionary columns to their value type (plain strings), as charts and pandas
            group keys want them.

    Returns:
        The table.

    Raises:
        UsageError: ``data`` is none of these.
    """
    table = _table(data)
    if decode and any(pa.types.is_dictionary(f.type) for f in table.schema):
        table = pa.table({n: (c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c)
                          for n, c in zip(table.column_names, table.columns, strict=True)})
    return table


def _plain_type(kind: pa.DataType) -> pa.DataType:
    """``string_view``/``large_string`` (polars, DuckDB) as ``string``, inside dictionaries too."""
    if pa.types.is_dictionary(kind):
        return pa.dictionary(kind.index_type, _plain_type(kind.value_type))
    if pa.types.is_string_view(kind) or pa.types.is_large_string(kind):
        return pa.string()
    if pa.types.is_binary_view(kind) or pa.types.is_large_binary(kind):
        return pa.binary()
    return kind


def _plain(table: pa.Table) -> pa.Table:
    schema = pa.schema([f.with_type(_plain_type(f.type)) for f in table.schema])
    if schema.equals(table.schema):
        return table
    columns = []
    for column, field in zip(table.columns, schema, strict=True):
        if pa.types.is_dictionary(field.type) and column.type != field.type:
            column = pa.chunked_array(
                [pa.DictionaryArray.from_arrays(chunk.indices, chunk.dictionary.cast(field.type.value_type))
                 for chunk in column.chunks], type=field.type)
        else:
            column = column.cast(field.type)
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def _table(data: Any) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        import pandas as pd

        if isinstance(data, pd.DataFrame):
            return pa.Table.from_pandas(data, preserve_index=False)
    if hasattr(data, "__arrow_c_stream__"):
        return _plain(pa.RecordBatchReader.from_stream(data).read_all())
    if hasattr(data, "to_arrow") and module not in ("builtins",):
        converted = data.to_arrow()
        if isinstance(converted, pa.Table | pa.RecordBatchReader):
            return _table(converted)
    raise UsageError(_EXPECTED)
