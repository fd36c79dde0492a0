"""Moments of the built-in samplers' noise in closed form, for reports (PipelineDP's
``count_noise_stddev``): the exact law of a clamped sampler has n + 1 outputs, too many to sum at
n = 2^40, but its noise is made of geometric runs, whose power sums have closed forms.

:func:`power_sums` gives Σ_{j=lo}^{hi} j^k·r^j (k = 0, 1, 2) from the derivatives of the finite
geometric series A(r) = Σ_{i<N} r^i: Σ i·r^i = r·A′ and Σ i²·r^i = r·A′ + r²·A″, evaluated in
MPFR at 256 bits (the differences lose about 3·log₂(1/(1 − r)) bits). :class:`ClampedNoise`
adds up the moments of c + Z clamped to [0, n] from the symmetric weights of Z, a run at a time.
These are floats for display, never a sampling decision.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import gmpy2
from gmpy2 import mpfr

_PRECISION = 256


def power_sums(r: Any, lo: int, hi: int) -> tuple[Any, Any, Any]:
    """(Σ r^j, Σ j·r^j, Σ j²·r^j) over lo ≤ j ≤ hi (zeros when hi < lo), for 0 < r < 1."""
    with gmpy2.context(gmpy2.get_context(), precision=_PRECISION):
        zero = mpfr(0)
        if hi < lo:
            return zero, zero, zero
        r, n = mpfr(r), hi - lo + 1
        q, rn = 1 - r, r**n
        a0 = (1 - rn) / q
        a1 = -n * r ** (n - 1) / q + (1 - rn) / q**2
        a2 = -n * (n - 1) * r ** (n - 2) / q - 2 * n * r ** (n - 1) / q**2 + 2 * (1 - rn) / q**3
        g1, g2 = r * a1, r * a1 + r * r * a2
        scale = r**lo
        return scale * a0, scale * (lo * a0 + g1), scale * (lo * lo * a0 + 2 * lo * g1 + g2)


def integer_power_sums(lo: int, hi: int) -> tuple[int, int, int]:
    """(Σ 1, Σ j, Σ j²) over lo ≤ j ≤ hi, exactly."""
    if hi < lo:
        return 0, 0, 0

    def upto(m: int) -> tuple[int, int, int]:  # sums over 0 ≤ j ≤ m (m ≥ −1)
        return m + 1, m * (m + 1) // 2, m * (m + 1) * (2 * m + 1) // 6

    top, below = upto(hi), upto(lo - 1) if lo > 0 else (0, 0, 0)
    return top[0] - below[0], top[1] - below[1], top[2] - below[2]


def _signed_sums(low: int, high: int) -> tuple[int, int, int]:
    """integer_power_sums over low ≤ j ≤ high for low < 0 ≤ high (mirror the negative part)."""
    negative, positive = integer_power_sums(1, -low), integer_power_sums(0, high)
    return negative[0] + positive[0], positive[1] - negative[1], negative[2] + positive[2]


@dataclass
class ClampedNoise:
    """Accumulates Σ P·(x − c) and Σ P·(x − c)² for x = clamp(c + j, 0, n), from runs of the
    noise j; ``n`` None for unclamped noise."""

    count: int
    n: int | None
    moments: list[Any] = field(default_factory=lambda: [mpfr(0), mpfr(0), mpfr(0)])

    def run(self, weight: Any, sums: Iterable[Any], sign: int = 1) -> None:
        """Add weight·(Σ r^j, Σ j r^j, Σ j² r^j) for an interior run of j (sign −1 mirrors it)."""
        s0, s1, s2 = sums
        with gmpy2.context(gmpy2.get_context(), precision=_PRECISION):
            self.moments[0] += weight * s0
            self.moments[1] += weight * sign * s1
            self.moments[2] += weight * s2

    def point(self, offset: int, mass: Any) -> None:
        """Add mass at x − c = offset."""
        with gmpy2.context(gmpy2.get_context(), precision=_PRECISION):
            self.moments[0] += mass
            self.moments[1] += mass * offset
            self.moments[2] += mass * offset * offset

    def uniform(self, low: int, high: int, mass: Any) -> None:
        """Add mass spread evenly over x − c ∈ [low, high]."""
        sums = integer_power_sums(low, high) if low >= 0 else _signed_sums(low, high)
        count, first, second = sums
        with gmpy2.context(gmpy2.get_context(), precision=_PRECISION):
            share = mpfr(mass) / count
            self.moments[0] += mass
            self.moments[1] += share * first
            self.moments[2] += share * second

    @property
    def variance(self) -> float:
        """Var[x] (the mass must add up to 1)."""
        with gmpy2.context(gmpy2.get_context(), precision=_PRECISION):
            total, first, second = self.moments
            return float(second / total - (first / total) ** 2)

    def reach(self) -> tuple[int, int]:
        """How far the noise may go down and up before the clamp: c and n − c."""
        if self.n is None:
            return 1 << 62, 1 << 62
        return self.count, self.n - self.count

    def symmetric(self, ratio: Any, peak: Any, top: int | None, tails: Any = 0) -> None:
        """Noise with Pr[j] = peak·ratio^{|j|} for |j| ≤ top (None: all j), and tails more at
        0, clamped: the mass beyond c (n − c) goes to x = 0 (x = n)."""
        down, up = self.reach()
        self.point(0, peak + tails)
        for sign, reach in ((-1, down), (1, up)):
            interior = reach - 1 if top is None else min(reach - 1, top)
            self.run(peak, power_sums(ratio, 1, interior), sign)
            first = max(reach, 1)
            if top is None:  # the clamped end: Σ_{m ≥ first} ratio^m
                with gmpy2.context(gmpy2.get_context(), precision=_PRECISION):
                    self.point(sign * reach, peak * mpfr(ratio) ** first / (1 - mpfr(ratio)))
            elif reach <= top:
                self.point(sign * reach, peak * power_sums(ratio, first, top)[0])
