"""The ratio e^ε̃ = a/b that geosample and fastsample should choose, found independently of
the implementation (brute force over denominators, rigorous bounds on e^ε with 512-bit MPFR), and
the laws it gives (docs/mechanisms.md#geosample)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import gmpy2
from gmpy2 import mpq

#: The share of ε the samplers may leave unspent (docs/mechanisms.md#geosample).
SLACK = Fraction(1, 64)


def exact(x: Any) -> Fraction:
    """Any exact number (int, Fraction, mpq) as a Fraction of ints."""
    q = mpq(x)
    return Fraction(int(q.numerator), int(q.denominator))


def exp_bounds(x: Any) -> tuple[Fraction, Fraction]:
    """Rigorous rational bounds low ≤ e^x ≤ high."""
    with gmpy2.context(precision=512, round=gmpy2.RoundDown):
        low = mpq(gmpy2.exp(gmpy2.mpfr(mpq(x))))
    with gmpy2.context(precision=512, round=gmpy2.RoundUp):
        high = mpq(gmpy2.exp(gmpy2.mpfr(mpq(x))))
    return exact(low), exact(high)


def expected_ratio(epsilon: Any) -> tuple[int, int]:
    """(a, b): the smallest b with an integer a in [b·e^{(1−SLACK)ε}, b·e^ε], and the largest such
    a. Brute force, so only for ratios with small denominators."""
    lowest = exp_bounds((1 - SLACK) * exact(epsilon))[1]
    highest = exp_bounds(exact(epsilon))[0]
    b = 1
    while math.ceil(b * lowest) > math.floor(b * highest):
        b += 1
    a = math.floor(b * highest)
    g = math.gcd(a, b)
    return a // g, b // g


def spends_its_budget(a: int, b: int, epsilon: Any) -> bool:
    """(1 − SLACK)·ε ≤ ln(a/b) ≤ ε, rigorously."""
    return (
        exp_bounds((1 - SLACK) * exact(epsilon))[1]
        <= Fraction(a, b)
        <= exp_bounds(exact(epsilon))[0]
    )


def two_sided(a: int, b: int, j: int) -> Fraction:
    """Pr[Z = j] = ((a−b)/(a+b))·(b/a)^{|j|} for the two-sided geometric of ratio b/a."""
    return Fraction(a - b, a + b) * Fraction(b, a) ** abs(j)


def tail(a: int, b: int, m: int) -> Fraction:
    """Pr[|Z| > m] = 2α^{m+1}/(1+α), α = b/a."""
    alpha = Fraction(b, a)
    return 2 * alpha ** (m + 1) / (1 + alpha)
