"""serde_json-compatible text (SPEC 0): number layout, escapes, pretty form, parse limits."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mcpeval_nb.jsonfmt import JSONFormatError, dumps, format_number, loads


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3, "3"),
        (-7, "-7"),
        (0, "0"),
        (1e20, "1e20"),
        (1.0, "1.0"),
        (-12.5, "-12.5"),
        (0.00001, "0.00001"),
        (0.001234, "0.001234"),
        (1e-6, "1e-6"),
        (1.5e-7, "1.5e-7"),
        (1e16, "1e16"),
        (1e15, "1000000000000000.0"),
        (100.0, "100.0"),
        (12.34, "12.34"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.8446744073709552e19, "1.8446744073709552e19"),
        (1.2345678901234568e17, "1.2345678901234568e17"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e308"),
    ],
)
def test_numbers_are_laid_out_like_ryu(value: float, text: str) -> None:
    assert format_number(value) == text
    assert dumps(value, sort_keys=True) == text
    assert dumps([value], sort_keys=True) == f"[{text}]"


def test_integers_within_u64_and_i64_stay_integers() -> None:
    assert format_number(2**64 - 1) == "18446744073709551615"
    assert format_number(-(2**63)) == "-9223372036854775808"
    assert dumps({"a": 2**64 - 1, "b": -(2**63)}, sort_keys=True) == (
        '{"a":18446744073709551615,"b":-9223372036854775808}'
    )


def test_integers_outside_u64_and_i64_print_as_floats() -> None:
    assert format_number(10**20) == "1e20"
    assert format_number(2**64) == "1.8446744073709552e19"
    assert format_number(-(2**63) - 1) == "-9.223372036854776e18"
    assert dumps({"big": 10**20, "nested": [2**64]}, sort_keys=True) == (
        '{"big":1e20,"nested":[1.8446744073709552e19]}'
    )


def test_a_string_of_many_digits_is_not_mistaken_for_a_big_integer() -> None:
    assert dumps(["100000000000000000000"], sort_keys=True) == '["100000000000000000000"]'


def test_parsed_integers_outside_u64_and_i64_become_floats() -> None:
    assert loads("100000000000000000000") == 1e20
    assert isinstance(loads("100000000000000000000"), float)
    assert loads("18446744073709551615") == 2**64 - 1
    assert isinstance(loads("-9223372036854775808"), int)
    assert isinstance(loads("-9223372036854775809"), float)
    assert format_number(loads("100000000000000000000")) == "1e20"


def test_minus_zero_literal_reads_as_float_minus_zero_per_spec_reading() -> None:
    # SPEC 0.4 marks this [?]: we pin serde_json's believed behaviour (-0 -> -0.0).
    value = loads("-0")
    assert isinstance(value, float)
    assert math.copysign(1.0, value) == -1.0
    assert format_number(value) == "-0.0"
    assert loads("0") == 0 and isinstance(loads("0"), int)


def test_short_escapes_and_lowercase_unicode_escapes() -> None:
    text = dumps('"\\\b\f\n\r\t\x00\x1f', sort_keys=True)
    assert text == '"\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f"'


def test_del_non_ascii_and_slash_are_written_raw() -> None:
    assert dumps("\x7f/é→😀", sort_keys=True) == '"\x7f/é→😀"'


def test_literal_backslash_u_text_is_not_rewritten() -> None:
    value = "\\u00AB and \\\\u00CD and \x1b"
    text = dumps(value, sort_keys=True)
    assert text == '"\\\\u00AB and \\\\\\\\u00CD and \\u001b"'
    assert loads(text) == value


def test_keys_sorted_by_code_point_or_kept_in_insertion_order() -> None:
    value = {"b": 1, "a": {"z": 1, "Z": 2}, "é": 0, "A": 3}
    assert dumps(value, sort_keys=True) == '{"A":3,"a":{"Z":2,"z":1},"b":1,"é":0}'
    assert dumps(value, sort_keys=False) == '{"b":1,"a":{"z":1,"Z":2},"é":0,"A":3}'


def test_pretty_form_uses_two_spaces_and_colon_space() -> None:
    value = {"b": [1, 2.5], "a": {}, "c": [], "d": {"x": None}}
    assert dumps(value, sort_keys=True, indent=2) == (
        '{\n  "a": {},\n  "b": [\n    1,\n    2.5\n  ],\n  "c": [],\n  "d": {\n    "x": null\n  }\n}'
    )


def test_pretty_form_also_lays_out_floats_like_ryu() -> None:
    assert dumps({"x": 1e20, "y": 1.5e-7}, sort_keys=True, indent=2) == '{\n  "x": 1e20,\n  "y": 1.5e-7\n}'


def test_float_text_inside_strings_is_left_alone() -> None:
    assert dumps(["1e+20", 1e20], sort_keys=True) == '["1e+20",1e20]'


def test_non_finite_floats_serialise_as_null() -> None:
    assert dumps([math.nan, math.inf, -math.inf], sort_keys=True) == "[null,null,null]"


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_nesting_depth_127_parses_following_serde_json_limit() -> None:
    value = loads(_nested(127))
    assert isinstance(value, list)
    assert loads('{"a":' * 126 + "1" + "}" * 126) is not None


def test_nesting_depth_128_is_refused_following_serde_json_limit() -> None:
    with pytest.raises(JSONFormatError, match="recursion limit"):
        loads(_nested(128))
    with pytest.raises(JSONFormatError, match="recursion limit"):
        loads('{"a":' * 127 + "[]" + "}" * 127)


def test_deep_nesting_beyond_python_recursion_is_refused_cleanly() -> None:
    with pytest.raises(JSONFormatError):
        loads(_nested(100_000))


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "[NaN]", '{"a":Infinity}'])
def test_nan_and_infinity_literals_are_refused(text: str) -> None:
    with pytest.raises(JSONFormatError):
        loads(text)


@pytest.mark.parametrize("text", ["1e400", "-1e400"])
def test_floats_out_of_range_are_refused(text: str) -> None:
    with pytest.raises(JSONFormatError, match="out of range"):
        loads(text)


@pytest.mark.parametrize("text", ["", "{", "[1,]", "01", "'a'", '"\\ud800"', "1 2", '"a\nb"', "\ufeff1"])
def test_text_serde_refuses_is_refused_without_quoting_it(text: str) -> None:
    with pytest.raises(JSONFormatError) as info:
        loads(text)
    if len(text) > 2:
        assert text not in str(info.value)


def test_invalid_utf8_bytes_are_refused() -> None:
    with pytest.raises(JSONFormatError):
        loads(b'"\xff"')


def test_surrounding_json_whitespace_is_accepted() -> None:
    assert loads(" \t\r\n[1] \n") == [1]
    assert loads(b'{"a":"\\u00e9"}') == {"a": "é"}


def test_valid_surrogate_pairs_parse() -> None:
    assert loads('"\\ud83d\\ude00"') == "😀"


def test_dumps_then_loads_round_trips_values() -> None:
    value = {"a": [1, -2.5, 1e20, None, True, "x\u0001y"], "b": {"c": -0.0}}
    assert dumps(loads(dumps(value, sort_keys=True)), sort_keys=True) == dumps(value, sort_keys=True)


def test_every_c0_control_is_escaped_as_serde_json_does() -> None:
    short = {0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
    for code in range(0x20):
        expected = short.get(code, f"\\u{code:04x}")
        assert dumps(chr(code), sort_keys=True) == f'"{expected}"'
        assert dumps({chr(code): 1}, sort_keys=True) == f'{{"{expected}":1}}'


# Numbers past a double's precision: the reference (serde_json's default parser) accumulates digits in a
# u64 and scales by a power of ten, so it is not correctly rounded there (docs/formats.md, "Numbers").
@pytest.mark.parametrize(
    ("literal", "text"),
    [
        ("123456789012345678901234", "1.2345678901234567e23"),
        ("-123456789012345678901234", "-1.2345678901234567e23"),
        ("2.2250738585072011e-308", "2.2250738585072014e-308"),
        ("18446744073709551616", "1.8446744073709552e19"),
        ("100000000000000000000", "1e20"),
    ],
)
def test_numbers_past_a_doubles_precision_read_as_the_reference_reads_them(literal: str, text: str) -> None:
    assert format_number(loads(literal)) == text
    assert dumps(loads(f"[{literal}]"), sort_keys=True) == f"[{text}]"


def test_big_integers_in_memory_print_as_the_reference_reads_their_digits() -> None:
    assert format_number(123456789012345678901234) == "1.2345678901234567e23"
    assert dumps({"n": -123456789012345678901234}, sort_keys=True) == '{"n":-1.2345678901234567e23}'


def test_exponents_past_the_reference_table_follow_its_steps() -> None:
    with pytest.raises(JSONFormatError):
        loads("1e400")
    with pytest.raises(JSONFormatError):
        loads("1e99999999999")
    assert loads("0e400") == 0.0
    assert loads("1e-400") == 0.0
    assert math.copysign(1.0, loads("-1e-99999999999")) == -1.0


@given(st.integers(min_value=1, max_value=10**19 - 1), st.integers(min_value=-290, max_value=290))
def test_up_to_19_significant_digits_stay_correctly_rounded(digits: int, exponent: int) -> None:
    literal = f"{digits}e{exponent}"
    assume(math.isfinite(float(literal)))  # past the largest double serde_json refuses: tested above
    value = loads(literal)
    assert value == float(literal)
    mid = str(digits)
    if len(mid) > 1:
        dotted = f"{mid[0]}.{mid[1:]}e{exponent + len(mid) - 1}"
        assert loads(dotted) == float(dotted)
