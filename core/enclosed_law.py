"""Enclosed output laws: rigorous rational bounds on probabilities that are irrational.

The discrete Gaussian's probabilities e^{−y²/(2σ²)}/Σ_z e^{−z²/(2σ²)} (Canonne, Kamath, Steinke
2020, Def. 1) have no rational value, so no exact :class:`~dpplug.pmf.Pmf` exists. An
:class:`EnclosedLaw` holds instead, for each output of a finite window, an interval
[lo(y), hi(y)] of rationals that contains its exact probability, and a rational upper bound on the
total probability of the outputs outside the window. The bounds come from ball arithmetic with
outward rounding (:mod:`dpplug.bounds`) at a stated precision: raising the precision narrows the
intervals and, where the law says so, widens the window so that the outside mass shrinks with it.

Every decision the conformance suite takes from an enclosed law is rigorous in both directions
(docs/conformance.md#enclosed-laws): a guarantee passes when an *upper* bound of the quantity it
limits is within the bound, fails when a *lower* bound exceeds it, and is recomputed at a higher
precision in between. An exact law is the special case lo = hi (:meth:`EnclosedLaw.of_pmf`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gmpy2 import mpq

from dpplug.bounds import Ball, lower, upper
from dpplug.exact import Rat
from dpplug.pmf import Pmf


@dataclass(frozen=True)
class EnclosedLaw:
    """lo(y) ≤ Pr[Y = y] ≤ hi(y) for y in the window ``low … low + len(bounds) − 1``, and
    Pr[Y outside the window] ≤ ``outside``; ``precision`` is the working precision (bits) the
    bounds were computed at (0 for an exact law)."""

    low: int
    bounds: tuple[tuple[Rat, Rat], ...]
    outside: Rat
    precision: int = 0

    def __post_init__(self) -> None:
        if not self.bounds:
            raise ValueError("an enclosed law needs at least one output in its window")
        if any(not 0 <= lo <= hi <= 1 for lo, hi in self.bounds) or not 0 <= self.outside <= 1:
            raise ValueError("an enclosed law's bounds must satisfy 0 ≤ lo ≤ hi ≤ 1")

    @classmethod
    def of_pmf(cls, pmf: Pmf) -> EnclosedLaw:
        """The exact law *pmf* as an enclosure of width 0 (its window, its exact outside mass)."""
        window = range(pmf.low, pmf.high + 1)
        return cls(pmf.low, tuple((pmf.prob(z), pmf.prob(z)) for z in window), pmf.outside_mass)

    @classmethod
    def of_balls(cls, low: int, probabilities: list[Ball], bits: int) -> EnclosedLaw:
        """A law whose whole support low, low + 1, … has these probabilities, given as balls
        computed at *bits* bits: each enclosed by its ball's ends, clipped to [0, 1]."""
        bounds = tuple((max(mpq(0), lower(p)), min(mpq(1), upper(p))) for p in probabilities)
        return cls(low, bounds, mpq(0), bits)

    @property
    def high(self) -> int:
        return self.low + len(self.bounds) - 1

    def window(self) -> range:
        return range(self.low, self.high + 1)

    def lo(self, y: int) -> Rat:
        """A lower bound on Pr[Y = y] (0 outside the window)."""
        return self.bounds[y - self.low][0] if self.low <= y <= self.high else mpq(0)

    def hi(self, y: int) -> Rat:
        """An upper bound on Pr[Y = y] (``outside`` beyond the window)."""
        return self.bounds[y - self.low][1] if self.low <= y <= self.high else self.outside

    def width(self) -> Rat:
        """Σ_y (hi(y) − lo(y)) + outside: a bound on the total-variation distance between the
        exact law and any law inside the enclosure."""
        return sum((hi - lo for lo, hi in self.bounds), mpq(0)) + self.outside

    def nearest_pmf(self, centre: int) -> Pmf:
        """An exact law on the window inside the enclosure except at *centre*: lo(y) everywhere
        else, and the rest of the mass, 1 − Σ_{y≠centre} lo(y), at *centre*. Its total-variation
        distance to the exact law is at most :meth:`width` (the mass moved to *centre* is what
        the lower bounds miss, at most Σ (hi − lo) + outside)."""
        probs = {y: self.lo(y) for y in self.window() if y != centre}
        probs[centre] = 1 - sum(probs.values(), mpq(0))
        return Pmf(probs)
