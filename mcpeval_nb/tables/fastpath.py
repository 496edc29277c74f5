"""The vectorised path for call lines already in the writer's canonical form.

A line is accepted here only when one RE2 pattern proves it is exactly what a writer (ours or the Rust
tool) produces after sanitisation: struct key order, compact separators, no escapes, every scalar field
already inside its grammar (timestamp form, lowercase session token, labels, methods, outcomes, kinds,
lowercase identity UUIDs).  For such a line ``CallRecord.sanitized()`` changes nothing but ``args`` and
``error``, which are re-sanitised here once per distinct value through the reference functions.  Every
other line (a hand edit, another spelling, a wrong type) is returned to the caller for the reference
path, so the table is the same either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ..jsonfmt import JSONFormatError, dumps, loads
from ..privacy.errorinfo import sanitize_error
from ..privacy.shape import sanitize_shape
from .rows import ts_millis
from .schemas import CALLS_SCHEMA

__all__ = ["FastResult", "fast_calls"]

_S = r"[A-Za-z0-9_.:\-]"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_U64 = r"(?:0|[1-9][0-9]{0,18})"
_TS = (r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)-[0-9]{2}-[0-9]{2}"
       r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z")
_TAIL = r'"outcome":"(?:ok|error|unparsed|unknown)",(?:"error":\{(?:[^{}\\\n]|\{[^{}\\\n]*\})*\},)?'
#: The canonical form of a sanitised call record line (newline included).
CANONICAL = (
    r'^\{(?:"identity":\{"capture_id":"' + _UUID + r'","event_id":"' + _UUID + r'"\},)?'
    r'"ts":"' + _TS + r'","session":"session:[0-9a-f]{64}","seq":' + _U64 + r','
    r'"server":"' + _S + r'{1,128}","method":"' + _S + r'+(?:/' + _S + r'+)*",'
    r'(?:"tool":"' + _S + r'{1,128}",)?(?:"args":[^\\\n]*?,)?(?:"latency_ms":' + _U64 + r',)?'
    + _TAIL + r'"shim_self_us":' + _U64 + r',"kind":"(?:real|synthetic|unparsed)"\}\n$'
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


def _lines(data: bytes | bytearray, ends: np.ndarray) -> pa.StringArray | None:
    offsets = np.empty(len(ends) + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = ends + 1
    arr = pa.LargeStringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        return None  # invalid UTF-8 somewhere in the chunk: the reference path names the line
    return arr


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
            info = sanitize_error(_wrapped(text))
        except (JSONFormatError, TypeError):
            out.append(None)
            continue
        out.append({
            "error_code": dumps(info["code"], sort_keys=True) if "code" in info else None,
            "error_layer": info.get("layer"), "error_retryable": info.get("retryable"),
            "error_kind": info.get("kind"), "error_template": info.get("template"),
            "error_template_id": info.get("template_id")})
    return out


def _dict_map(texts: pa.Array, mapper: Any) -> tuple[pa.DictionaryArray, np.ndarray]:
    """Map distinct values through ``mapper``; returns the mapped column and a per-row failure mask."""
    enc = texts.dictionary_encode()
    mapped = mapper(enc.dictionary.to_pylist())
    bad_keys = np.array([m is False for m in mapped], dtype=bool)
    values = pa.array([None if m is False else m for m in mapped], type=pa.string())
    indices = enc.indices
    bad = bad_keys[indices.fill_null(0).to_numpy(zero_copy_only=False)] & indices.is_valid().to_numpy(
        zero_copy_only=False)
    return pa.DictionaryArray.from_arrays(indices, values), bad


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


def fast_calls(data: bytes | bytearray, ends: np.ndarray, *, exclude: tuple[int, ...] = ()) -> FastResult:
    """Convert the canonical lines of a chunk; see the module docstring.

    Args:
        data: complete lines, each with its newline.
        ends: newline positions in ``data``.
        exclude: chunk line indices never to accept here (over-long lines being skipped).

    Returns:
        The fast rows and the indices of the lines left for the reference path.
    """
    n = len(ends)
    lines = _lines(data, ends) if n else None
    if lines is None:
        return FastResult(_empty(), np.empty(0, np.int64), np.arange(n, dtype=np.int64))
    ok = pc.match_substring_regex(lines, CANONICAL).to_numpy(zero_copy_only=False)
    if exclude:
        ok = ok.copy()
        ok[list(exclude)] = False
    rows = np.flatnonzero(ok)
    if len(rows) == 0:
        return FastResult(_empty(), rows, np.arange(n, dtype=np.int64))
    good = lines if len(rows) == n else lines.filter(pa.array(ok))
    return _convert(good, rows, n)


def _empty() -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=CALLS_SCHEMA)


def _convert(good: pa.LargeStringArray, rows: np.ndarray, n: int) -> FastResult:
    body = good.buffers()[2]
    offsets = np.frombuffer(good.buffers()[1], dtype=np.int64)[good.offset:good.offset + len(good) + 1]
    start, stop = int(offsets[0]), int(offsets[-1])
    parsed = pj.read_json(pa.BufferReader(body.slice(start, stop - start)),
                          read_options=pj.ReadOptions(block_size=1 << 23),
                          parse_options=pj.ParseOptions(explicit_schema=_PARSE_SCHEMA,
                                                        unexpected_field_behavior="ignore"))
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
    }
    batch = pa.RecordBatch.from_arrays([columns[f.name] for f in CALLS_SCHEMA], schema=CALLS_SCHEMA)
    if bad.any():
        keep = ~bad
        batch = batch.filter(pa.array(keep))
        return FastResult(batch, rows[keep], np.sort(np.concatenate(
            [np.setdiff1d(np.arange(n), rows), rows[bad]])).astype(np.int64))
    return FastResult(batch, rows, np.setdiff1d(np.arange(n), rows).astype(np.int64))
