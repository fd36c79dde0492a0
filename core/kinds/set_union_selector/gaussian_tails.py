"""The tails of the discrete Gaussian, enclosed rigorously, and Bernoulli decisions that follow
them exactly and fast: the keep decisions of thresholded discrete Gaussian noise.

Z ~ N_ℤ(0, s²) (Canonne, Kamath, Steinke, NeurIPS 2020) has Pr[Z = y] = g(y)/N with
g(y) = e^{−y²/(2s²)} and N = Σ_ℤ g; U(k) = Pr[Z > k], and Pr[Z ≥ m] is U(m − 1) for m ≥ 1 and
1 − U(−m) for m ≤ 0 (the law is symmetric).

- :func:`keep_enclosure` (tight, any width asked for): the terms g(y), y = k+1 … E, are summed
  in ball arithmetic through the recurrence g(y + 1) = g(y)·r_y, r_y = e^{−(2y+1)/(2s²)},
  r_{y+1} = r_y·e^{−1/s²}, and the rest is at most g(E)/(1 − r_E) (the ratios decrease), so
  Σ_{y>k} g(y) and N = 1 + 2Σ_{y>0} g(y) are enclosed, and so is their ratio.
- :func:`em_enclosure` (width about (x² + 5)/(60 s³) relative, constant time): by the midpoint
  Euler–Maclaurin formula with its remainder in Peano form, for a = k + ½ and x = a/s,

      Σ_{y>k} g(y) = ∫_a^∞ g + g′(a)/24 + ∫_a^∞ P·g‴,  |P| ≤ √3/216 ≤ 1/120,

  P the periodic antiderivative of the midpoint kernel minus its mean 1/24, which vanishes at
  half-integers. Divided by s√(2π), and with ∫_x^∞ |u³ − 3u|φ(u) du ≤ (x² + 5)φ(x) (it is
  (x² − 1)φ(x) for x ≥ √3 and 4φ(√3) + (1 − x²)φ(x) below), this gives

      θ·U(k) = Φ̄(x) − x·φ(x)/(24 s²) ± (x² + 5)·φ(x)/(120 s³),

  θ = N/(s√(2π)) ∈ [1, 1 + 3e^{−2π²s²}] (Poisson summation).
- :class:`GaussianTail`: the law as a :class:`~.keep_draws.TailLaw`, so that keep decisions
  follow it exactly (:func:`~.keep_draws.keep_decisions`): brackets from the constant-time
  enclosure, refinements from the tight one.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import flint
from gmpy2 import mpq

from dpplug.bounds import Ball, ball, lower, precise, upper
from dpplug.exact import Rat
from dpplug.kinds.set_union_selector.keep_draws import TailLaw, marginal, scaled_bracket

#: Precision (bits) of :func:`em_enclosure`'s balls.
EM_BITS = 128


def _sum_terms(sigma2: Rat, start: int, bits: int) -> Ball:
    """Σ_{y ≥ start} g(y) for start ≥ 0, at *bits* bits: the terms up to where the rest is
    below 2^−bits of g(0) summed by the recurrence, the rest bounded (module docstring)."""
    s = math.sqrt(float(sigma2))
    length = max(0, math.ceil(s * math.sqrt(2 * bits * math.log(2))) - start) + 8
    inverse = 1 / ball(sigma2)
    q = (-inverse).exp()
    term = (-ball(start * start) * inverse / 2).exp()
    ratio = (-ball(2 * start + 1) * inverse / 2).exp()
    total = ball(0)
    for _ in range(length):
        total += term
        term *= ratio
        ratio *= q
    return total + term / (1 - ratio) * flint.arb("0.5 +/- 0.5")


@functools.lru_cache(maxsize=256)
def _normaliser(sigma2: Rat, bits: int) -> Ball:
    """N = Σ_ℤ g = 1 + 2Σ_{y ≥ 1} g(y), at *bits* bits."""
    with precise(bits):
        return 1 + 2 * _sum_terms(sigma2, 1, bits)


def _enclosure(sigma2: Rat, m: int, bits: int) -> Ball:
    """Pr[Z ≥ m] as a ball at *bits* bits (its width about 2^−bits)."""
    with precise(bits + 32):
        start = m if m >= 1 else 1 - m
        tail = _sum_terms(sigma2, start, bits + 32) / _normaliser(sigma2, bits + 32)
        return tail if m >= 1 else 1 - tail


def keep_enclosure(sigma2: Rat, m: int) -> tuple[Rat, Rat]:
    """[lo, hi] ∋ Pr[Z ≥ m], of width about 2^−256."""
    return marginal(GaussianTail(mpq(sigma2)), int(m))


def phi_bar(x: Ball) -> Ball:
    """Φ̄(x) = erfc(x/√2)/2."""
    return (x / ball(2).sqrt()).erfc() / 2


def normaliser_excess(sigma2: Rat) -> Ball:
    """A ball holding θ − 1 = N/(s√(2π)) − 1 ∈ [0, 3e^{−2π²s²}]."""
    return 3 * (-2 * flint.arb.pi() ** 2 * ball(sigma2)).exp() * flint.arb("0.5 +/- 0.5")


def em_deviation(sigma2: Rat, x: Ball) -> Ball:
    """e(x) = x/(24 s²) + (x² + 5)/(120 s³): |θ·U(k) − Φ̄(x)| ≤ φ(x)·e(x) at x = (k + ½)/s."""
    s2 = ball(sigma2)
    return x / (24 * s2) + (x * x + 5) / (120 * s2 * s2.sqrt())


def em_enclosure(sigma2: Rat, m: int) -> tuple[Rat, Rat]:
    """[lo, hi] ∋ Pr[Z ≥ m] in constant time, from the Euler–Maclaurin bound (module
    docstring): relative width about (x² + 5)/(60 s³)."""
    return _em_enclosure(mpq(sigma2), int(m))


@functools.lru_cache(maxsize=1 << 16)
def _em_enclosure(sigma2: Rat, m: int) -> tuple[Rat, Rat]:
    k = m - 1 if m >= 1 else -m  # Pr[Z ≥ m] = U(k), or 1 − U(k)
    with precise(EM_BITS):
        s = ball(sigma2).sqrt()
        x = (ball(k) + ball(mpq(1, 2))) / s
        density = (-(x * x) / 2).exp() / (2 * flint.arb.pi()).sqrt()
        s2 = ball(sigma2)
        centre = phi_bar(x) - x * density / (24 * s2)
        spread = (x * x + 5) * density / (120 * s2 * s) * flint.arb("0 +/- 1")
        theta = 1 + normaliser_excess(sigma2)
        tail = (centre + spread) / theta
        value = tail if m >= 1 else 1 - tail
        return max(mpq(0), lower(value)), min(mpq(1), upper(value))


@dataclass(frozen=True)
class GaussianTail(TailLaw):
    """Pr[Z ≥ m] for Z ~ N_ℤ(0, ``sigma2``) (module docstring)."""

    sigma2: Rat

    def enclose(self, m: int, bits: int) -> tuple[Rat, Rat]:
        value = _enclosure(self.sigma2, m, bits)
        with precise(bits + 32):
            return max(mpq(0), lower(value)), min(mpq(1), upper(value))

    def bracket(self, m: int) -> tuple[int, int]:
        return scaled_bracket(*em_enclosure(self.sigma2, m))
