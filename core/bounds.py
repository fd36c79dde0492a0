"""Rigorous real bounds, as exact rationals, for quantities that have no rational closed form:
the ε of a composition, the δ of a zCDP conversion, the tails of discrete Laplace and Gaussian
noise.

Expressions are evaluated in ball arithmetic (python-flint's ``arb``, :data:`PRECISION` bits):
every operation returns an interval guaranteed to contain the exact real result, so
:func:`upper` and :func:`lower` of the final ball bound the exact value from above and below.
This is what makes a declared guarantee or accuracy *sound* although e^ε and ln(1/δ) are
irrational; no float enters a bound. Searches that only *choose* a parameter (a step ε, a Rényi
order) may use floats, because the value they choose is then checked here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import flint
from gmpy2 import mpq

from dpplug.exact import Rat

#: Working precision of the balls, in bits.
PRECISION = 256

Ball = Any  # flint.arb (python-flint ships no type stubs)


@contextmanager
def precise(bits: int = PRECISION) -> Iterator[None]:
    """Evaluate balls at *bits* bits, :data:`PRECISION` by default (python-flint's precision is
    global: restored)."""
    saved = flint.ctx.prec
    flint.ctx.prec = bits
    try:
        yield
    finally:
        flint.ctx.prec = saved


def ball(value: object) -> Ball:
    """The exact rational *value* (int, Fraction, mpq) as a ball (exact for dyadic values,
    a tight enclosure otherwise)."""
    q = mpq(value)
    return flint.arb(flint.fmpq(int(q.numerator), int(q.denominator)))


def positive_part(x: Ball) -> Ball:
    """max(0, x), enclosed: x or 0 where the ball's sign is decided, else a ball holding both."""
    if x > 0:
        return x
    if x < 0:
        return ball(0)
    return ball(0).union(x)


def _rational(exact: Ball) -> Rat:
    mantissa, exponent = exact.man_exp()
    mantissa, exponent = int(mantissa), int(exponent)
    return mpq(mantissa << exponent) if exponent >= 0 else mpq(mantissa, 1 << -exponent)


def upper(x: Ball) -> Rat:
    """A rational ≥ every real in the ball *x* (ValueError if it is unbounded)."""
    if not x.is_finite():
        raise ValueError(f"no finite upper bound: {x}")
    return _rational(x.upper())


def lower(x: Ball) -> Rat:
    """A rational ≤ every real in the ball *x* (ValueError if it is unbounded)."""
    if not x.is_finite():
        raise ValueError(f"no finite lower bound: {x}")
    return _rational(x.lower())


def log_float(value: object) -> float:
    """ln of a positive rational as a float, without overflow or underflow (for searches that
    choose parameters, never for a declared bound)."""
    q = mpq(value)
    return math.log(int(q.numerator)) - math.log(int(q.denominator))


def upper_of(expression: Callable[[], Ball]) -> Rat:
    """:func:`upper` of *expression* evaluated at :data:`PRECISION` bits."""
    with precise():
        return upper(expression())


def lower_of(expression: Callable[[], Ball]) -> Rat:
    """:func:`lower` of *expression* evaluated at :data:`PRECISION` bits."""
    with precise():
        return lower(expression())
