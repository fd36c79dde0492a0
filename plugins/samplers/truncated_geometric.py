"""k-TSGD: the truncated symmetric geometric distribution (Desfontaines et al., Def. 6–7,
Thm 4; docs/mechanisms.md#truncated-geometric), sampled exactly with a rational e^ε.

e^ε is rounded down to a dyadic rational L = a/b with 2^-40·ε relative resolution
(ε̃ = ln L ∈ [(1 − 2^-40)ε, ε]), so the keep probabilities of the thresholding selector built on it
are within far less than 10^-6 of those at ε itself. The noise X on {−k, …, k} has integer weights
w_x = a^{k−|x|}·b^{|x|}, the two-sided geometric conditioned on |X| ≤ k, and k is the smallest
integer with Pr[X = k] = (L−1)/((L+1)L^k − 2) ≤ δ. The release c + X is (ε̃, δ′)-DP for counts
differing by one, with δ′ = Pr[X = k] ≤ δ exactly: neighbouring outputs have likelihood ratio at
most L except at the extreme value, whose mass is δ′.

Given a count bound ``n``, the release is clamp(c + X, 0, n), a counting-query sampler on [0, n]
as Balcer–Vadhan's releasers need (clamping is post-processing); without one it is c + X on ℤ.

The inverse CDF uses the closed form of the partial sums S(s) = Σ_{m=s}^{k} a^{k−m} b^m
= b^s (a^{k−s+1} − b^{k−s+1})/(a − b), so no table of 2k+1 big integers is kept: M(c, u) compares
u with enclosures of G(j) = Σ_{x ≤ j} w_x (:mod:`dpplug.enclosure`), exactly, and ``sample``
locates a uniform among the 2k CDF boundaries G(j)/d in bulk (:mod:`dpplug.inverse_cdf`), with
the same law and one 63-bit draw per count but for rare refinements.
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq, mpz

from dpplug.enclosure import Enclosure, Lift
from dpplug.exact import (
    EXACT_BITS,
    ceil_log2,
    exp_lower,
    smallest_error_bound,
    smallest_reaching,
)
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.inverse_cdf import BoundaryTable
from dpplug.kinds import CountingQuerySampler
from dpplug.kinds.sampler.base import law_size_check
from dpplug.params import Schema, count_bound_param, epsilon_param, probability_param
from dpplug.plugins.samplers.noise_moments import ClampedNoise, power_sums
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource

#: log₂ of the relative resolution of ε̃: ε̃ ≥ (1 − 2^-40)·ε.
EPSILON_BITS = 40


def tsgd_delta(a: int, b: int, k: int) -> Any:
    """A formula of Pr[X = k] = (L−1)/((L+1)·L^k − 2) = (a−b)·b^k/((a+b)·a^k − 2b^{k+1}) for
    k-TSGD with e^ε = L = a/b (:mod:`dpplug.enclosure`)."""

    def formula(lift: Lift) -> Any:
        return (a - b) * lift(b) ** k / ((a + b) * lift(a) ** k - 2 * lift(b) ** (k + 1))

    return formula


class TruncatedGeometric(CountingQuerySampler):
    name = "truncated-geometric"
    summary = "k-TSGD noise with rational e^ε: exact (ε, δ)-DP count release, outputs c ± k."
    reference = (
        "Desfontaines, Voss, Gipson, Mandayam, Differentially private partition selection: "
        "Def. 6–7, Thm 4"
    )
    schema = Schema(
        (
            epsilon_param(
                "Guarantee for one count of sensitivity 1 (e^ε rounded down to a rational).",
                low=mpq(1, 1 << 10),
            ),
            probability_param(
                "delta",
                "δ of the guarantee; the achieved δ′ = Pr[X = k] ≤ δ.",
                low=mpq(1, 1 << 128),
            ),
            count_bound_param(optional=True),
        )
    )
    conformance_cases = (
        {"epsilon": mpq(1, 2), "delta": mpq(1, 100), "n": 6},
        {"epsilon": 1, "delta": mpq(1, 1000), "n": 4},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        epsilon, delta = self.params["epsilon"], self.params["delta"]
        self.n: int | None = self.params["n"]
        self.exp_epsilon = L = exp_lower(epsilon, ceil_log2((1 << EPSILON_BITS) / epsilon))
        self.a, self.b = a, b = int(L.numerator), int(L.denominator)
        self.k: int = smallest_error_bound(lambda k: tsgd_delta(a, b, k), delta)
        self._d = mpz(self._s(0)(mpq) + self._s(1)(mpq))
        self.d: int = int(self._d)
        self.delta = mpq(mpz(b) ** self.k, self._d)
        self.derived = {"exp_epsilon": L, "k": self.k, "achieved_delta": self.delta}
        self._g_enclosure = lru_cache(maxsize=1 << 14)(lambda j: self._g(j)(Enclosure.of))
        # exact values are read while d is short (cached: a few MiB at most), else on a rare tie
        exact = lambda j: self._g(j)(mpq)  # noqa: E731
        short = self._d.bit_length() <= EXACT_BITS
        self._g_exact = lru_cache(maxsize=1 << 10)(exact) if short else exact

    def _s(self, s: int) -> Any:
        """A formula of S(s) = Σ_{m=s}^{k} a^{k−m} b^m (0 for s > k; a − b divides a^m − b^m)."""
        a, b, k = self.a, self.b, self.k

        def formula(lift: Lift) -> Any:
            if s > k:
                return lift(0)
            m = k - s + 1
            return lift(b) ** s * (lift(a) ** m - lift(b) ** m) / (a - b)

        return formula

    def _g(self, j: int) -> Any:
        """A formula of G(j) = Σ_{x=−k}^{j} w_x."""
        if j <= 0:
            return self._s(-j)
        d, upper = self._d, self._s(j + 1)
        return lambda lift: lift(d) - upper(lift)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.exp_epsilon, self.delta, COUNT_SENSITIVITY_1)

    def _clamp(self, z: int) -> int:
        return z if self.n is None else min(max(z, 0), self.n)

    def _output(self, count: int, u: int) -> int:
        noise = smallest_reaching(self._g_exact, self._g_enclosure, -self.k, self.k, u)
        return self._clamp(count + noise)

    @cached_property
    def _boundaries(self) -> BoundaryTable:
        """The CDF boundaries G(j)/d for j = −k … k − 1, enclosed by summing the weights
        w_j/d (each w_{j−1}·a/b up to the centre, w_{j−1}·b/a after it)."""
        step = Enclosure.of(self.a) / self.b
        weight = Enclosure.of(self.b) ** self.k / Enclosure.of(self._d)
        boundaries = [weight]
        for j in range(1 - self.k, self.k):
            weight = weight * step if j <= 0 else weight / step
            boundaries.append(boundaries[-1] + weight)
        return BoundaryTable.build(boundaries, lambda i: mpq(self._g_exact(i - self.k), self._d))

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        noise = self._boundaries.locate(counts.size, source) - self.k
        noisy = counts + noise
        return noisy if self.n is None else np.clip(noisy, 0, self.n)

    def _scaled_cdf(self, z: int, count: int) -> int:
        if self.n is not None and (z < 0 or z >= self.n):
            return 0 if z < 0 else self.d
        j = z - count
        if j < -self.k:
            return 0
        return self.d if j >= self.k else int(self._g_exact(j))

    def _pmf(self, count: int) -> Pmf:
        a, b, k = self.a, self.b, self.k
        law_size_check(self, 2 * k + 1)
        law: dict[int, Any] = {}
        for x in range(-k, k + 1):
            z = self._clamp(count + x)
            law[z] = law.get(z, mpq(0)) + mpq(mpz(a) ** (k - abs(x)) * mpz(b) ** abs(x), self._d)
        return Pmf(law)

    def _noise_variance(self, count: int) -> float:
        """Pr[X = x] = α^{|x|}/Z (α = b/a, Z = 1 + 2Σ_{m≤k} α^m), clamped, in closed form."""
        ratio = mpq(self.b, self.a)
        noise = ClampedNoise(count, self.n)
        noise.symmetric(ratio, 1 / (1 + 2 * power_sums(ratio, 1, self.k)[0]), self.k)
        return noise.variance

    def _accuracy(self, beta: Any) -> Accuracy:
        """Smallest m with Pr[|X| > m] = 2·S(m+1)/d ≤ β (0 for m ≥ k; clamping only helps)."""
        d = self._d

        def tail(m: int) -> Any:
            s = self._s(m + 1)
            return lambda lift: 2 * s(lift) / lift(d)

        m = smallest_error_bound(tail, beta, cap=self.k)
        bound = ErrorBound(m, beta)
        return Accuracy(bound, bound, formula="smallest m with Pr[|X| > m] ≤ β for k-TSGD X")
