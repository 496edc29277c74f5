"""The fast path's first strategy: parse a whole chunk natively, then prove each line canonical.

``pyarrow.json`` parses every line of the chunk with an explicit schema (``args`` and ``error`` only as
present-or-not, unknown fields ignored); ``args`` and ``error`` are cut out of the line bytes at offsets
computed from the parsed field lengths (a search for the ``outcome`` key only on lines that carry both);
then the canonical line is rebuilt from
those values and compared byte for byte with the original.  A line that compares equal is exactly the
writer's rendering of the parsed values (one key each, struct order, compact, and, since lines with a
backslash or control byte are excluded, no escapes), so its JSON parse is the parsed values.  Those are
then sanitised once per distinct value through the reference functions.  Every other line goes to the
reference path.  If the native parser refuses the chunk (a wrong type anywhere, a blank line), the
caller falls back to the line-filtering strategy in ``fastpath``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ..clock import ts_millis
from .canon import ByteData
from .sanitise import sanitise_columns

__all__ = ["PARSE_SCHEMA", "rebuild_columns", "ts_column"]

PARSE_SCHEMA = pa.schema([
    ("identity", pa.struct([("capture_id", pa.string()), ("event_id", pa.string())])),
    ("ts", pa.string()), ("session", pa.string()), ("seq", pa.uint64()), ("server", pa.string()),
    ("method", pa.string()), ("tool", pa.string()), ("latency_ms", pa.uint64()),
    ("outcome", pa.string()), ("shim_self_us", pa.uint64()), ("kind", pa.string()),
    ("args", pa.struct([])), ("error", pa.struct([])),  # presence only: objects, null or absent
])
_UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
_TS = (r"^(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)-[0-9]{2}-[0-9]{2}"
       r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z$")
_OPTIONS = pj.ParseOptions(explicit_schema=PARSE_SCHEMA, unexpected_field_behavior="ignore")


_ID1, _ID2, _ID3 = '"identity":{"capture_id":"', '","event_id":"', '"},'
_TS1, _SESSION, _SEQ, _SERVER, _METHOD = '"ts":"', '","session":"', '","seq":', ',"server":"', '","method":"'
_TOOL, _ARGS, _LAT, _OUT, _ERR = ',"tool":"', ',"args":', ',"latency_ms":', ',"outcome":"', ',"error":'
_SHIM, _KIND, _END = ',"shim_self_us":', ',"kind":"', '"}\n'


def _lengths(column: pa.Array) -> np.ndarray:
    result: np.ndarray = pc.fill_null(pc.binary_length(column), 0).to_numpy(zero_copy_only=False).astype(
        np.int64)
    return result


def _join(*parts: Any) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _opt(*parts: Any) -> pa.Array:
    return pc.fill_null(_join(*parts), "")


def _cut(data: ByteData, arr: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A string array of ``data[starts[i]:starts[i] + lengths[i]]``: string views over ``data``, then one
    native gather into a plain string array."""
    n = len(lengths)
    lengths = np.maximum(lengths, 0).astype(np.int32)
    starts = np.clip(starts, 0, max(len(arr) - 1, 0)).astype(np.int64)
    views = np.zeros((n, 4), dtype=np.int32)
    views[:, 0] = lengths
    padded = np.concatenate([arr, np.zeros(16, dtype=np.uint8)])
    window = padded[starts[:, None] + np.arange(12)]  # the first 12 bytes of each value
    short = lengths <= 12
    inline = np.where(np.arange(12) < lengths[:, None], window, 0).astype(np.uint8)
    as_bytes = views.view(np.uint8).reshape(n, 16)
    as_bytes[short, 4:16] = inline[short]
    as_bytes[~short, 4:8] = window[~short, :4]
    views[~short, 2] = 0
    views[~short, 3] = starts[~short].astype(np.int32)
    out = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views), pa.py_buffer(data)])
    return out.cast(pa.string())


def ts_column(ts: pa.Array) -> pa.Array:
    """Timestamps: the writer's strict form cast natively, anything else through ``ts_millis``."""
    typ = pa.timestamp("ms", tz="UTC")
    strict = pc.fill_null(pc.match_substring_regex(ts, _TS), False)
    if pc.all(strict).as_py():
        try:
            return pc.cast(ts, typ)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # an impossible date among them: take the slow way below
    mask = strict.to_numpy(zero_copy_only=False)
    out = pa.nulls(len(ts), pa.int64()).to_numpy(zero_copy_only=False).astype(object)
    values = ts.to_pylist()
    for i in np.flatnonzero(~mask).tolist() if mask.any() else range(len(values)):
        out[i] = None if values[i] is None else ts_millis(values[i])
    if mask.any():
        try:
            cast = pc.cast(ts.filter(pa.array(mask)), typ)
            out[mask] = cast.cast(pa.int64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            for i in np.flatnonzero(mask).tolist():
                out[i] = ts_millis(values[i])
    return pa.array(list(out), type=pa.int64()).cast(typ)


def rebuild_columns(data: ByteData, ends: np.ndarray, lines: pa.StringArray,
                    bad: np.ndarray) -> tuple[dict[str, pa.Array], pa.Array, pa.Array, np.ndarray] | None:
    """Parse the chunk natively and verify each line by rebuilding it.

    Args:
        data: the chunk's complete lines.
        ends: newline positions.
        lines: the lines (with newlines) as a string array.
        bad: lines never to accept (escapes, control bytes, excluded lines); updated in place.

    Returns:
        ``(columns, args_text, error_text, ok)``: sanitised scalar columns, the raw ``args``/``error``
        texts (null where absent), and the mask of verified lines; or None when the native parser
        refused the chunk.
    """
    try:
        parsed = pj.read_json(pa.BufferReader(pa.py_buffer(data)), read_options=pj.ReadOptions(
            block_size=1 << 23), parse_options=_OPTIONS)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    n = len(ends)
    if parsed.num_rows != n:
        return None
    col = {name: parsed.column(name).combine_chunks() for name in parsed.column_names}
    ident = col["identity"]
    cap, evt = pc.struct_field(ident, "capture_id"), pc.struct_field(ident, "event_id")
    text = {k: pc.cast(col[k], pa.string()) for k in ("seq", "latency_ms", "shim_self_us")}
    has_args = col["args"].is_valid().to_numpy(zero_copy_only=False)
    has_error = col["error"].is_valid().to_numpy(zero_copy_only=False)
    with_id = cap.is_valid().to_numpy(zero_copy_only=False)
    with_tool = col["tool"].is_valid().to_numpy(zero_copy_only=False)
    with_lat = col["latency_ms"].is_valid().to_numpy(zero_copy_only=False)
    named = {**{k: col[k] for k in ("ts", "session", "server", "method", "tool", "outcome", "kind")},
             "cap": cap, "evt": evt, **text}
    ln = {k: _lengths(v) for k, v in named.items()}
    head_len = (1 + with_id * (len(_ID1) + ln["cap"] + len(_ID2) + ln["evt"] + len(_ID3))
                + len(_TS1) + ln["ts"] + len(_SESSION) + ln["session"] + len(_SEQ) + ln["seq"]
                + len(_SERVER) + ln["server"] + len(_METHOD) + ln["method"] + 1
                + with_tool * (len(_TOOL) + ln["tool"] + 1))
    lat_len = with_lat * (len(_LAT) + ln["latency_ms"])
    out_len = len(_OUT) + ln["outcome"] + 1
    tail_len = len(_SHIM) + ln["shim_self_us"] + len(_KIND) + ln["kind"] + len(_END)
    arr = np.frombuffer(data, dtype=np.uint8)
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)
    line_len = ends.astype(np.int64) + 1 - starts
    fo = head_len + lat_len  # offset of the outcome key in a line without args
    both = has_args & has_error
    if both.any():
        found = pc.find_substring(lines.filter(pa.array(both)), _OUT).to_numpy(zero_copy_only=False)
        fo[both] = found.astype(np.int64)
    only_args = has_args & ~has_error
    fo[only_args] = (line_len - tail_len - out_len)[only_args]
    a_start = starts + head_len + len(_ARGS)
    a_len = np.where(has_args, starts + fo - lat_len - a_start, 0)
    e_len = np.where(has_error, line_len - tail_len - (fo + out_len + len(_ERR)), 0)
    e_start = np.where(has_error, starts + fo + out_len + len(_ERR), 0)
    args = pc.if_else(pa.array(has_args), _cut(data, arr, a_start, a_len), pa.nulls(n, pa.string()))
    error = pc.if_else(pa.array(has_error), _cut(data, arr, e_start, e_len), pa.nulls(n, pa.string()))
    rebuilt = _join("{", _opt(_ID1, cap, _ID2, evt, _ID3), _TS1, col["ts"], _SESSION, col["session"], _SEQ,
                    text["seq"], _SERVER, col["server"], _METHOD, col["method"], '"',
                    _opt(_TOOL, col["tool"], '"'), _opt(_ARGS, args), _opt(_LAT, text["latency_ms"]),
                    _OUT, col["outcome"], '"', _opt(_ERR, error), _SHIM, text["shim_self_us"], _KIND,
                    col["kind"], _END)
    ok = pc.fill_null(pc.equal(rebuilt, lines.cast(pa.string())), False).to_numpy(zero_copy_only=False)
    ok = ok & ~bad
    with_id = pc.is_valid(cap).to_numpy(zero_copy_only=False)
    if with_id.any():
        good_id = (pc.fill_null(pc.match_substring_regex(cap, _UUID), False).to_numpy(zero_copy_only=False)
                   & pc.fill_null(pc.match_substring_regex(evt, _UUID), False).to_numpy(zero_copy_only=False))
        ok &= ~with_id | good_id
    columns = sanitise_columns(
        ts=ts_column(col["ts"]), seq=col["seq"], latency_ms=col["latency_ms"],
        shim_self_us=col["shim_self_us"],
        capture_id=cap, event_id=evt, **{k: col[k] for k in ("session", "server", "method", "tool", "outcome",
                                                              "kind")})
    return columns, args, error, ok
