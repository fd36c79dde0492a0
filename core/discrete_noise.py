"""Exact samplers of the discrete Laplace and the discrete Gaussian on ℤ for any rational
parameter (Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS
2020, Alg. 1–3), and rigorous bounds on their tails.

Every draw is an exact uniform integer from a :class:`~dpplug.randomness.RandomSource` and every
comparison is between integers or rationals, so the samples follow the stated laws exactly
(Mironov 2012); no float is involved.

- :func:`bernoulli_exp`: Bernoulli(e^{−γ}) for a rational γ ≥ 0 (Alg. 1, von Neumann's method:
  for γ ≤ 1 count Bernoulli(γ/K) successes, K = 1, 2, …, and return whether their number is even;
  for γ > 1 multiply ⌊γ⌋ coins of e^{−1} and one of e^{−(γ−⌊γ⌋)}).
- :func:`discrete_laplace`: Pr[Y = y] ∝ e^{−|y|/b} for a rational scale b = t/s (Alg. 2). Its
  expected number of draws is bounded independently of b, which the dyadic ``discrete-laplace``
  sampler (one Bernoulli trial per unit of |Y|) is not: noise on counts scaled by a grid of
  2^16 would take millions of trials there.
- :func:`discrete_gaussian`: Pr[Y = y] ∝ e^{−y²/(2σ²)} for a rational σ² (Alg. 3: discrete
  Laplace proposals of scale ⌊σ⌋ + 1, accepted with probability e^{−(|y| − σ²/t)²/(2σ²)}).

The laws have irrational probabilities (e^{−1/b} is irrational for rational b ≠ 0), so they are
not :class:`~dpplug.pmf.Pmf` s; their privacy follows from the likelihood ratios, which are
exactly e^{|Δ|/b} for the discrete Laplace shifted by Δ, and from the zCDP bound of the discrete
Gaussian (CKS Thm 14). Tails are bounded rigorously in :mod:`dpplug.bounds` balls:

- discrete Laplace: Pr[|Y| > a] = 2q^{a+1}/(1 + q) with q = e^{−1/b}, exactly;
- discrete Gaussian: it is σ²-subgaussian (CKS §2.3: E[e^{λY}] ≤ e^{λ²σ²/2}), so
  Pr[|Y| > a] ≤ 2e^{−(a+1)²/(2σ²)}.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from gmpy2 import isqrt, mpq, mpz

from dpplug.bounds import Ball, ball, lower, precise, upper, upper_of
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.exact import Rat, smallest_error_bound
from dpplug.randomness import RandomSource

#: The widest window (± outputs) :func:`gaussian_enclosure` encloses.
MAX_ENCLOSED_RADIUS = 4096
#: Bits fetched from the source at a time by :class:`BitStream`.
CHUNK_BITS = 1024


class BitStream:
    """Uniform random bits from a :class:`~dpplug.randomness.RandomSource`, fetched
    :data:`CHUNK_BITS` at a time and each used once, so the integers it serves are exactly
    uniform while the source is called once per chunk rather than once per draw."""

    def __init__(self, source: RandomSource) -> None:
        self.source = source
        self._value, self._left = 0, 0

    def bits(self, k: int) -> int:
        """A uniform integer in [0, 2^k)."""
        while self._left < k:
            self._value |= self.source.bits(CHUNK_BITS) << self._left
            self._left += CHUNK_BITS
        out = self._value & ((1 << k) - 1)
        self._value >>= k
        self._left -= k
        return out

    def uniform(self, d: int) -> int:
        """An exact uniform integer in [1, d] (rejection from ⌈log₂ d⌉ bits)."""
        k = (d - 1).bit_length()
        while True:
            u = self.bits(k)
            if u < d:
                return u + 1


def bernoulli_exp(gamma: Rat, bits: BitStream) -> bool:
    """Exact Bernoulli(e^{−γ}) for a rational γ ≥ 0 (CKS Alg. 1)."""
    gamma = mpq(gamma)
    if gamma < 0:
        raise ValueError(f"bernoulli_exp needs γ ≥ 0, got {gamma}")
    return _bernoulli_exp(int(gamma.numerator), int(gamma.denominator), bits)


def _bernoulli_exp(num: int, den: int, bits: BitStream) -> bool:
    """Bernoulli(e^{−num/den}) in integers: for γ ≤ 1 count the successes of Bernoulli(γ/K),
    K = 1, 2, … (U(den·K) ≤ num), and return whether their number is even; for γ > 1 multiply
    ⌊γ⌋ coins of e^{−1} and one of e^{−(γ − ⌊γ⌋)}."""
    if num > den:
        whole = num // den
        for _ in range(whole):
            if not _bernoulli_exp(1, 1, bits):
                return False
        return _bernoulli_exp(num - whole * den, den, bits)
    k = 1
    while bits.uniform(den * k) <= num:
        k += 1
    return k % 2 == 1


def _laplace(scale: Rat, bits: BitStream) -> int:
    """CKS Alg. 2 with scale = t/s: U uniform in {0, …, t−1} is kept with probability e^{−U/t},
    V counts Bernoulli(e^{−1}) successes, X = U + tV is then geometric with ratio e^{−1/t}, and
    Y = ⌊X/s⌋ with a fair sign (a negative zero rejected) has the two-sided law of ratio
    e^{−s/t}."""
    t, s = int(scale.numerator), int(scale.denominator)
    while True:
        u = bits.uniform(t) - 1
        if not _bernoulli_exp(u, t, bits):
            continue
        v = 0
        while _bernoulli_exp(1, 1, bits):
            v += 1
        y = (u + t * v) // s
        negative = bits.bits(1) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def _gaussian(sigma2: Rat, bits: BitStream) -> int:
    """CKS Alg. 3, with σ² = a/b: accept a proposal y with probability e^{−γ},
    γ = (|y| − σ²/t)²/(2σ²) = (b·t·|y| − a)²/(2·a·b·t²)."""
    a, b = int(sigma2.numerator), int(sigma2.denominator)
    t = int(isqrt(mpz(a // b))) + 1  # ⌊σ⌋ + 1
    scale, den = mpq(t), 2 * a * b * t * t
    while True:
        y = _laplace(scale, bits)
        if _bernoulli_exp((b * t * abs(y) - a) ** 2, den, bits):
            return y


def discrete_laplace(scale: Rat, source: RandomSource, size: int | None = None) -> Any:
    """Pr[Y = y] ∝ e^{−|y|/scale} for a rational scale > 0 (CKS Alg. 2): one draw, or a list
    of *size* independent draws."""
    scale = mpq(scale)
    if scale <= 0:
        raise ValueError(f"discrete_laplace needs a scale > 0, got {scale}")
    bits = BitStream(source)
    if size is None:
        return _laplace(scale, bits)
    return [_laplace(scale, bits) for _ in range(size)]


def discrete_gaussian(sigma2: Rat, source: RandomSource, size: int | None = None) -> Any:
    """Pr[Y = y] ∝ e^{−y²/(2σ²)} for a rational σ² > 0 (CKS Alg. 3): one draw, or a list of
    *size* independent draws."""
    sigma2 = mpq(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"discrete_gaussian needs σ² > 0, got {sigma2}")
    bits = BitStream(source)
    if size is None:
        return _gaussian(sigma2, bits)
    return [_gaussian(sigma2, bits) for _ in range(size)]


def laplace_cdf(scale: Rat, x: int) -> Ball:
    """Pr[Y ≤ x] for the discrete Laplace of :func:`discrete_laplace`, as a ball:
    1 − q^{x+1}/(1 + q) for x ≥ 0 and q^{−x}/(1 + q) below, q = e^{−1/scale}."""
    q_log = -1 / mpq(scale)
    q = ball(q_log).exp()
    if x >= 0:
        return 1 - ball(q_log * (x + 1)).exp() / (1 + q)
    return ball(-q_log * x).exp() / (1 + q)


def laplace_tail(scale: Rat, a: int) -> Rat:
    """A rational ≥ Pr[|Y| > a] = 2q^{a+1}/(1 + q), q = e^{−1/scale}, for the discrete
    Laplace of :func:`discrete_laplace`."""

    def tail() -> Ball:
        q = (-1 / ball(scale)).exp()
        return 2 * (-(a + 1) / ball(scale)).exp() / (1 + q)

    return upper_of(tail)


def gaussian_tail(sigma2: Rat, a: int) -> Rat:
    """A rational ≥ Pr[|Y| > a] = 2·Σ_{j>a} g(j)/N for the discrete Gaussian, g(j) =
    e^{−j²/(2σ²)} and N = Σ_z g(z), the tail of its exact law up to a factor near 1:

    - N = σ√(2π)·Σ_k e^{−2π²σ²k²} ≥ σ√(2π) (Poisson summation: Jacobi's theta function);
    - g decreases on [0, ∞) and is convex on [σ, ∞), so Σ_{j>a} g(j) ≤ ∫ from a + ½ of g
      (each g(j) at most its mean over [j − ½, j + ½], Hermite–Hadamard) when a + ½ ≥ σ, and
      ≤ ∫ from a of g otherwise; ∫_x^∞ g = σ√(π/2)·erfc(x/(σ√2));

    so Pr[|Y| > a] ≤ erfc((a + ½)/(σ√2)) (or erfc(a/(σ√2))), the continuous Gaussian's tail
    beyond a + ½. The subgaussian 2e^{−(a+1)²/(2σ²)} (CKS §2.3) is used where it is smaller."""

    def tail() -> Ball:
        sigma = ball(sigma2).sqrt()
        edge = mpq(2 * a + 1, 2) if mpq(2 * a + 1, 2) ** 2 >= mpq(sigma2) else mpq(a)
        exact = (ball(edge) / (sigma * ball(2).sqrt())).erfc()
        subgaussian = 2 * (-ball(mpq(a + 1) ** 2 / (2 * mpq(sigma2)))).exp()
        return exact if exact < subgaussian else subgaussian

    return upper_of(tail)


def laplace_error(scale: Rat, beta: Rat) -> int:
    """The smallest integer a ≥ 0 with Pr[|Y| > a] ≤ β (rigorously) for scale *scale*."""
    return smallest_error_bound(lambda a: laplace_tail(scale, a), mpq(beta))


def laplace_error_estimate(scale: float, log_beta: float) -> float:
    """:func:`laplace_error` in floats from ln β (a search estimate for choosing parameters,
    never declared): ⌈t·(ln 2 − ln β − ln(1 + e^{−1/t}))⌉ − 1, at least 0."""
    exponent = math.log(2) - log_beta - math.log1p(math.exp(-1 / scale))
    return max(0.0, math.ceil(scale * exponent) - 1)


def gaussian_error(sigma2: Rat, beta: Rat) -> int:
    """The smallest integer a ≥ 0 whose tail bound :func:`gaussian_tail` is at most β."""
    return smallest_error_bound(lambda a: gaussian_tail(sigma2, a), mpq(beta))


def laplace_log_mgf(scale: Rat, x: Ball) -> Ball:
    """ln E[e^{xY}] for the discrete Laplace of scale *scale*, as a ball, for |x| < 1/scale:
    ln((1 − q)²/((1 − qe^x)(1 − qe^{−x}))) with q = e^{−1/scale}, written as
    −ln(1 − r·(e^x − 1)) − ln(1 − r·(e^{−x} − 1)), r = q/(1 − q), which keeps its precision for
    small x. Even and convex in x, and ln E[e^{xY}]/x² is non-decreasing in |x| (its power series
    in x has non-negative coefficients: Σ_j (2q^j/j)(cosh(jx) − 1))."""
    q = (-1 / ball(scale)).exp()
    r = q / (1 - q)
    return -(1 - r * x.expm1()).log() - (1 - r * (-x).expm1()).log()


def laplace_enclosure(scale: Rat, bits: int) -> EnclosedLaw:
    """The law of Y, discrete Laplace of rational *scale* (Pr[Y = y] = (1 − q)·q^{|y|}/(1 + q),
    q = e^{−1/scale}), enclosed at *bits* bits on the window ±w, w the smallest integer whose
    tail Pr[|Y| > w] = 2q^{w+1}/(1 + q) is below about 2^−bits (bounded above as the outside
    mass)."""
    w = math.ceil(float(scale) * (bits + 2) * math.log(2))
    if w > MAX_ENCLOSED_RADIUS:
        raise NotSupported(
            f"the discrete Laplace of scale ≈ {float(scale):.3g} needs a window of ±{w:,} outputs "
            f"to enclose at {bits} bits (the limit is ±{MAX_ENCLOSED_RADIUS:,})"
        )
    return _laplace_noise_enclosure(mpq(scale), w, bits)


@functools.lru_cache(maxsize=16)
def _laplace_noise_enclosure(scale: Rat, w: int, bits: int) -> EnclosedLaw:
    with precise(bits):
        q = (-1 / ball(scale)).exp()
        centre = (1 - q) / (1 + q)
        halves = [(lower(centre * q**j), upper(centre * q**j)) for j in range(w + 1)]
        outside = upper(2 * q ** (w + 1) / (1 + q))
    return EnclosedLaw(-w, (*halves[:0:-1], *halves), outside, bits)


def gaussian_enclosure(sigma2: Rat, centre: int, bits: int) -> EnclosedLaw:
    """The law of centre + Y, Y discrete Gaussian of rational variance parameter σ² (CKS 2020,
    Def. 1: Pr[Y = y] = e^{−y²/(2σ²)}/N, N = Σ_z e^{−z²/(2σ²)}), enclosed at *bits* bits.

    The window is centre ± w with w the smallest integer whose tail is below about 2^−bits.
    With g(j) = e^{−j²/(2σ²)}, the tail beyond the window is bounded through
    j² ≥ (w+1)² + 2(w+1)(j − w − 1) for j ≥ w + 1:
    S = Σ_{j>w} g(j) ≤ g(w+1)/(1 − e^{−(w+1)/σ²}). With N_in = g(0) + 2Σ_{1≤j≤w} g(j) ≤ N ≤
    N_in + 2S, Pr[Y = y] lies in [g(y)/(N_in + 2S), g(y)/N_in] and the outside mass is at most
    2S/N_in; every quantity is a ball (:mod:`dpplug.bounds`) and its ends rational. The noise's
    enclosure is computed once per (σ², bits) and shifted to *centre*."""
    w = math.isqrt(math.ceil(2 * float(sigma2) * (bits * math.log(2) + 2))) + 1
    if w > MAX_ENCLOSED_RADIUS:
        raise NotSupported(
            f"the discrete Gaussian of σ² ≈ {float(sigma2):.3g} needs a window of ±{w:,} outputs "
            f"to enclose at {bits} bits (the limit is ±{MAX_ENCLOSED_RADIUS:,})"
        )
    noise = _gaussian_noise_enclosure(mpq(sigma2), w, bits)
    return EnclosedLaw(centre + noise.low, noise.bounds, noise.outside, bits)


@functools.lru_cache(maxsize=16)
def _gaussian_noise_enclosure(sigma2: Rat, w: int, bits: int) -> EnclosedLaw:
    with precise(bits):
        two_s2 = ball(2 * sigma2)
        g = [(-ball(j * j) / two_s2).exp() for j in range(w + 2)]
        inside = g[0] + 2 * sum(g[1 : w + 1])
        tail = g[w + 1] / -(-ball(w + 1) / ball(sigma2)).expm1()
        total = inside + 2 * tail
        halves = [(lower(g[j] / total), upper(g[j] / inside)) for j in range(w + 1)]
        outside = upper(2 * tail / inside)
    return EnclosedLaw(-w, (*halves[:0:-1], *halves), outside, bits)
