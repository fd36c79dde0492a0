"""Rigorous enclosures: deciding comparisons between huge exact numbers from their leading bits.

A scaled CDF of Balcer & Vadhan's samplers is an integer with up to n·log₂ a bits (tens of
millions for GeoSample with large n), and an accuracy bound compares a tail probability with
exponent up to ln(1/β)/ε against β. Computing such values exactly for every comparison is what
made sampling and accuracy slow. Here a value is first computed as an :class:`Enclosure`, a real
interval [lo, hi] with MPFR endpoints of 128 bits rounded outwards (every operation rounds lo
down and hi up), so the exact value lies inside it; a comparison is decided from the enclosures
when they are disjoint, and only otherwise from the exact value (:func:`at_most`). Either way
the answer is the exact one: precision changes the cost, never the result.

A value is written once, as a *formula*: a function of a ``lift`` that turns integers into the
number type to compute with (``mpq`` for the exact value, :meth:`Enclosure.of` for the
enclosure), using ``+``, ``-``, ``*``, ``/`` and ``**`` with integer exponents ≥ 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gmpy2
from gmpy2 import mpfr, mpq, mpz

#: Bits of precision of enclosure endpoints.
PRECISION = 128

#: MPFR contexts rounding down and up at :data:`PRECISION`: ``DOWN.add(x, y)`` ≤ x + y, etc.
DOWN = gmpy2.context(precision=PRECISION, round=gmpy2.RoundDown)
UP = gmpy2.context(precision=PRECISION, round=gmpy2.RoundUp)

Lift = Callable[[Any], Any]
Formula = Callable[[Lift], Any]


class Enclosure:
    """A closed real interval [lo, hi] that contains an exact value (outward rounding)."""

    __slots__ = ("hi", "lo")

    def __init__(self, lo: mpfr, hi: mpfr) -> None:
        self.lo, self.hi = lo, hi

    @classmethod
    def of(cls, value: Any) -> Enclosure:
        """The tightest enclosure of an exact int, ``mpz`` or ``mpq`` (or another enclosure)."""
        if isinstance(value, Enclosure):
            return value
        if isinstance(value, int | mpz) and abs(value).bit_length() <= PRECISION:
            exact = mpfr(value, PRECISION)  # represented exactly: no rounding
            return cls(exact, exact)
        with gmpy2.context(DOWN):
            lo = mpfr(value)
        with gmpy2.context(UP):
            hi = mpfr(value)
        return cls(lo, hi)

    def __repr__(self) -> str:
        return f"Enclosure({self.lo}, {self.hi})"

    def __add__(self, other: Any) -> Enclosure:
        o = Enclosure.of(other)
        return Enclosure(DOWN.add(self.lo, o.lo), UP.add(self.hi, o.hi))

    __radd__ = __add__

    def __neg__(self) -> Enclosure:
        return Enclosure(-self.hi, -self.lo)

    def __sub__(self, other: Any) -> Enclosure:
        o = Enclosure.of(other)
        return Enclosure(DOWN.sub(self.lo, o.hi), UP.sub(self.hi, o.lo))

    def __rsub__(self, other: Any) -> Enclosure:
        return Enclosure.of(other) - self

    def __mul__(self, other: Any) -> Enclosure:
        o = Enclosure.of(other)
        if self.lo >= 0 and o.lo >= 0:
            return Enclosure(DOWN.mul(self.lo, o.lo), UP.mul(self.hi, o.hi))
        ends = ((self.lo, o.lo), (self.lo, o.hi), (self.hi, o.lo), (self.hi, o.hi))
        return Enclosure(min(DOWN.mul(a, b) for a, b in ends), max(UP.mul(a, b) for a, b in ends))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Enclosure:
        o = Enclosure.of(other)
        if o.lo <= 0 <= o.hi:
            raise ZeroDivisionError("dividing by an enclosure that contains 0")
        if self.lo >= 0 and o.lo > 0:
            return Enclosure(DOWN.div(self.lo, o.hi), UP.div(self.hi, o.lo))
        ends = ((self.lo, o.lo), (self.lo, o.hi), (self.hi, o.lo), (self.hi, o.hi))
        return Enclosure(min(DOWN.div(a, b) for a, b in ends), max(UP.div(a, b) for a, b in ends))

    def __rtruediv__(self, other: Any) -> Enclosure:
        return Enclosure.of(other) / self

    def _monotone(self, name: str, increasing: bool) -> Enclosure:
        down, up = getattr(DOWN, name), getattr(UP, name)
        return (
            Enclosure(down(self.lo), up(self.hi))
            if increasing
            else Enclosure(down(self.hi), up(self.lo))
        )

    def exp(self) -> Enclosure:
        return self._monotone("exp", True)

    def log(self) -> Enclosure:
        return self._monotone("log", True)

    def sqrt(self) -> Enclosure:
        return self._monotone("sqrt", True)

    def erfc(self) -> Enclosure:
        return self._monotone("erfc", False)

    def __pow__(self, exponent: int) -> Enclosure:
        """Integer powers ≥ 0 of an enclosure of a non-negative value."""
        if exponent < 0 or self.lo < 0:
            raise ValueError("enclosures take integer powers ≥ 0 of non-negative values")
        return Enclosure(DOWN.pow(self.lo, exponent), UP.pow(self.hi, exponent))


def scaled_floor(value: mpfr, bits: int) -> int:
    """⌊value·2^bits⌋ exactly."""
    return int(DOWN.floor(DOWN.mul_2exp(value, bits)))


def scaled_ceil(value: mpfr, bits: int) -> int:
    """⌈value·2^bits⌉ exactly."""
    return int(UP.ceil(UP.mul_2exp(value, bits)))


def at_most(formula: Formula, bound: Any, bound_enclosure: Enclosure | None = None) -> bool:
    """formula(exact) ≤ *bound* (an exact number), decided from enclosures when they separate and
    exactly otherwise. Pass *bound_enclosure* to reuse the enclosure of a huge bound."""
    value = formula(Enclosure.of)
    limit = Enclosure.of(bound) if bound_enclosure is None else bound_enclosure
    if value.hi <= limit.lo:
        return True
    if value.lo > limit.hi:
        return False
    return bool(formula(mpq) <= bound)
