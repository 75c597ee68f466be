"""`render.json_text`: the text of a --json document, written at C speed, is exactly what the
standard encoder writes (`indent=2, sort_keys=True, ensure_ascii=False`), whatever it holds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.cli.render import json_text

SCALARS = (st.none() | st.booleans() | st.text()
           | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False))
DOCUMENTS = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                         max_leaves=20)


def _standard(document: Any) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)


@given(DOCUMENTS)
def test_the_text_is_the_standard_encoders(document: Any) -> None:
    assert json_text(document) == _standard(document)


@pytest.mark.parametrize("document", [
    {"ratio": 1e-05, "big": 1e16, "plain": 0.5},  # exponents orjson writes otherwise
    {"id": 2**53 + 1, "neg": -(2**60)},  # past orjson's strict integers
    {1: "a key that is not a string", 2: [None]},
    {"text": "\x1b\u2028\x7f\ud800 lone surrogate", "é": "ünïcode"},
    {"note": "ratio: 1.5", "versions": ["0.1.0", "1e5"]},  # floats' look inside strings
])
def test_what_orjson_writes_otherwise_goes_to_the_standard_encoder(document: Any) -> None:
    assert json_text(document) == _standard(document)


def test_what_the_standard_encoder_refuses_is_still_refused() -> None:
    @dataclass
    class Point:
        x: int

    for value in (Point(1), {1, 2}, b"bytes"):
        with pytest.raises(TypeError):
            json_text({"value": value})
