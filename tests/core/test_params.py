"""Parameter schemas: exact coercion, ranges, and messages that say what to change."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from gmpy2 import mpq
from hypothesis import given
from hypothesis import strategies as st

import dpplug
from dpplug.params import Param, Schema, unit_fraction

EPSILON = Param("epsilon", "rational", "ε.", low=0, low_open=True, high=64, example="0.5")
N = Param("n", "integer", "n.", low=1, high=100)
SCHEMA = Schema(
    (N, EPSILON, Param("gamma", "rational", "γ.", low=0, low_open=True, default=mpq(1, 2)))
)


@pytest.mark.parametrize(
    ("value", "exact"),
    [
        (0.5, mpq(1, 2)),
        (Fraction(1, 3), mpq(1, 3)),
        (2, mpq(2)),
        (mpq(3, 7), mpq(3, 7)),
        (np.float64(0.25), mpq(1, 4)),
        (0.1, mpq(*(0.1).as_integer_ratio())),
    ],
)
def test_rationals_are_converted_exactly(value: object, exact: object) -> None:
    assert EPSILON.coerce(value) == exact


@pytest.mark.parametrize(
    "value", [0, -1, math.nan, math.inf, -math.inf, True, "0.5", None, [0.5], 65, 10**400]
)
def test_bad_epsilon_is_rejected_with_a_fix(value: object) -> None:
    with pytest.raises(dpplug.BadParameter, match=r"Pass epsilon as a number .* in \(0, 64\]"):
        EPSILON.coerce(value)


@pytest.mark.parametrize("value", [0, 101, 2.0, 1.5, Fraction(3, 2), True, "3", np.float32(3)])
def test_bad_integers_are_rejected(value: object) -> None:
    with pytest.raises(dpplug.BadParameter, match="n="):
        N.coerce(value)


def test_numpy_integers_are_integers() -> None:
    assert N.coerce(np.int32(7)) == 7 and isinstance(N.coerce(np.int64(7)), int)


def test_schema_reports_unknown_and_missing_parameters() -> None:
    with pytest.raises(dpplug.BadParameter, match=r"unknown parameter.*eps.*the parameters are: n"):
        SCHEMA.validate({"n": 3, "eps": 1})
    with pytest.raises(dpplug.BadParameter, match="missing parameter epsilon"):
        SCHEMA.validate({"n": 3})
    assert SCHEMA.validate({"n": 3, "epsilon": 1}) == {"n": 3, "epsilon": 1, "gamma": mpq(1, 2)}


@given(st.fractions(min_value=Fraction(1, 10**6), max_value=1))
def test_unit_fraction_rounds_down_into_one_over_n(value: Fraction) -> None:
    rounded = unit_fraction(mpq(value.numerator, value.denominator))
    assert rounded.numerator == 1
    assert rounded <= value < mpq(1, int(rounded.denominator) - 1) if rounded < 1 else True


@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.text(), st.booleans()
    )
)
def test_any_input_either_validates_exactly_or_raises_bad_parameter(value: object) -> None:
    try:
        exact = EPSILON.coerce(value)
    except dpplug.BadParameter:
        return
    assert 0 < exact <= 64
