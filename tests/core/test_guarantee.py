"""``dpplug.guarantee.within_budget``: whether a declared guarantee spends at most a requested
(ε, δ), decided exactly. Checked against e^ε computed independently (mpmath at 400 digits) on
bounds just below and just above it, at the budgets frameworks hand out (floats, read as the
dyadic rationals they are) and exact ones."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from gmpy2 import mpq

from dpplug.guarantee import COUNT_SENSITIVITY_1, Guarantee, within_budget


def guarantee(exp_epsilon: object, delta: object = 0) -> Guarantee:
    return Guarantee(mpq(exp_epsilon), mpq(delta), COUNT_SENSITIVITY_1)


def exp_bounds(epsilon: object, gap_bits: int) -> tuple[mpq, mpq]:
    """Rationals just below and just above e^ε, a relative 2^-gap_bits away (mpmath)."""
    exact = Fraction(epsilon) if not isinstance(epsilon, Fraction) else epsilon
    with mpmath.workdps(400):
        value = mpmath.exp(mpmath.mpf(exact.numerator) / exact.denominator)
        gap = value * mpmath.mpf(2) ** -gap_bits
        below, above = (mpmath.nstr(v, 390) for v in (value - gap, value + gap))
    return mpq(Fraction(below)), mpq(Fraction(above))


@pytest.mark.parametrize("epsilon", [1e-9, 0.1, 0.5, math.log(1.5), 1, 3.0, 16, 64.0])
@pytest.mark.parametrize("gap_bits", [20, 70, 600])
def test_decides_bounds_just_below_and_just_above_e_to_the_epsilon(
    epsilon: float, gap_bits: int
) -> None:
    """A bound a relative 2^-600 below e^ε is within the budget and one 2^-600 above is not
    (beyond the first enclosure's 128 bits: the precision doubles until they separate)."""
    below, above = exp_bounds(epsilon, gap_bits)
    assert within_budget(guarantee(max(below, 1)), epsilon)
    assert not within_budget(guarantee(above), epsilon)


def test_a_float_budget_is_the_dyadic_rational_it_is() -> None:
    """0.1 as a float is 0.1000000000000000055511151231257827…: a bound between e^(1/10) and
    e^(that float) is within the float budget and not within the exact 1/10."""
    low, _ = exp_bounds(Fraction(0.1), 80)  # just below e^(float 0.1), above e^(1/10)
    assert within_budget(guarantee(low), 0.1)
    assert not within_budget(guarantee(low), Fraction(1, 10))


def test_delta_is_compared_exactly() -> None:
    """δ = 10^-6 exactly is above the float 1e-6 (0.99999999999999995474…e-6)."""
    g = guarantee(mpq(3, 2), Fraction(1, 10**6))
    assert within_budget(g, 0.5, Fraction(1, 10**6))
    assert not within_budget(g, 0.5, 1e-6)
    assert within_budget(guarantee(mpq(3, 2), 1e-6), 0.5, 1e-6)
    assert not within_budget(g, 0.5)  # δ = 0 asked: approximate guarantees do not fit


def test_zero_infinite_and_negative_budgets() -> None:
    assert within_budget(guarantee(1), 0)
    assert not within_budget(guarantee(mpq(2**64 + 1, 2**64)), 0)
    assert not within_budget(guarantee(1), -0.5)
    assert within_budget(guarantee(10**100, Fraction(1, 2)), math.inf, math.inf)
    assert within_budget(guarantee(mpq(3, 2), Fraction(1, 3)), 0.5, math.inf)
    for bad in (math.nan, "1", None, -math.inf):
        with pytest.raises(ValueError, match="budget"):
            within_budget(guarantee(1), bad)
