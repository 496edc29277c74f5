"""The fast path's first strategy: the compiled scanner (``_canon.c``) proves and cuts each line.

One pass in C per chunk, without the interpreter lock, so two chunks convert on two cores at once.  It
accepts a line only when the line is exactly the writer's rendering of the values it cuts out (see the
C file's header for the grammar), and hands back column buffers for the accepted rows.  The values are
then sanitised once per distinct value through the reference functions (``rebuild.sanitise_columns``),
and ``args``/``error`` are parsed and sanitised by the caller, which refuses a line whose ``args`` or
``error`` text is not valid JSON.  Without the compiled module (no C compiler at install time) the
loader uses ``rebuild``'s pyarrow strategy instead: same tables, slower.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from .sanitise import sanitise_columns

#: Anything holding a chunk's bytes (the scanner hands out memoryviews of fresh buffers).
ByteData = bytes | bytearray | memoryview

__all__ = ["ByteData", "Scanned", "available", "newline_positions", "scan_columns", "scan_texts"]

try:
    from . import _canon as _compiled  # type: ignore[attr-defined]
    _MODULE: ModuleType | None = _compiled
except ImportError:  # pragma: no cover - exercised only where no compiler was available at install
    _MODULE = None

#: Chunks are handed to the scanner in pieces below its 2 GiB offset limit.
_PIECE = 1 << 30
_TS = pa.timestamp("ms", tz="UTC")


def available() -> bool:
    """Whether the compiled scanner was built at install time."""
    return _MODULE is not None


def newline_positions(data: ByteData) -> np.ndarray:
    """The positions of every newline byte in ``data`` (int64)."""
    if _MODULE is not None:
        return np.frombuffer(_MODULE.newlines(data), dtype=np.int64)
    return np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)


#: Output buffers of ``scan_calls``, in order (see ``_canon.c``).
_INTS = ("seq", "latency_ms", "shim_self_us", "ts")
_VALID = ("identity", "tool", "args", "latency", "error", "ext")
_STRS = ("capture_id", "event_id", "session", "server", "method", "tool", "outcome", "kind", "args", "error",
         "ext")


def _bitmap(mask: np.ndarray) -> tuple[pa.Buffer | None, int]:
    nulls = int(len(mask) - np.count_nonzero(mask))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(mask, bitorder="little")), nulls


def _allocate(sizes: list[int]) -> list[pa.Buffer]:
    # Arrow's pool, so the table's memory is accounted for (and returned) like any other Arrow data.
    return [pa.allocate_buffer(size) for size in sizes]


def _scan(data: ByteData, ends: np.ndarray, skip: np.ndarray) -> dict[str, Any]:
    assert _MODULE is not None
    ok, buffers = _MODULE.scan_calls(data, np.ascontiguousarray(ends, dtype=np.int64),
                                     np.ascontiguousarray(skip, dtype=np.uint8), _allocate)
    out: dict[str, Any] = {"ok": ok}
    it = iter(buffers)
    out.update({name: next(it) for name in _INTS})
    out.update({name + "_valid": next(it) for name in _VALID})
    out.update({name: (next(it), next(it)) for name in _STRS})
    return out


def _strings(pair: tuple[pa.Buffer, pa.Buffer], mask: np.ndarray | None, rows: int) -> pa.Array:
    offsets, data = pair
    bitmap, nulls = _bitmap(mask) if mask is not None else (None, 0)
    return pa.StringArray.from_buffers(rows, offsets, data, bitmap, nulls)


def _numbers(raw: pa.Buffer, typ: pa.DataType, mask: np.ndarray | None, rows: int) -> pa.Array:
    bitmap, nulls = _bitmap(mask) if mask is not None else (None, 0)
    return pa.Array.from_buffers(typ, rows, [bitmap, raw], null_count=nulls)


def _pieces(data: ByteData, ends: np.ndarray) -> list[tuple[int, int]]:
    """Line ranges whose bytes stay under ``_PIECE``."""
    out, first, base = [], 0, 0
    while first < len(ends):
        last = int(np.searchsorted(ends, base + _PIECE - 1, side="right"))
        last = max(last, first + 1)
        out.append((first, last))
        base, first = int(ends[last - 1]) + 1, last
    return out


class Scanned(NamedTuple):
    """What the scanner made of a chunk.

    Attributes:
        columns: sanitised scalar columns of the accepted rows.
        args, error, ext: the raw ``args``/``error``/``ext`` texts of the accepted rows (null where absent).
        ok: the per-line mask of accepted lines.
    """

    columns: dict[str, pa.Array]
    args: pa.Array
    error: pa.Array
    ok: np.ndarray
    ext: pa.Array


def scan_columns(data: ByteData, ends: np.ndarray, bad: np.ndarray) -> Scanned:
    """Scan a chunk with the compiled scanner.

    Args:
        data: the chunk's complete lines.
        ends: newline positions.
        bad: lines never to accept (excluded over-long lines).

    Returns:
        The sanitised scalar columns and raw texts of the accepted rows, and the mask of accepted lines.
    """
    if len(data) < _PIECE:
        return _columns(_scan(data, ends, bad))
    parts = []
    view = memoryview(data)
    for first, last in _pieces(data, ends):
        start = 0 if first == 0 else int(ends[first - 1]) + 1
        stop = int(ends[last - 1]) + 1
        parts.append(_columns(_scan(view[start:stop], ends[first:last] - start, bad[first:last])))
    names = parts[0].columns.keys()
    columns = {k: pa.concat_arrays([p.columns[k] for p in parts]) for k in names}
    args, error, ext = (pa.concat_arrays([getattr(p, k) for p in parts]) for k in ("args", "error", "ext"))
    return Scanned(columns, args, error, np.concatenate([p.ok for p in parts]), ext)


def scan_texts(data: ByteData, ends: np.ndarray) -> tuple[np.ndarray, pa.Array, pa.Array, pa.Array]:
    """The scanner's proof alone, for checks that need no columns (the doctor's ``duplicate-key``).

    Args:
        data: the chunk's complete lines (under 1 GiB).
        ends: newline positions.

    Returns:
        ``(ok, args_text, error_text, ext_text)``: the per-line mask of accepted lines and the raw
        ``args``, ``error`` and ``ext`` texts of the accepted rows (null where absent).
    """
    if len(data) >= _PIECE:
        raise ValueError("scan_texts takes chunks under 1 GiB")
    raw = _scan(data, ends, np.zeros(len(ends), dtype=np.uint8))
    ok = np.frombuffer(raw["ok"], dtype=np.uint8).astype(bool)
    rows = int(np.count_nonzero(ok))
    texts = [_strings(raw[k], np.frombuffer(raw[k + "_valid"], dtype=np.uint8).astype(bool), rows)
             for k in ("args", "error", "ext")]
    return ok, texts[0], texts[1], texts[2]


def _columns(raw: dict[str, Any]) -> Scanned:
    ok = np.frombuffer(raw["ok"], dtype=np.uint8).astype(bool)
    rows = int(np.count_nonzero(ok))
    valid = {k: np.frombuffer(raw[k + "_valid"], dtype=np.uint8).astype(bool) for k in _VALID}
    text = {k: _strings(raw[k], None, rows) for k in ("session", "server", "method", "outcome", "kind")}
    columns = sanitise_columns(
        ts=_numbers(raw["ts"], _TS, None, rows), seq=_numbers(raw["seq"], pa.uint64(), None, rows),
        latency_ms=_numbers(raw["latency_ms"], pa.uint64(), valid["latency"], rows),
        shim_self_us=_numbers(raw["shim_self_us"], pa.uint64(), None, rows),
        tool=_strings(raw["tool"], valid["tool"], rows),
        capture_id=_strings(raw["capture_id"], valid["identity"], rows),
        event_id=_strings(raw["event_id"], valid["identity"], rows), **text)
    args = _strings(raw["args"], valid["args"], rows)
    error = _strings(raw["error"], valid["error"], rows)
    return Scanned(columns, args, error, ok, _strings(raw["ext"], valid["ext"], rows))
