"""The fast path for call lines already in the writer's canonical form.

A line is accepted here only when one of the strategies proves it is exactly what a writer (ours or the
Rust tool) produces: struct key order, compact separators, no escapes.  Tried in order
(``STRATEGIES``): the compiled scanner (``canon``), a native ``pyarrow.json`` parse proven by rebuilding
each line (``rebuild``), and last one RE2 pattern per line (``CANONICAL``), which also checks every
scalar field's grammar.  The scalar values of proven lines are sanitised once per distinct value
(``sanitise``), ``args`` and ``error`` here, once per distinct text, through the reference functions.
Every other line (a hand edit, another spelling, a wrong type) is returned to the caller for the
reference path, so the table is the same either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ..clock import ts_millis
from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.errorinfo import code_text, sanitize_error
from ..privacy.read_rules import KINDS, OUTCOMES
from ..privacy.shape import sanitize_shape
from . import canon
from .canon import ByteData
from .extcols import ext_columns, null_ext_columns, server_ms_column
from .rebuild import rebuild_columns
from .sanitise import remap
from .schemas import CALLS_SCHEMA

__all__ = ["FastResult", "STRATEGIES", "fast_calls", "line_array", "unescaped"]

#: Strategies in the order they are tried: the compiled scanner (``canon``, when built), a native parse
#: proven by rebuilding each line (``rebuild``), one RE2 pattern per line (the fallback, always on).
#: Tests narrow this to check each strategy against the reference reader.
STRATEGIES: tuple[str, ...] = ("canon", "rebuild")

_S = r"[A-Za-z0-9_.:\-]"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_U64 = r"(?:0|[1-9][0-9]{0,18})"
_TS = (r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)-[0-9]{2}-[0-9]{2}"
       r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z")
_TAIL = (r'"outcome":"(?:' + "|".join(OUTCOMES) + r')",'
         r'(?:"error":\{(?:[^{}\\\n]|\{[^{}\\\n]*\})*\},)?')
#: The canonical form of a sanitised call record line (newline included).
CANONICAL = (
    r'^\{(?:"identity":\{"capture_id":"' + _UUID + r'","event_id":"' + _UUID + r'"\},)?'
    r'"ts":"' + _TS + r'","session":"session:[0-9a-f]{64}","seq":' + _U64 + r','
    r'"server":"' + _S + r'{1,128}","method":"' + _S + r'+(?:/' + _S + r'+)*",'
    r'(?:"tool":"' + _S + r'{1,128}",)?(?:"args":[^\\\n]*?,)?(?:"latency_ms":' + _U64 + r',)?'
    + _TAIL + r'"shim_self_us":' + _U64 + r',"kind":"(?:' + "|".join(KINDS) + r')"\}\n$'
)
_HAS_ARGS = (r'^\{(?:"identity":\{[^{}]*\},)?"ts":"[^"]*","session":"[^"]*","seq":[0-9]+,'
             r'"server":"[^"]*","method":"[^"]*",(?:"tool":"[^"]*",)?"args":')

_PARSE_SCHEMA = pa.schema([
    ("identity", pa.struct([("capture_id", pa.string()), ("event_id", pa.string())])),
    ("ts", pa.string()), ("session", pa.string()), ("seq", pa.uint64()), ("server", pa.string()),
    ("method", pa.string()), ("tool", pa.string()), ("latency_ms", pa.uint64()),
    ("outcome", pa.string()), ("shim_self_us", pa.uint64()), ("kind", pa.string()),
])
_ERROR_FIELDS = ("error_code", "error_layer", "error_retryable", "error_kind", "error_template",
                 "error_template_id")


@dataclass(frozen=True)
class FastResult:
    """The rows the fast path produced and the lines it left for the reference path.

    Attributes:
        batch: ``CALLS_SCHEMA`` rows, in line order.
        rows: chunk line indices of ``batch``'s rows.
        slow: chunk line indices for the reference path.
    """

    batch: pa.RecordBatch
    rows: np.ndarray
    slow: np.ndarray


def line_array(data: ByteData, ends: np.ndarray) -> pa.StringArray | None:
    """The chunk's lines (newlines included) as strings; None when the chunk is not valid UTF-8."""
    offsets = np.empty(len(ends) + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = ends + 1
    arr = pa.LargeStringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        return None  # invalid UTF-8 somewhere in the chunk: the reference path names the line
    return arr


def unescaped(data: ByteData, ends: np.ndarray, exclude: tuple[int, ...] = ()) -> np.ndarray:
    """The lines with no backslash and no control byte but their newline, and not in ``exclude``."""
    arr = np.frombuffer(data, dtype=np.uint8)
    ok = np.ones(len(ends), dtype=bool)
    ok[list(exclude)] = False
    escapes = np.flatnonzero(((arr < 0x20) & (arr != 10)) | (arr == 0x5C))
    if len(escapes):
        ok[np.searchsorted(ends, escapes)] = False
    return ok


def _wrapped(text: str) -> Any:
    # Parse as the value of a member, so the depth limit counts the enclosing record object.
    return loads('{"v":' + text + "}")["v"]


def _args_map(values: list[str]) -> list[str | bool | None]:
    out: list[str | bool | None] = []
    for text in values:
        try:
            value = _wrapped(text)
        except JSONFormatError:
            out.append(False)
            continue
        out.append(None if value is None else dumps(sanitize_shape(value), sort_keys=True))
    return out


def _error_rows(values: list[str]) -> list[dict[str, Any] | None]:
    out: list[dict[str, Any] | None] = []
    for text in values:
        try:
            value = _wrapped(text)
        except JSONFormatError:
            out.append(None)
            continue
        if value is None:
            out.append({"null": True})
            continue
        if not isinstance(value, dict):
            out.append(None)
            continue
        try:
            info = sanitize_error(value)
        except TypeError:
            out.append(None)
            continue
        out.append({
            "error_code": code_text(info["code"]) if "code" in info else None,
            "error_layer": info.get("layer"), "error_retryable": info.get("retryable"),
            "error_kind": info.get("kind"), "error_template": info.get("template"),
            "error_template_id": info.get("template_id")})
    return out


def _dict_map(texts: pa.Array, mapper: Any) -> tuple[pa.DictionaryArray, np.ndarray]:
    """Map distinct values through ``mapper``; returns the mapped column and a per-row failure mask."""
    enc = texts.dictionary_encode()
    mapped = mapper(enc.dictionary.to_pylist())
    bad_keys = np.array([m is False for m in mapped], dtype=bool)
    indices = enc.indices
    if len(mapped) == 0:
        return pa.nulls(len(texts), pa.dictionary(pa.int32(), pa.string())), np.zeros(len(texts), bool)
    bad = bad_keys[indices.fill_null(0).to_numpy(zero_copy_only=False)] & indices.is_valid().to_numpy(
        zero_copy_only=False)
    return remap(enc, [None if m is False or m is True else m for m in mapped]), bad


def _scatter(mask: np.ndarray, values: pa.Array, size: int) -> pa.Array:
    """Spread ``values`` (one per True in ``mask``) over ``size`` rows, null elsewhere."""
    if mask.all():
        return values
    positions = np.full(size, -1, dtype=np.int64)
    positions[mask] = np.arange(int(mask.sum()))
    idx = pa.array(positions, mask=positions < 0)
    return values.take(idx)


def _between(lines: pa.Array, after: str, before: tuple[str, ...]) -> pa.Array:
    rest = pc.list_element(pc.split_pattern(lines, after, max_splits=1), 1)
    for marker in before:
        rest = pc.list_element(pc.split_pattern(rest, marker, max_splits=1), 0)
    return rest


def _ts_column(ts: pa.Array) -> pa.Array:
    try:
        return pc.cast(ts, pa.timestamp("ms", tz="UTC"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        millis = [ts_millis(t) for t in ts.to_pylist()]
        return pa.array(millis, type=pa.int64()).cast(pa.timestamp("ms", tz="UTC"))


def fast_calls(data: ByteData, ends: np.ndarray, *, exclude: tuple[int, ...] = ()) -> FastResult:
    """Convert the canonical lines of a chunk; see the module docstring.

    Args:
        data: complete lines, each with its newline.
        ends: newline positions in ``data``.
        exclude: chunk line indices never to accept here (over-long lines being skipped).

    Returns:
        The fast rows and the indices of the lines left for the reference path.
    """
    n = len(ends)
    if n and "canon" in STRATEGIES and canon.available():
        skip = np.zeros(n, dtype=np.uint8)
        skip[list(exclude)] = 1
        scanned = canon.scan_columns(data, ends, skip)
        return _finish(scanned.columns, scanned.args, scanned.error, scanned.ok, scanned.ext)
    lines = line_array(data, ends) if n else None
    if lines is None:
        return FastResult(_empty(), np.empty(0, np.int64), np.arange(n, dtype=np.int64))
    bad = ~unescaped(data, ends, exclude)
    rebuilt = rebuild_columns(data, ends, lines, bad) if "rebuild" in STRATEGIES else None
    if rebuilt is not None:
        return _from_rebuilt(*rebuilt)
    ok = pc.match_substring_regex(lines, CANONICAL).to_numpy(zero_copy_only=False)
    if exclude:
        ok = ok.copy()
        ok[list(exclude)] = False
    rows = np.flatnonzero(ok)
    if len(rows) == 0:
        return FastResult(_empty(), rows, np.arange(n, dtype=np.int64))
    good = lines if len(rows) == n else lines.filter(pa.array(ok))
    return _convert(good, rows, n)


def _from_rebuilt(columns: dict[str, pa.Array], args: pa.Array, error: pa.Array,
                  ok: np.ndarray) -> FastResult:
    if not ok.all():
        mask = pa.array(ok)
        columns = {k: v.filter(mask) for k, v in columns.items()}
        args, error = args.filter(mask), error.filter(mask)
    return _finish(columns, args, error, ok)


def _finish(columns: dict[str, pa.Array], args: pa.Array, error: pa.Array, ok: np.ndarray,
            ext: pa.Array | None = None) -> FastResult:
    """Sanitise ``args``/``error``/``ext`` of the proven rows (columns hold those rows only) and build the
    batch."""
    rows = np.flatnonzero(ok)
    size = len(rows)
    bad = np.zeros(size, dtype=bool)
    if ext is None:
        extra = null_ext_columns(size)
    else:
        extra, failed_ext = ext_columns(ext)
        bad |= failed_ext
    has_args = args.is_valid().to_numpy(zero_copy_only=False)
    mapped_args, failed = _dict_map(args, _args_map)
    bad |= failed & has_args
    enc = error.dictionary_encode()
    infos = _error_rows(enc.dictionary.to_pylist())
    idx = enc.indices.fill_null(0).to_numpy(zero_copy_only=False)
    present = enc.indices.is_valid().to_numpy(zero_copy_only=False)
    if len(infos):
        bad |= present & np.array([i is None for i in infos], dtype=bool)[idx]
        null_error = np.array([i is not None and i.get("null") is True for i in infos], dtype=bool)[idx]
    else:
        null_error = np.zeros(size, dtype=bool)
    has_error = present & ~null_error
    out = dict(columns)
    out["args"] = mapped_args
    out["has_error"] = pa.array(has_error)
    for name in _ERROR_FIELDS:
        typ = pa.bool_() if name == "error_retryable" else pa.string()
        values = pa.array([None if i is None else i.get(name) for i in infos], type=typ)
        column = values.take(enc.indices) if len(infos) else pa.nulls(size, typ)
        out[name] = column if name == "error_retryable" else column.dictionary_encode()
    for name in ("session", "server", "method", "tool", "outcome", "kind"):
        if not pa.types.is_dictionary(out[name].type):
            out[name] = out[name].dictionary_encode()
    out.update(extra)
    out["server_ms"] = server_ms_column(out["latency_ms"], out["wait_ms"])
    batch = pa.RecordBatch.from_arrays([out[f.name] for f in CALLS_SCHEMA], schema=CALLS_SCHEMA)
    if bad.any():
        batch = batch.filter(pa.array(~bad))
        slow = np.sort(np.concatenate([np.flatnonzero(~ok), rows[bad]])).astype(np.int64)
        return FastResult(batch, rows[~bad], slow)
    return FastResult(batch, rows, np.flatnonzero(~ok).astype(np.int64))


def _empty() -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=CALLS_SCHEMA)


def _convert(good: pa.LargeStringArray, rows: np.ndarray, n: int) -> FastResult:
    body = good.buffers()[2]
    offsets = np.frombuffer(good.buffers()[1], dtype=np.int64)[good.offset:good.offset + len(good) + 1]
    start, stop = int(offsets[0]), int(offsets[-1])
    try:
        parsed = pj.read_json(pa.BufferReader(body.slice(start, stop - start)),
                              read_options=pj.ReadOptions(block_size=1 << 23),
                              parse_options=pj.ParseOptions(explicit_schema=_PARSE_SCHEMA,
                                                            unexpected_field_behavior="ignore"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # a field of a wrong JSON type hidden inside the lazily matched args: all to the reference path
        return FastResult(_empty(), np.empty(0, np.int64), np.arange(n, dtype=np.int64))
    size = len(good)
    if parsed.num_rows != size:  # cannot happen for canonical lines; stay exact if it ever does
        return FastResult(_empty(), np.empty(0, np.int64), np.arange(n, dtype=np.int64))
    bad = np.zeros(size, dtype=bool)
    method = parsed.column("method").combine_chunks()
    bad |= pc.greater(pc.binary_length(method), 128).to_numpy(zero_copy_only=False)
    has_args = pc.match_substring_regex(good, _HAS_ARGS).to_numpy(zero_copy_only=False)
    args = pa.nulls(size, pa.dictionary(pa.int32(), pa.string()))
    if has_args.any():
        sub = good if has_args.all() else good.filter(pa.array(has_args))
        texts = _between(sub, '"args":', (',"latency_ms":', ',"outcome":"'))
        mapped, failed = _dict_map(texts, _args_map)
        bad[np.flatnonzero(has_args)[failed]] = True
        args = _scatter(has_args, mapped, size)
    head = pc.list_element(pc.split_pattern(good, ',"shim_self_us":', max_splits=1, reverse=True), 0)
    has_error = pc.ends_with(head, "}").to_numpy(zero_copy_only=False)
    errors = {name: pa.nulls(size, pa.bool_() if name == "error_retryable" else pa.string())
              for name in _ERROR_FIELDS}
    if has_error.any():
        sub = head if has_error.all() else head.filter(pa.array(has_error))
        texts = pc.list_element(pc.split_pattern(sub, ',"error":', max_splits=1, reverse=True), 1)
        enc = texts.dictionary_encode()
        infos = _error_rows(enc.dictionary.to_pylist())
        idx = enc.indices.to_numpy(zero_copy_only=False)
        failed = np.array([i is None for i in infos], dtype=bool)[idx]
        bad[np.flatnonzero(has_error)[failed]] = True
        for name in _ERROR_FIELDS:
            typ = pa.bool_() if name == "error_retryable" else pa.string()
            column = pa.array([None if i is None else i[name] for i in infos], type=typ).take(enc.indices)
            errors[name] = _scatter(has_error, column, size)
    identity = parsed.column("identity").combine_chunks()
    columns: dict[str, pa.Array] = {
        "ts": _ts_column(parsed.column("ts").combine_chunks()),
        "session": parsed.column("session").combine_chunks().dictionary_encode(),
        "seq": parsed.column("seq").combine_chunks(),
        "server": parsed.column("server").combine_chunks().dictionary_encode(),
        "method": method.dictionary_encode(),
        "tool": parsed.column("tool").combine_chunks().dictionary_encode(),
        "args": args,
        "latency_ms": parsed.column("latency_ms").combine_chunks(),
        "outcome": parsed.column("outcome").combine_chunks().dictionary_encode(),
        "has_error": pa.array(has_error),
        **{k: (v if k == "error_retryable" else v.dictionary_encode()) for k, v in errors.items()},
        "shim_self_us": parsed.column("shim_self_us").combine_chunks(),
        "kind": parsed.column("kind").combine_chunks().dictionary_encode(),
        "capture_id": pc.struct_field(identity, "capture_id"),
        "event_id": pc.struct_field(identity, "event_id"),
        **null_ext_columns(size),
    }
    columns["server_ms"] = columns["latency_ms"]
    batch = pa.RecordBatch.from_arrays([columns[f.name] for f in CALLS_SCHEMA], schema=CALLS_SCHEMA)
    if bad.any():
        keep = ~bad
        batch = batch.filter(pa.array(keep))
        return FastResult(batch, rows[keep], np.sort(np.concatenate(
            [np.setdiff1d(np.arange(n), rows), rows[bad]])).astype(np.int64))
    return FastResult(batch, rows, np.setdiff1d(np.arange(n), rows).astype(np.int64))
