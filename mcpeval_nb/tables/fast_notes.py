"""The fast path for annotation lines already in the writer's canonical form.

The same proof as the calls' ``rebuild`` strategy: ``pyarrow.json`` parses the whole chunk with an
explicit schema, each line is rebuilt from the parsed values in the writer's key order
(``ts, session[, seq][, event_id], kind, note``, compact, no escapes) and compared byte for byte with the
original.  A line that compares equal is exactly the writer's rendering of those values, so the JSON
parse of the reference path would give the same values; those are then sanitised once per distinct
value by the very rule objects ``AnnotationRecord.sanitized()`` applies (``ANNOTATION_RULES``).  Lines
with a backslash or a control byte (escapes, CRLF) never compare equal and, like every other line that
does not (a hand edit, another key order, a wrong type), go to the reference path; when the native
parser refuses the chunk, all of it does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ..privacy.read_rules import ANNOTATION_RULES, ReadRule, rule_for
from .canon import ByteData
from .fastpath import FastResult, line_array, unescaped
from .rebuild import ts_column
from .schemas import ANNOTATIONS_SCHEMA

__all__ = ["ENABLED", "fast_annotations"]

#: Tests turn the fast path off to obtain the reference table of the same journal.
ENABLED = True

_PARSE = pa.schema([("ts", pa.string()), ("session", pa.string()), ("seq", pa.uint64()),
                    ("event_id", pa.string()), ("kind", pa.string()), ("note", pa.string())])
_OPTIONS = pj.ParseOptions(explicit_schema=_PARSE, unexpected_field_behavior="ignore")
_RULES: dict[str, ReadRule] = {name: rule_for(ANNOTATION_RULES, name)
                               for name in ("session", "kind", "note", "event_id")}


def _empty(n: int) -> FastResult:
    return FastResult(pa.RecordBatch.from_pylist([], schema=ANNOTATIONS_SCHEMA), np.empty(0, np.int64),
                      np.arange(n, dtype=np.int64))


def _mapped(column: pa.Array, rule: ReadRule) -> pa.Array:
    """``rule`` over each distinct value of a string column (nulls stay null)."""
    enc = column.dictionary_encode()
    values = [rule.apply(v) for v in enc.dictionary.to_pylist()]
    return pa.array(values, pa.string()).take(enc.indices)


def _opt(*parts: Any) -> pa.Array:
    return pc.fill_null(pc.binary_join_element_wise(*parts, ""), "")


def fast_annotations(data: ByteData, ends: np.ndarray, *, exclude: tuple[int, ...] = ()) -> FastResult:
    """Convert the canonical annotation lines of a chunk; see the module docstring.

    Args:
        data: complete lines, each with its newline.
        ends: newline positions in ``data``.
        exclude: chunk line indices never to accept here (over-long lines being skipped).

    Returns:
        The fast rows (``ANNOTATIONS_SCHEMA``, line order) and the indices left for the reference path.
    """
    n = len(ends)
    lines = line_array(data, ends) if n and ENABLED else None
    if lines is None:
        return _empty(n)
    try:
        parsed = pj.read_json(pa.BufferReader(pa.py_buffer(data)),
                              read_options=pj.ReadOptions(block_size=1 << 23), parse_options=_OPTIONS)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _empty(n)
    if parsed.num_rows != n:
        return _empty(n)
    col = {name: parsed.column(name).combine_chunks() for name in _PARSE.names}
    rebuilt = pc.binary_join_element_wise(
        '{"ts":"', col["ts"], '","session":"', col["session"], '"',
        _opt(',"seq":', pc.cast(col["seq"], pa.string())), _opt(',"event_id":"', col["event_id"], '"'),
        ',"kind":"', col["kind"], '","note":"', col["note"], '"}\n', "")
    ok = pc.fill_null(pc.equal(rebuilt, lines.cast(pa.string())), False).to_numpy(zero_copy_only=False)
    ok = ok & unescaped(data, ends, exclude)
    rows = np.flatnonzero(ok)
    if len(rows) == 0:
        return _empty(n)
    keep = pa.array(ok)
    col = {name: column.filter(keep) for name, column in col.items()}
    batch = pa.RecordBatch.from_arrays([
        ts_column(col["ts"]), _mapped(col["session"], _RULES["session"]), col["seq"],
        _mapped(col["event_id"], _RULES["event_id"]), _mapped(col["kind"], _RULES["kind"]),
        _mapped(col["note"], _RULES["note"]),
    ], schema=ANNOTATIONS_SCHEMA)
    return FastResult(batch, rows, np.flatnonzero(~ok))
