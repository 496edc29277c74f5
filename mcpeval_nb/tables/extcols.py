"""The call table's columns from a record's ``ext`` object (the 2026-07-28 fields, ``privacy.ext``).

Declared once (``EXT_FIELDS``): the Arrow field, and how its value comes out of a sanitised ``ext``.  The
reference path (``rows.call_row``) fills them record by record (``ext_row``); the fast path maps each
distinct ``ext`` text once through the journal's JSON reader and the same read rule (``ext_columns``).
Two columns are derived: ``era`` (``modern`` when the record carries a per-request protocol version,
else ``legacy``) and ``server_ms`` (the latency less the time the server waited on its client).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from ..jsonfmt import JSONFormatError, loads
from ..privacy.ext import sanitize_ext

__all__ = ["EXT_FIELDS", "ext_columns", "ext_row", "null_ext_columns", "server_ms", "server_ms_column"]

_DICT = pa.dictionary(pa.int32(), pa.string())


def _flags(ext: dict[str, Any]) -> str | None:
    flags = ext.get("flags")
    return ",".join(flags) if flags else None


#: (column, Arrow type, value from a sanitised ``ext`` or None), in the table's column order.
EXT_FIELDS: tuple[tuple[str, pa.DataType, Callable[[dict[str, Any]], Any]], ...] = (
    ("protocol", _DICT, lambda e: e.get("protocol")),
    ("era", _DICT, lambda e: "modern" if "protocol" in e else None),
    ("result_type", _DICT, lambda e: e.get("result_type")),
    ("rounds", pa.uint64(), lambda e: e.get("rounds")),
    ("wait_ms", pa.uint64(), lambda e: e.get("wait_ms")),
    ("polls", pa.uint64(), lambda e: e.get("polls")),
    ("task_status", _DICT, lambda e: e.get("task")),
    ("flags", _DICT, _flags),
    ("request_id", pa.string(), lambda e: e.get("request_id")),
    ("prompt", _DICT, lambda e: e.get("prompt")),
    ("trace_id", pa.string(), lambda e: e.get("trace_id")),
    ("parent_span_id", pa.string(), lambda e: e.get("parent_span_id")),
    ("transport", _DICT, lambda e: e.get("transport")),
    ("server_address", _DICT, lambda e: e.get("address")),
    ("server_port", pa.uint64(), lambda e: e.get("port")),
)
#: ``era`` of a record without a protocol version.
LEGACY = "legacy"


def ext_row(ext: dict[str, Any] | None) -> dict[str, Any]:
    """The ext columns of one sanitised record (``era`` is ``legacy`` without a protocol)."""
    values = {name: None if ext is None else get(ext) for name, _, get in EXT_FIELDS}
    values["era"] = values["era"] or LEGACY
    return values


def server_ms(latency: Any, wait: Any) -> Any:
    """The latency less the client's wait (None when the latency is unknown)."""
    return None if latency is None else max(0, latency - (wait or 0))


def server_ms_column(latency: pa.Array, wait: pa.Array) -> pa.Array:
    """``server_ms`` of a column of latencies and one of waits (``server_ms`` per row, vectorised)."""
    if wait.null_count == len(wait):
        return latency
    import pyarrow.compute as pc

    less = pc.subtract(latency.cast(pa.int64()), pc.fill_null(wait, 0).cast(pa.int64()))
    return pc.max_element_wise(less, pa.scalar(0, pa.int64()), skip_nulls=False).cast(pa.uint64())


def null_ext_columns(size: int) -> dict[str, pa.Array]:
    """The ext columns of ``size`` records without ``ext``: all null, ``era`` legacy."""
    columns = {name: pa.nulls(size, typ) for name, typ, _ in EXT_FIELDS}
    columns["era"] = pa.DictionaryArray.from_arrays(pa.array(np.zeros(size, dtype=np.int32)),
                                                    pa.array([LEGACY], type=pa.string()))
    return columns


def _parse(text: str) -> dict[str, Any] | bool | None:
    try:
        value = loads('{"v":' + text + "}")["v"]  # as a member: the depth limit counts the record
    except JSONFormatError:
        return False
    return sanitize_ext(value)


def ext_columns(texts: pa.Array) -> tuple[dict[str, pa.Array], np.ndarray]:
    """The ext columns of proven lines from their raw ``ext`` texts (null: absent), each distinct text
    parsed and sanitised once.

    Returns:
        The columns, and a per-row mask of texts that are not one valid JSON value (those rows go to
        the reference path, which refuses them exactly as it refuses any such line).
    """
    size = len(texts)
    if texts.null_count == size:
        return null_ext_columns(size), np.zeros(size, dtype=bool)
    enc = texts.dictionary_encode()
    parsed = [_parse(t) for t in enc.dictionary.to_pylist()]
    indices = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    bad = np.array([p is False for p in parsed], dtype=bool)[np.maximum(indices, 0)] & (indices >= 0)
    rows = [ext_row(p if isinstance(p, dict) else None) for p in parsed] + [ext_row(None)]
    take = pa.array(np.where(indices >= 0, indices, len(parsed)))
    columns = {}
    for name, typ, _ in EXT_FIELDS:
        distinct = pa.array([r[name] for r in rows], type=pa.string() if typ == _DICT else typ)
        column = distinct.take(take)
        columns[name] = column.dictionary_encode() if typ == _DICT else column
    return columns, bad
