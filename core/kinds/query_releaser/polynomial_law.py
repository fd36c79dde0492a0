"""Output laws whose probabilities are integer polynomials in q = e^{−1/b}: exact in the
exponent although irrational in value.

Discrete Laplace noise of a rational scale b (Canonne, Kamath, Steinke 2020, Alg. 2) has
Pr[Y = y] = (1 − q)·q^{|y|}/(1 + q), and clamping it, or adding it to an integer, keeps every
probability of that form: an integer polynomial in q times a power of q, over a common integer
polynomial. A :class:`PolynomialLaw` holds exactly that, Pr[Y = z] = C_z(q)·q^{e_z}/D(q) on a
finite support, so that

- whether it sums to one is an identity between integer polynomials, decided exactly
  (:meth:`PolynomialLaw.normalised`);
- the likelihood ratio of two such laws at an output with the same C_z is exactly q^{e′ − e},
  so a privacy loss ln(P(z)/Q(z)) = (e′_z − e_z)/b is an exact rational
  (:meth:`PolynomialLaw.losses`), and a pure guarantee can be met with equality and still be
  proved, which no enclosure can do;
- its probabilities are enclosed to any precision (:meth:`PolynomialLaw.enclosed`), for the tests
  that compare real draws with the law.

q is transcendental (Lindemann), so a polynomial in q with integer coefficients that is not
identically zero is not zero at q: comparisons decided in balls (:mod:`dpplug.bounds`) at a high
enough precision always terminate, and identical polynomials are recognised exactly first.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import flint
import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.bounds import Ball, ball, precise
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.exact import Rat

#: The most outputs :func:`clamped_laplace_law` writes out (each is a term of the law).
MAX_OUTPUTS = 1 << 20
Coefficients = tuple[int, ...]


@dataclass(frozen=True)
class PolynomialLaw:
    """Pr[Y = z] = C_z(q)·q^{e_z}/D(q) for z in ``low … low + len(terms) − 1`` (the whole
    support) with q = e^{−1/scale}: ``terms[i]`` is (the coefficients of C_z, lowest power
    first, and e_z ≥ 0) for z = low + i, ``denominator`` the coefficients of D."""

    scale: Rat
    low: int
    terms: tuple[tuple[Coefficients, int], ...]
    denominator: Coefficients

    def __post_init__(self) -> None:
        if not mpq(self.scale) > 0:
            raise ValueError(f"a polynomial law needs a scale > 0, got {self.scale}")
        if not self.terms or not self.denominator or not any(self.denominator):
            raise ValueError("a polynomial law needs at least one output and a non-zero D")
        if any(not coefficients or e < 0 for coefficients, e in self.terms):
            raise ValueError("a polynomial law's C_z needs coefficients and e_z ≥ 0")

    @property
    def high(self) -> int:
        return self.low + len(self.terms) - 1

    def window(self) -> range:
        return range(self.low, self.high + 1)

    def term(self, z: int) -> tuple[Coefficients, int]:
        """(C_z, e_z); the zero polynomial outside the support."""
        return self.terms[z - self.low] if self.low <= z <= self.high else ((0,), 0)

    def normalised(self) -> bool:
        """Whether Σ_z C_z(q)·q^{e_z} = D(q) as polynomials, i.e. the probabilities sum to one
        (exactly: q is transcendental, so the identity in q is the identity of polynomials)."""
        numerators, denominator = self._q_poly
        return bool(sum(numerators, flint.fmpz_poly(0)) == denominator)

    def losses(self, other: PolynomialLaw) -> dict[int, Rat] | None:
        """ln(P(z)/Q(z)) for P = this law, Q = *other*, at every output either law gives, exactly:
        (e^Q_z − e^P_z)/b where C_z, D and the scale agree. None if they differ at some output
        (the ratio is then not a power of q), which includes an output only one law gives (an
        infinite loss)."""
        if self.scale != other.scale or self.denominator != other.denominator:
            return None
        found: dict[int, Rat] = {}
        for z in range(min(self.low, other.low), max(self.high, other.high) + 1):
            (cp, ep), (cq, eq) = self.term(z), other.term(z)
            if not any(cp) and not any(cq):
                continue
            if cp != cq:
                return None
            found[z] = mpq(eq - ep) / mpq(self.scale)
        return found

    def max_loss(self, other: PolynomialLaw) -> tuple[Rat, int] | None:
        """The largest |ln(P(z)/Q(z))| over the outputs (:meth:`losses`) and an output where it is
        attained, exactly; None where :meth:`losses` is None. Two laws on the same support with
        the same C_z are compared as integer vectors of exponents."""
        if (
            self.low == other.low
            and self.scale == other.scale
            and self.denominator == other.denominator
            and self._coefficients == other._coefficients
        ):
            gaps = np.abs(self._exponents - other._exponents)
            at = int(np.argmax(gaps))
            return mpq(int(gaps[at])) / mpq(self.scale), self.low + at
        found = self.losses(other)
        if found is None:
            return None
        z = max(found, key=lambda y: abs(found[y]))
        return abs(found[z]), z

    @cached_property
    def _coefficients(self) -> tuple[Coefficients, ...]:
        return tuple(c for c, _ in self.terms)

    @cached_property
    def _exponents(self) -> npt.NDArray[np.int64]:
        return np.array([e for _, e in self.terms], dtype=np.int64)

    @cached_property
    def _q_poly(self) -> tuple[list[flint.fmpz_poly], flint.fmpz_poly]:
        return (
            [flint.fmpz_poly([0] * e + list(c)) for c, e in self.terms],
            flint.fmpz_poly(list(self.denominator)),
        )

    def probability(self, z: int, q: Ball) -> Ball:
        """Pr[Y = z] as a ball, for q = e^{−1/scale} as a ball at the working precision."""
        if not self.low <= z <= self.high:
            return ball(0)
        numerators, denominator = self._q_poly
        return numerators[z - self.low](q) / denominator(q)

    def enclosed(self, bits: int = 128) -> EnclosedLaw:
        """The law enclosed at *bits* bits (:class:`~dpplug.enclosed_law.EnclosedLaw`; nothing
        outside the support). Only meaningful for a :meth:`normalised` law."""
        with precise(bits):
            q = (-1 / ball(self.scale)).exp()
            return EnclosedLaw.of_balls(
                self.low, [self.probability(z, q) for z in self.window()], bits
            )


def clamped_laplace_law(scale: Rat, centre: int, high: int) -> PolynomialLaw:
    """The law of min(max(centre + Y, 0), high), Y discrete Laplace of rational *scale*
    (Pr[Y = y] = (1 − q)·q^{|y|}/(1 + q), q = e^{−1/scale}), for 0 ≤ centre ≤ high: inside,
    (1 − q)·q^{|z − centre|}/(1 + q); at 0, Pr[Y ≤ −centre] = q^{centre}/(1 + q); at *high*,
    q^{high − centre}/(1 + q) (for high = 0, the single output 0 with probability 1)."""
    if not 0 <= centre <= high:
        raise ValueError(f"the centre {centre} must lie in [0, {high}]")
    if high >= MAX_OUTPUTS:
        raise NotSupported(
            f"the law over {high + 1:,} outputs is too large to write out (the limit is "
            f"{MAX_OUTPUTS:,}); it exists for exact checks of small cases"
        )
    if high == 0:
        return PolynomialLaw(mpq(scale), 0, (((1,), 0),), (1,))
    inside = [((1, -1), abs(z - centre)) for z in range(1, high)]
    terms = [((1,), centre), *inside, ((1,), high - centre)]
    return PolynomialLaw(mpq(scale), 0, tuple(terms), (1, 1))
