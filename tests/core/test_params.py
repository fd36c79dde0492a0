"""Parameter schemas: exact coercion, ranges, and messages that say what to change."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from gmpy2 import mpq
from hypothesis import given
from hypothesis import strategies as st

import dpplug
from dpplug.errors import BadParameter
from dpplug.param_text import parse_value
from dpplug.param_types import BOOLEAN, INTEGER, OPTIONS, RATIONAL, TEXT, UNIVERSE
from dpplug.params import Param, Schema, epsilon_param, probability_param, unit_fraction

EPSILON = Param("epsilon", RATIONAL, "ε.", low=0, low_open=True, high=64, example="0.5")
N = Param("n", INTEGER, "n.", low=1, high=100)
SCHEMA = Schema(
    (N, EPSILON, Param("gamma", RATIONAL, "γ.", low=0, low_open=True, default=mpq(1, 2)))
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


def test_values_read_from_text_are_shown_as_typed() -> None:
    with pytest.raises(BadParameter, match=r"epsilon=-0\.5 is invalid"):
        Schema((epsilon_param("ε."),)).validate({"epsilon": parse_value("-0.5")})


def test_a_parameter_of_thousands_of_digits_is_a_bad_parameter_not_a_crash() -> None:
    with pytest.raises(BadParameter, match="too long to read"):
        parse_value("9" * 5000)
    with pytest.raises(BadParameter, match="an integer of 16610 bits"):
        Schema((epsilon_param("ε."),)).validate({"epsilon": -(10**5000)})
    with pytest.raises(BadParameter, match=r"\(1002 characters\)"):
        Schema((epsilon_param("ε."),)).validate({"epsilon": -(10**1000)})


@pytest.mark.parametrize("value", [np.longdouble("0.5"), np.float16(0.5), np.float32(0.5)])
def test_numpy_floats_of_every_width_are_exact(value: object) -> None:
    (epsilon,) = Schema((epsilon_param("ε."),)).validate({"epsilon": value}).values()
    assert epsilon == Fraction(1, 2)


def test_a_wrong_registry_argument_is_a_bad_parameter() -> None:
    cls = dpplug.registry().get("geosample").cls
    with pytest.raises(BadParameter, match="registry must be a dpplug Registry"):
        cls(registry="mine", n=10, epsilon=1)
    with pytest.raises(BadParameter, match="that registry's create"):
        dpplug.create("geosample", n=10, epsilon=1, registry=dpplug.Registry())


_EVERY_TYPE = (
    Param("epsilon", RATIONAL, "ε.", low=0, low_open=True, high=64),
    Param("delta", RATIONAL, "δ.", low=0, high=1, high_open=True, default=0),
    Param("n", INTEGER, "n.", low=1, high=10),
    Param("k", INTEGER, "k.", low=0, high=5, optional=True),
    Param("flag", BOOLEAN, "A switch.", default=False),
    Param("sampler", TEXT, "A mechanism.", default="geosample"),
    Param("universe", UNIVERSE, "Labels."),
    Param("options", OPTIONS, "Keyword parameters.", default=""),
)


@pytest.mark.parametrize("param", _EVERY_TYPE, ids=lambda p: f"{p.name}:{p.type.name}")
def test_every_candidate_of_a_type_is_accepted_and_every_bad_value_refused(param: Param) -> None:
    candidates = param.candidates(["geosample", "discrete-laplace"], random.Random(1))
    for value in candidates:
        param.coerce(value)
    assert len(candidates) >= 2 or param.type in (UNIVERSE, OPTIONS)
    for value in param.bad_values():
        if param.type is OPTIONS and isinstance(value, dict):
            continue  # well-formed options: the mechanism they are for refuses the unknown one
        with pytest.raises(BadParameter):
            param.coerce(value)


def test_the_rational_ladder_stays_inside_the_range_and_keeps_its_bounds() -> None:
    param = Param("beta", RATIONAL, "β.", low=mpq(1, 100), high=mpq(1, 2))
    values = param.candidates([], random.Random(7))
    assert mpq(1, 100) in values and mpq(1, 2) in values
    assert all(mpq(1, 100) <= v <= mpq(1, 2) for v in values)  # type: ignore[operator]


def test_a_type_given_as_its_old_name_is_refused_with_the_names_to_use() -> None:
    with pytest.raises(TypeError, match="RATIONAL, INTEGER, BOOLEAN, TEXT, UNIVERSE or OPTIONS"):
        Param("epsilon", "rational", "ε.")  # type: ignore[arg-type]


def test_describe_shows_each_type_by_its_name() -> None:
    assert [p.as_dict()["type"] for p in _EVERY_TYPE] == [
        "rational",
        "rational",
        "integer",
        "integer",
        "boolean",
        "text",
        "universe",
        "options",
    ]


@pytest.mark.parametrize(
    ("made", "low", "low_open", "high", "high_open", "default"),
    [
        (probability_param("delta", "δ."), 0, True, 1, True, None),
        (
            probability_param("delta", "δ.", high=mpq(1, 2), default=0),
            0,
            False,
            mpq(1, 2),
            False,
            0,
        ),
        (probability_param("beta", "β.", low=mpq(1, 8)), mpq(1, 8), False, 1, True, None),
    ],
)
def test_probability_parameters_exclude_one_and_zero_unless_zero_is_the_default(
    made: Param, low: object, low_open: bool, high: object, high_open: bool, default: object
) -> None:
    assert (made.type, made.low, made.low_open, made.high, made.high_open) == (
        RATIONAL,
        low,
        low_open,
        high,
        high_open,
    )
    assert (made.default if not made.required else None) == default


@pytest.mark.parametrize(
    ("low", "high", "ladder"),
    [
        (1, 4096, [9, 65, 1025, 4096]),
        (1, 1024, [9, 65, 1024]),
        (1, 8, []),
        (0, None, [9, 65, 1025, 65537, 2**31 + 1, 2**32 + 1, 2**53 + 1]),
        (-(2**40), 2**40, [9, 65, 1025, 65537, 2**31 + 1, 2**32 + 1, 2**40]),
    ],
)
def test_integer_ladder_climbs_past_sizes_to_the_top_of_the_range(
    low: int, high: int | None, ladder: list[int]
) -> None:
    param = Param("m", INTEGER, "m.", low=low, high=high)
    assert INTEGER.ladder(param) == ladder
    assert all(param.coerce(value) == value for value in ladder)
