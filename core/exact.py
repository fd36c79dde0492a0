"""Exact integer and rational arithmetic shared by every mechanism (gmpy2 ``mpz``/``mpq``).

No sampler decision in dpplug touches a float (Mironov 2012). Floats appear only when a value is
*displayed*; :func:`display_ln` is the single place that turns an exact bound into one.
"""

from __future__ import annotations

import bisect
import math
import sys
from collections.abc import Callable
from numbers import Integral, Rational
from typing import Any

import gmpy2
import numpy as np
from gmpy2 import mpfr, mpq, mpz

from dpplug.enclosure import Enclosure, at_most

#: Bits of working precision for the directed-rounding bounds on e^x.
_EXP_PRECISION = 256

#: An exact rational, a ``gmpy2.mpq`` (``Any`` to the type checker: gmpy2 ships no type stubs);
#: the one alias every module uses for exact rationals.
Rat = Any


def as_rational(value: object) -> Rat:
    """*value* as an exact ``mpq``; ``TypeError``/``ValueError`` if it is not a finite number.

    Accepts ``int``, ``float`` (converted exactly: 0.1 becomes the dyadic rational nearest 0.1),
    ``Fraction``, ``mpq``/``mpz`` and numpy scalars. Booleans and strings are rejected:
    ``epsilon=True`` or ``epsilon="1"`` is a bug, not 1.
    """
    if isinstance(value, bool | str):
        raise TypeError(f"a {type(value).__name__} is not a number")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not finite")
        return mpq(*value.as_integer_ratio())
    if type(value).__name__ in ("mpq", "mpz"):
        return mpq(value)
    if isinstance(value, Integral):
        return mpq(int(value))
    if isinstance(value, Rational):
        return mpq(int(value.numerator), int(value.denominator))
    if isinstance(value, np.integer):
        return mpq(int(value))
    if isinstance(value, np.floating):  # float16 … longdouble, converted exactly
        if not np.isfinite(value):
            raise ValueError(f"{value} is not finite")
        return mpq(*(int(part) for part in value.as_integer_ratio()))
    raise TypeError(f"expected a number (int, float or Fraction), got {type(value).__name__}")


def exp_lower(x: Rat, denominator_bits: int) -> Rat:
    """A rational L = m / 2^denominator_bits with L ≤ e^x, as large as that form allows.

    Computed with MPFR in round-down mode (correctly rounded), then floored onto the dyadic grid,
    so the bound is rigorous: mechanisms calibrated with L are at most x-DP, never more.
    """
    with gmpy2.context(gmpy2.get_context(), precision=_EXP_PRECISION, round=gmpy2.RoundDown):
        low = mpq(gmpy2.exp(mpfr(x)))
    scale = mpz(1) << denominator_bits
    return mpq((low * scale) // 1, scale)


def exp_upper(x: Rat, denominator_bits: int) -> Rat:
    """A rational U = m / 2^denominator_bits with U ≥ e^x (round-up twin of :func:`exp_lower`)."""
    with gmpy2.context(gmpy2.get_context(), precision=_EXP_PRECISION, round=gmpy2.RoundUp):
        high = mpq(gmpy2.exp(mpfr(x)))
    scale = mpz(1) << denominator_bits
    return mpq(-((-high * scale) // 1), scale)


def ceil_div(a: int, b: int) -> int:
    """⌈a / b⌉ for integers, b > 0."""
    return -(-a // b)


def ceil_log2(x: Rat) -> int:
    """⌈log₂ x⌉ for a rational x > 0, exactly."""
    x = mpq(x)
    k = int(x // 1).bit_length() - 1 if x >= 1 else -int(-(-1 / x // 1)).bit_length()
    while mpq(2) ** k < x:
        k += 1
    while k > -(1 << 30) and mpq(2) ** (k - 1) >= x:
        k -= 1
    return k


def display_ln(x: Rat) -> float:
    """ln x as a float, for reports and messages only (never for a decision)."""
    x = mpq(x)
    return math.log(int(x.numerator)) - math.log(int(x.denominator))


def display_log2(x: Rat) -> float:
    """log₂ x as a float, for reports and messages only (exact rationals of any size)."""
    return display_ln(x) / math.log(2)


def smallest_at_least(g: Callable[[int], Any], lo: int, hi: int, u: Any) -> int:
    """The smallest j in [lo, hi] with g(j) ≥ u, for non-decreasing g with g(hi) ≥ u.

    This is the integer inverse-CDF step of Balcer–Vadhan (binary search over an exact scaled CDF).
    """
    if hi - lo < sys.maxsize:
        return lo + bisect.bisect_left(range(lo, hi + 1), u, key=g)
    while lo < hi:  # more values than a C index holds (a huge bound): the same search
        middle = (lo + hi) // 2
        lo, hi = (lo, middle) if g(middle) >= u else (middle + 1, hi)
    return lo


#: Up to this many bits, :func:`smallest_reaching` compares exact integers directly (faster than
#: enclosures there).
EXACT_BITS = 2048


def smallest_reaching(
    exact: Callable[[int], Any], enclosure: Callable[[int], Enclosure], lo: int, hi: int, u: int
) -> int:
    """The smallest j in [lo, hi] with value(j) ≥ u, for exact integers value(j) non-decreasing
    in j with value(hi) ≥ u: :func:`smallest_at_least` (Balcer–Vadhan's inverse-CDF step) with
    each comparison decided from ``enclosure(j)`` (:mod:`dpplug.enclosure`) when it can be, and
    from ``exact(j)`` otherwise, so the answer is exact whatever the precision."""
    below = mpz(u - 1)
    if below.bit_length() <= EXACT_BITS:  # short integers: exact arithmetic is cheaper
        return smallest_at_least(lambda j: bool(exact(j) > below), lo, hi, True)
    limit = Enclosure.of(below)

    def reaches(j: int) -> bool:
        value = enclosure(j)
        if value.lo > limit.hi:
            return True
        if value.hi <= limit.lo:
            return False
        return bool(exact(j) > below)

    return smallest_at_least(reaches, lo, hi, True)


def smallest_error_bound(tail: Callable[[int], Any], beta: Any, cap: int | None = None) -> int:
    """The smallest a ≥ 0 with tail(a) ≤ β, for a non-increasing error tail a ↦ Pr[|error| > a].

    ``tail(a)`` is the exact tail, or a formula of it (:mod:`dpplug.enclosure`), which is decided
    from rigorous enclosures first, so huge exponents cost no more than small ones. With *cap* (a
    clamped sampler's n, where the error can never exceed cap) the answer is at most cap.
    Exponential then binary search: O(log a) evaluations of the tail.
    """

    def holds(a: int) -> bool:
        if cap is not None and a >= cap:
            return True
        value = tail(a)
        return at_most(value, beta) if callable(value) else bool(value <= beta)

    high = 1
    while not holds(high):
        high *= 2
    return smallest_at_least(holds, 0, high, True)


def simplest_between(low: Rat, high: Rat) -> Rat:
    """The rational with the smallest denominator in [low, high] (0 < low ≤ high), and among
    those the smallest numerator: the continued-fraction (Stern–Brocot) search."""
    low, high = mpq(low), mpq(high)
    whole = low // 1
    if whole == low or whole + 1 <= high:
        return mpq(whole if whole == low else whole + 1)
    return whole + 1 / simplest_between(1 / (high - whole), 1 / (low - whole))
