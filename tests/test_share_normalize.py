"""Share normalisation: the fast orjson path writes exactly what the exact serde-compatible path writes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeval_nb.jsonfmt import JSONFormatError, dumps, loads
from mcpeval_nb.review.normalize import NotAnObject, normalize_record

_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=16)


def _exact(text: bytes) -> bytes:
    return (dumps(loads(text), sort_keys=True) + "\n").encode()


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _VALUES, max_size=6))
def test_fast_normalisation_matches_the_exact_path(value: dict[str, object]) -> None:
    text = json.dumps(value, ensure_ascii=bool(len(value) % 2)).encode()
    assert normalize_record(text, drop_note=False)[0] == _exact(text)


@pytest.mark.parametrize("text", [
    b'{"a":-0}', b'{"a":[-0,-0.0,0]}', b'{"a":1e16}', b'{"a":123456789012345678901234}',
    b'{"a":"\\u001F\\u007f\\/"}', b'{"a":"\\ud83d\\ude00"}', b'{"b":1,"a":2,"b":3}',
    b'{"\xc3\xa9":1,"z":2,"e":3}', b'{"a":5e-324}', b'{"a":1.7976931348623157e308}',
    b'{"a":' + b"[" * 126 + b"]" * 126 + b"}",
])
def test_awkward_inputs_normalise_exactly(text: bytes) -> None:
    assert normalize_record(text, drop_note=False)[0] == _exact(text)


@pytest.mark.parametrize("text", [
    b'{"a":NaN}', b'{"a":Infinity}', b'{"a":1e400}', b'{"a":"\\ud800"}', b'{"a":"\x01"}',
    b'{"a":' + b"[" * 127 + b"]" * 127 + b"}", b'{"a":1', b"{} {}",
])
def test_what_serde_json_refuses_is_refused(text: bytes) -> None:
    with pytest.raises(JSONFormatError):
        normalize_record(text, drop_note=False)


def test_non_objects_are_refused_and_notes_can_be_blanked() -> None:
    with pytest.raises(NotAnObject):
        normalize_record(b"[1]", drop_note=False)
    assert normalize_record(b'{"note":"prose","kind":"x"}', drop_note=True)[0] == b'{"kind":"x","note":""}\n'


def test_a_label_ending_in_minus_zero_keeps_the_fast_path_but_an_integer_minus_zero_does_not() -> None:
    from mcpeval_nb.review.normalize import normalize_chunk

    labels = b'{"server":"server-0","seq":1}\n{"tool":"t-0","x":[1,-1]}\n'
    fast = normalize_chunk(labels, tail=False, drop_note=False, limit=4 * 1024 * 1024)
    assert fast is not None
    assert fast[0] == b'{"seq":1,"server":"server-0"}\n{"tool":"t-0","x":[1,-1]}\n' and len(fast[1]) == 2
    for number in (b'{"a":-0}\n', b'{"a": [ -0]}\n', b'{"a":[1,\t-0]}\n'):
        assert normalize_chunk(number, tail=False, drop_note=False, limit=4 * 1024 * 1024) is None
