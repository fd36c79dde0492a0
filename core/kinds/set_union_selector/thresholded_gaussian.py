"""Discrete Gaussian noise compared with a threshold, bounded rigorously: the keep probabilities
of the weighted Gaussian set-union mechanism (Gopi, Gulhane, Kulkarni, Shen, Shokouhi, Yekhanin,
"Differentially Private Set Union", ICML 2020, §4) run on the exact discrete Gaussian (Canonne,
Kamath, Steinke, NeurIPS 2020), and their Gaussian differential privacy (Dong, Roth, Su 2022).

Z ~ N_ℤ(0, s²) has Pr[Z = y] = g(y)/N with g(y) = e^{−y²/(2s²)}; by Poisson summation
N = s√(2π)·θ with θ = Σ_j e^{−2π²s²j²} ∈ [1, 1 + 3e^{−2π²s²}] (:func:`_normaliser`). An item
whose weighted total is h (grid units) is kept iff h + Z ≥ T, with probability
π(h) = Pr[Z ≥ T − h]; everything below is about the tail U(k) = Pr[Z > k].

- :func:`tail_upper`, :func:`tail_lower`: Σ_{y≥m} g(y) lies in [∫_m^∞ g, g(m) + ∫_m^∞ g] for
  m ≥ 0 (g decreasing there), so Φ̄(m/s)/θ ≤ Pr[Z ≥ m] ≤ φ(m/s)/s + Φ̄(m/s).
- :func:`closeness` (the Gaussian-DP certificate): U(k) ∈ [Φ̄(x_k + ζ), Φ̄(x_k − ζ)] with
  x_k = (k + ½)/s, checked in ball arithmetic for every k in [0, reach] (and so, by the symmetry
  U(−k−1) = 1 − U(k), for every k in [−reach − 1, reach]). Then Φ⁻¹(π(h)) lies within ζ of
  (h − T + ½)/s, so for weights moved by w the pair (π(h), π(h + w)) of Bernoulli laws satisfies
  Φ⁻¹(π(h + w)) − Φ⁻¹(π(h)) ≤ w/s + 2ζ: it is (w/s + 2ζ)-GDP (DRS Def. 2.6: a pair (p, q) is
  μ-GDP iff q ≤ Φ(Φ⁻¹(p) + μ)). Pairs beyond the window are within total variation τ = U(K) of
  a GDP pair (:class:`RoundCertificate`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from itertools import product
from typing import Any

import flint
from gmpy2 import isqrt, mpq, mpz

from dpplug.bounds import Ball, ball, lower, precise, upper
from dpplug.discrete_noise import discrete_gaussian
from dpplug.errors import NotSupported
from dpplug.program import Draw
from dpplug.randomness import RandomSource

Rat = Any  # gmpy2.mpq

#: Working precision of the closeness check (bits): the tails it compares are above 2^-128.
CHECK_BITS = 96
#: The most points :func:`closeness` checks (its cost is about 10 µs a point).
MAX_CHECKED = 1 << 18


def _sigma(sigma2: Rat) -> Ball:
    return ball(sigma2).sqrt()


def _normaliser(sigma2: Rat) -> Ball:
    """θ = N/(s√(2π)) ∈ [1, 1 + 3e^{−2π²s²}], as a ball."""
    extra = 3 * (-2 * flint.arb.pi() ** 2 * ball(sigma2)).exp()
    return ball(1) + extra * flint.arb("0.5 +/- 0.5")


def _phi_bar(x: Ball) -> Ball:
    """Φ̄(x) = erfc(x/√2)/2."""
    return (x / ball(2).sqrt()).erfc() / 2


def tail_upper(sigma2: Rat, m: int) -> Rat:
    """A rational ≥ Pr[Z ≥ m] for m ≥ 0: φ(m/s)/s + Φ̄(m/s) (see the module docstring)."""
    if m < 0:
        return mpq(1)
    with precise():
        s = _sigma(sigma2)
        x = ball(m) / s
        density = (-(x * x) / 2).exp() / (2 * flint.arb.pi()).sqrt() / s
        return min(mpq(1), upper(density + _phi_bar(x)))


def tail_lower(sigma2: Rat, m: int) -> Rat:
    """A rational ≤ Pr[Z ≥ m], any integer m: Φ̄(m/s)/θ for m ≥ 0, and
    1 − (upper bound of Pr[Z ≥ 1 − m]) below (the law is symmetric)."""
    if m <= 0:
        return max(mpq(0), 1 - tail_upper(sigma2, 1 - m))
    with precise():
        return max(mpq(0), lower(_phi_bar(ball(m) / _sigma(sigma2)) / _normaliser(sigma2)))


def keep_enclosure(sigma2: Rat, m: int) -> tuple[Rat, Rat]:
    """[lo, hi] ∋ Pr[Z ≥ m], tight: the terms y = |m'| … |m'| + L summed exactly in balls, the
    rest bounded by g(L+1)/(1 − e^{−(L+1)/s²}) (m' = m, or 1 − m with the complement)."""
    return _keep_enclosure(mpq(sigma2), int(m))


@functools.lru_cache(maxsize=4096)
def _keep_enclosure(sigma2: Rat, m: int) -> tuple[Rat, Rat]:
    start = m if m >= 1 else 1 - m
    s = math.sqrt(float(sigma2))
    length = int(s * 13) + 8
    with precise():
        two_s2 = ball(2 * sigma2)
        total = sum(((-ball(y * y) / two_s2).exp() for y in range(start, start + length)), ball(0))
        end = start + length
        rest_bound = (-ball(end * end) / two_s2).exp() / -(-ball(end) / ball(sigma2)).expm1()
        rest = rest_bound * flint.arb("0.5 +/- 0.5")
        norm = (2 * flint.arb.pi() * ball(sigma2)).sqrt() * _normaliser(sigma2)
        tail = (total + rest) / norm
        value = tail if m >= 1 else 1 - tail
        return max(mpq(0), lower(value)), min(mpq(1), upper(value))


def closeness(sigma2: Rat, zeta: Rat, reach: int, window: int) -> Rat | None:
    """If U(k) ∈ [Φ̄(x_k + ζ), Φ̄(x_k − ζ)] for every k in [0, reach] (checked rigorously), a
    rational ≥ U(window) (0 ≤ window ≤ reach); ``None`` if a point fails."""
    if reach + 1 > MAX_CHECKED or not 0 <= window <= reach:
        raise ValueError(f"cannot check closeness over [0, {reach}] with window {window}")
    return _closeness(mpq(sigma2), mpq(zeta), int(reach), int(window))


@functools.lru_cache(maxsize=64)
def _closeness(sigma2: Rat, zeta: Rat, reach: int, window: int) -> Rat | None:
    with precise(CHECK_BITS):
        s = _sigma(sigma2)
        two_s2 = ball(2 * sigma2)
        norm = (2 * flint.arb.pi() * ball(sigma2)).sqrt() * _normaliser(sigma2)
        # Terms past the checked points are summed too, far enough for the rest to be
        # negligible next to the tolerance ζ allows at k = reach.
        top = reach + 3 * int(isqrt(mpz(sigma2.numerator // sigma2.denominator))) + 3
        rest_bound = (-ball(top * top) / two_s2).exp() / -(-ball(top) / ball(sigma2)).expm1()
        tail = rest_bound * flint.arb("0.5 +/- 0.5") / norm  # Pr[Z ≥ top], in [0, bound]
        for y in range(top - 1, reach, -1):
            tail = tail + (-ball(y * y) / two_s2).exp() / norm  # now Pr[Z > reach]
        z, half, one_over_s = ball(zeta), ball(mpq(1, 2)), 1 / s
        at_window = mpq(1)
        for k in range(reach, -1, -1):
            x = (ball(k) + half) * one_over_s
            if not (_phi_bar(x + z) <= tail and tail <= _phi_bar(x - z)):
                return None
            if k == window:
                at_window = upper(tail)
            tail = tail + (-ball(k * k) / two_s2).exp() / norm  # now Pr[Z > k − 1]
        return at_window


def unit_weights(grid: int, items: int) -> tuple[int, ...]:
    """w_t = ⌊G/√t⌋ exactly (the largest integer with t·w² ≤ G²) for t = 1 … *items*: a unit's
    weight vector has ℓ₂ norm ≤ G, one unit of the grid G standing for weight 1 (Gopi et al.'s
    ℓ₂ weighting, rounded down)."""
    return tuple(int(isqrt(mpz(grid * grid // t))) for t in range(1, items + 1))


@dataclass(frozen=True)
class RoundCertificate:
    """One round of the weighted Gaussian: noise N_ℤ(0, ``sigma2``) in units of 1/``grid``,
    threshold ``threshold``, units of at most ``items`` items weighted by :func:`unit_weights`,
    and the closeness certificate (``zeta`` over [0, ``reach``], with Pr[Z > window] ≤ ``tau``,
    ``window`` = reach − grid).

    - ``mu``: one unit added or removed moves each of its t ≤ ``items`` items by w_t ≤ G/√t, so
      the pairs it changes are (w_t/s + 2ζ)-GDP and compose to
      √(Σ (w_t/s + 2ζ)²) ≤ G/s + 2ζ√items (DRS Cor. 3.3), returned as a rational upper bound.
    - ``appear``: items that no other unit has are kept only by the unit's own weight, with
      probability ≤ max_t 1 − (1 − Pr[Z ≥ T − w_t])^t (:func:`tail_upper`).
    - ``tau``: a pair with an end outside [−window, window] has both ends on one side beyond it
      (w ≤ G), so it is within total variation τ of a GDP pair."""

    grid: int
    items: int
    sigma2: Rat
    threshold: int
    zeta: Rat
    reach: int
    tau: Rat

    @property
    def weights(self) -> tuple[int, ...]:
        return unit_weights(self.grid, self.items)

    def mu(self) -> Rat:
        with precise():
            value = (
                ball(self.grid) / _sigma(self.sigma2)
                + 2 * ball(self.zeta) * ball(self.items).sqrt()
            )
            return upper(value)

    def appear(self) -> Rat:
        worst = mpq(0)
        with precise():
            for t, w in enumerate(self.weights, start=1):
                p = ball(tail_upper(self.sigma2, self.threshold - w))
                worst = max(worst, upper(1 - (1 - p) ** t))
        return min(worst, mpq(1))

    def keep(self, weight: int) -> tuple[Rat, Rat]:
        """[lo, hi] ∋ π(weight), the probability that an item of that weighted total is kept."""
        return keep_enclosure(self.sigma2, self.threshold - weight)


class GaussianKeeps(Draw):
    """One round's keep decisions: for thresholds m₁ … m_n, independent Z_i ~ N_ℤ(0, σ²) from
    the exact sampler (:func:`dpplug.discrete_noise.discrete_gaussian`) and the tuple of
    Z_i ≥ m_i. Served (:func:`dpplug.program.run`), so a release's draws can be replayed; its
    probabilities are irrational, so :meth:`law` refuses and :meth:`enclosed` gives, for each
    outcome, an interval holding its probability."""

    def __init__(self, sigma2: Rat, thresholds: tuple[int, ...]) -> None:
        self.sigma2, self.thresholds = mpq(sigma2), thresholds

    def sample(self, source: RandomSource) -> tuple[bool, ...]:
        noise = discrete_gaussian(self.sigma2, source, size=len(self.thresholds))
        return tuple(z >= m for z, m in zip(noise, self.thresholds, strict=True))

    def law(self) -> dict[Any, Any]:
        raise NotSupported(
            "discrete Gaussian keep decisions have irrational probabilities: use enclosed()"
        )

    def enclosed(self) -> dict[tuple[bool, ...], tuple[Rat, Rat]]:
        """Each outcome with [lo, hi] ∋ its probability (products of :func:`keep_enclosure`)."""
        laws = [keep_enclosure(self.sigma2, m) for m in self.thresholds]
        result: dict[tuple[bool, ...], tuple[Rat, Rat]] = {}
        for outcome in product((False, True), repeat=len(laws)):
            lo, hi = mpq(1), mpq(1)
            for kept, (p_lo, p_hi) in zip(outcome, laws, strict=True):
                lo, hi = (lo * p_lo, hi * p_hi) if kept else (lo * (1 - p_hi), hi * (1 - p_lo))
            result[outcome] = (lo, hi)
        return result
