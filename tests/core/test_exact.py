"""Exact arithmetic helpers: rigorous bounds on e^x, exact logarithms."""

from __future__ import annotations

import math

import gmpy2
import pytest
from gmpy2 import mpq
from hypothesis import given
from hypothesis import strategies as st

from dpplug.exact import ceil_log2, exp_lower, exp_upper, smallest_at_least


@given(st.fractions(min_value=-20, max_value=20), st.integers(min_value=1, max_value=64))
def test_exp_bounds_bracket_e_to_the_x(x, bits) -> None:  # type: ignore[no-untyped-def]
    q = mpq(x.numerator, x.denominator)
    low, high = exp_lower(q, bits), exp_upper(q, bits)
    with gmpy2.context(gmpy2.get_context(), precision=1024):
        truth = gmpy2.exp(gmpy2.mpfr(q))
        assert low <= truth <= high
    assert high - low <= mpq(2, 2**bits)
    assert int(low.denominator).bit_count() == 1  # dyadic


@pytest.mark.parametrize("x", [mpq(1), mpq(2), mpq(3), mpq(1, 3), mpq(7, 8), mpq(2**100 + 1)])
def test_ceil_log2_is_exact(x: object) -> None:
    k = ceil_log2(x)
    assert mpq(2) ** k >= x > mpq(2) ** (k - 1)
    assert k == math.ceil(math.log2(float(x))) or x == 2**100 + 1


def test_smallest_at_least_is_the_inverse_cdf() -> None:
    cdf = [0, 0, 3, 3, 7, 10]
    assert [smallest_at_least(lambda j: cdf[j], 0, 5, u) for u in range(1, 11)] == [
        2,
        2,
        2,
        4,
        4,
        4,
        4,
        5,
        5,
        5,
    ]
