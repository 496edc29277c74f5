"""serde_json-compatible JSON text (SPEC section 0).

``dumps`` writes the exact bytes the Rust tool writes: compact ``,``/``:`` separators (or the 2-space
pretty form), raw UTF-8, lowercase ``\\u00XX`` escapes for other C0 controls, integers in decimal and
floats in ryu's layout (``1e20``, ``1.0``, ``-12.5``, ``0.00001``, ``1.5e-7``).  ``loads`` reads JSON the
way serde_json does: integers outside u64/i64 and ``-0`` become floats, ``NaN``/``Infinity`` literals and
out-of-range floats are refused, and input nested 128 levels deep is refused.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .limits import MAX_JSON_DEPTH

__all__ = ["JSONFormatError", "dumps", "format_number", "loads", "max_depth_exceeded", "reference_float"]

_U64_MAX = 2**64 - 1
_I64_MIN = -(2**63)

# A JSON string literal (skipped) or a float in Python's exponent layout (rewritten).
_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?)(\d)(?:\.(\d+))?e([+-]\d+)')


class JSONFormatError(ValueError):
    """Text that serde_json would refuse to parse; the message never quotes the text.

    Attributes:
        line / column: where the text stops being JSON (1-based), when known.
    """

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        where = "" if line is None else f"line {line}, column {column}: "
        super().__init__(where + message)
        self.line, self.column = line, column


def _position(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of ``pos`` in ``text``."""
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _ryu_layout(sign: str, digits: str, exp10: int) -> str:
    """Lay out ``0.<digits> x 10^exp10``-style shortest digits the way ryu does.

    ``digits`` are the shortest round-trip digits and ``exp10 + 1`` is ``kk`` in SPEC 0.4 terms
    (the position of the decimal point relative to the first digit).
    """
    length = len(digits)
    kk = exp10 + 1
    if kk - length >= 0 and kk <= 16:
        return f"{sign}{digits}{'0' * (kk - length)}.0"
    if 0 < kk <= 16:
        return f"{sign}{digits[:kk]}.{digits[kk:]}"
    if -5 < kk <= 0:
        return f"{sign}0.{'0' * (-kk)}{digits}"
    mantissa = digits if length == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{sign}{mantissa}e{kk - 1}"


def _fix_float(match: re.Match[str]) -> str:
    if match.group(2) is None:
        return match.group(0)
    sign, lead, frac, exp = match.group(1), match.group(2), match.group(3) or "", match.group(4)
    digits = (lead + frac).rstrip("0") or "0"
    return _ryu_layout(sign, digits, int(exp))


def format_number(value: int | float) -> str:
    """Return serde_json's Display text for a number (``3``, ``-12.5``, ``1.0``, ``1e20``).

    Args:
        value: an int (kept integral when it fits u64/i64) or a float.

    Returns:
        The number's text exactly as serde_json prints it.
    """
    if isinstance(value, bool):
        raise TypeError("booleans are not numbers")
    if isinstance(value, int):
        if _I64_MIN <= value <= _U64_MAX:
            return str(value)
        value = _big_int_float(value)
    if not math.isfinite(value):
        return "null"
    text = repr(value)
    if "e" in text:
        return _TOKEN_RE.sub(_fix_float, text)
    return text  # Python already prints 100.0 / 12.34 / 0.001 as ryu does for -4 < kk <= 16


def _big_int_float(value: int) -> float:
    """An integer outside u64/i64 as the reference reads its decimal text (infinite when out of range)."""
    result = reference_float(str(value))
    return math.copysign(math.inf, value) if result is None else result


def _finite(value: Any) -> Any:
    """Replace NaN and infinities by None (serde_json serialises them as null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not _I64_MIN <= value <= _U64_MAX:
        return _big_int_float(value)
    return value


def dumps(value: Any, *, sort_keys: bool, indent: int | None = None) -> str:
    """Serialise ``value`` exactly as serde_json does.

    Args:
        value: JSON-compatible Python data (dict, list, str, int, float, bool, None).
        sort_keys: sort object keys (serde ``Value`` objects); False keeps insertion order
            (``#[derive(Serialize)]`` structs).
        indent: None for the compact form, 2 for ``to_string_pretty``.

    Returns:
        The JSON text (no trailing newline).
    """
    seps = (",", ":") if indent is None else (",", ": ")
    try:
        text = json.dumps(value, sort_keys=sort_keys, indent=indent, separators=seps,
                          ensure_ascii=False, allow_nan=False)
    except (ValueError, OverflowError):
        text = None
    if text is None or _LONG_DIGITS_RE.search(text):
        # NaN/inf become null; integers outside u64/i64 become floats (serde_json has no bigger ints).
        text = json.dumps(_finite(value), sort_keys=sort_keys, indent=indent, separators=seps,
                          ensure_ascii=False, allow_nan=False)
    if "e+" in text or "e-" in text:
        text = _TOKEN_RE.sub(_fix_float, text)
    if "\\u00" in text:
        text = _lower_escapes(text)
    return text


# Only escapes with hex letters differ (\u000B, \u001F ...).  An escaped backslash pair is consumed first,
# so a literal backslash followed by the text "u001F" is never mistaken for an escape.
_ESCAPE_RE = re.compile(r"\\\\|\\u00[01][A-F]")
# 19+ digits in a row: the only way an integer outside u64/i64 can appear in the text.
_LONG_DIGITS_RE = re.compile(r"\d{19}")


def _lower_escapes(text: str) -> str:
    # Python writes \u001F; serde_json writes \u001f.  Only hex letters differ.
    return _ESCAPE_RE.sub(lambda m: m.group(0).lower(), text)


def _parse_int(text: str) -> int | float:
    if text == "-0":
        return -0.0
    value = int(text)
    if _I64_MIN <= value <= _U64_MAX:
        return value
    return _parse_float(text)


def _parse_float(text: str) -> float:
    # The decoder hands over valid literals only: a short one without an exponent has <= 19 digits.
    value = float(text) if len(text) < 20 and "e" not in text and "E" not in text else reference_float(text)
    if value is None or not math.isfinite(value):
        raise JSONFormatError("number out of range")
    return value


# serde_json's default (not ``float_roundtrip``) steps: a u64 of digits scaled by a table of 1e0..1e308.
_POW10 = tuple(float(f"1e{i}") for i in range(309))
_I32_MAX = 2**31 - 1
_NUMBER_PARTS_RE = re.compile(r"(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?)(\d+))?")


def reference_float(text: str) -> float | None:
    """The f64 the reference reads for a JSON number literal (docs/formats.md, "Numbers").

    Up to 19 significant digits and a scaled exponent within +-308: correctly rounded; otherwise the
    reference's steps are replayed (digits accumulate in a u64 until the next would overflow, then one
    multiplication or division by a power of ten; past the table, divisions by 1e308 first).

    Args:
        text: a JSON number literal.

    Returns:
        The value, or None when the reference refuses the number as out of range.

    Raises:
        JSONFormatError: ``text`` is not a JSON number.
    """
    match = _NUMBER_PARTS_RE.fullmatch(text)
    if match is None:
        raise JSONFormatError("invalid number")
    sign, whole, frac, exp_sign, exp_digits = match.groups()
    if len(whole) + len(frac or "") < 20 and (exp_digits is None or len(exp_digits) < 3):
        return _correctly_rounded(text)  # the common case: at most 19 digits, well inside the table
    significand = exponent = significant = 0
    for position, char in enumerate(whole + (frac or "")):
        fraction = position >= len(whole)
        digit = ord(char) - 48
        significant += 1 if significant or digit else 0
        if significand * 10 + digit > _U64_MAX:  # the reference stops accumulating here
            if fraction:
                break
            exponent += 1
            continue
        significand = significand * 10 + digit
        exponent -= 1 if fraction else 0
    if exp_digits is not None:
        value = int(exp_digits)
        if value > _I32_MAX:  # the reference's exponent overflow: zero, or out of range
            return None if significand and exp_sign != "-" else (-0.0 if sign else 0.0)
        exponent = max(-(2**31), min(_I32_MAX, exponent + (-value if exp_sign == "-" else value)))
    if significant <= 19 and abs(exponent) <= 308:
        return _correctly_rounded(text)
    return _from_parts(sign == "-", significand, exponent)


def _correctly_rounded(text: str) -> float | None:
    return None if math.isinf(result := float(text)) else result


def _from_parts(negative: bool, significand: int, exponent: int) -> float | None:
    value = float(significand)
    while abs(exponent) > 308:
        if value == 0.0:
            break
        if exponent >= 0:
            return None
        value /= 1e308
        exponent += 308
    else:
        value = value * _POW10[exponent] if exponent >= 0 else value / _POW10[-exponent]
    return None if math.isinf(value) else -value if negative else value


def _refuse_constant(_name: str) -> Any:
    raise JSONFormatError("NaN and Infinity are not JSON")


_DECODER = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float,
                            parse_constant=_refuse_constant)
_SURROGATE_RE = re.compile(r"\\u[dD][89a-fA-F]")


def max_depth_exceeded(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when ``value`` nests ``limit`` or more arrays/objects (serde_json's refusal point)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            if depth >= limit:
                return True
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            if depth >= limit:
                return True
            stack.extend((v, depth + 1) for v in node if isinstance(v, dict | list))
    return False


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def loads(text: str | bytes) -> Any:
    """Parse JSON the way serde_json does.

    Args:
        text: the JSON text (bytes must be UTF-8).

    Returns:
        The parsed value: big integers as floats, ``-0`` as ``-0.0``.

    Raises:
        JSONFormatError: the text is not JSON serde_json accepts (the message never quotes it).
    """
    try:
        if isinstance(text, bytes | bytearray | memoryview):
            text = bytes(text).decode("utf-8")
        value, end = _DECODER.raw_decode(text, _skip_ws(text, 0))
    except JSONFormatError:
        raise
    except json.JSONDecodeError as exc:  # its message is a fixed phrase: it never quotes the text
        raise JSONFormatError(exc.msg[:1].lower() + exc.msg[1:], line=exc.lineno, column=exc.colno) from None
    except UnicodeDecodeError as exc:
        raise JSONFormatError(f"invalid UTF-8 at byte {exc.start}") from None
    except (ValueError, RecursionError) as exc:
        raise JSONFormatError(f"invalid JSON ({type(exc).__name__})") from None
    if (stop := _skip_ws(text, end)) != len(text):
        line, column = _position(text, stop)
        raise JSONFormatError("trailing characters after JSON value", line=line, column=column)
    if (text.count("[") + text.count("{") >= MAX_JSON_DEPTH) and max_depth_exceeded(value):
        raise JSONFormatError("recursion limit exceeded")
    if "\\u" in text and _SURROGATE_RE.search(text) and _has_lone_surrogate(value):
        raise JSONFormatError("lone surrogate in string escape")
    return value


def _skip_ws(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos] in " \t\n\r":
        pos += 1
    return pos
