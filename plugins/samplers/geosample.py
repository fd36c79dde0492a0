"""GeoSample_{n,ε}: the exact clamped geometric mechanism (Balcer & Vadhan, full version
Thm 4.7, Alg. 4.8, Lemma 4.9; ITCS version Thm 4.5; docs/mechanisms.md#geosample).

With e^ε̃ = a/b (see :mod:`.geometric_params`; the paper's a = x + 1, b = x) and
d = (a+b)·a^{n−1}, the scaled CDF of the output for true count c is F(c, z) = G(z − c) for
0 ≤ z < n and d for z ≥ n, where

    G(j) = b^{−j}·a^{n+j}              for −n ≤ j < 0,
    G(j) = d − b^{j+1}·a^{n−1−j}       for 0 ≤ j ≤ n − 1.

(d·Pr[Z ≤ −m] = b^m·a^{n−m} and d·Pr[Z ≥ m] = b^m·a^{n−m} for the two-sided geometric Z of ratio
α = b/a, whose Pr[Z ≤ −m] = α^m/(1+α).) M(c, u) is the smallest z with F(c, z) ≥ u, which equals
clamp(c + j*, 0, n) for j* the smallest j with G(j) ≥ u: one inverse CDF serves every count. The
output law is exactly GeometricMechanism_{n,ε̃}(c), so the per-count likelihood ratio is at most
a/b ≤ e^ε.

**Cost.** G(j) has up to n·log₂ a bits (2·10⁷ at n = 10⁶, ε = 2⁻²⁰). Each comparison of the binary
search is decided from 128-bit enclosures of G(j) and u (:mod:`dpplug.enclosure`), exactly, and
only a tie within the enclosures' width computes G(j) in full; so a sample costs the ⌈log₂ d⌉
random bits of u and O(log n) short operations, and the accuracy O(log a) of them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gmpy2 import mpq, mpz

from dpplug.enclosure import Enclosure, Lift
from dpplug.exact import EXACT_BITS, smallest_error_bound, smallest_reaching
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler
from dpplug.params import Schema, count_bound_param, epsilon_param
from dpplug.plugins.samplers.geometric_params import GeometricParams
from dpplug.plugins.samplers.noise_moments import ClampedNoise


class GeoSample(CountingQuerySampler):
    name = "geosample"
    summary = "Exact clamped geometric mechanism by integer inverse CDF (pure DP)."
    reference = "Balcer & Vadhan, Differential Privacy on Finite Computers: Alg. 4.8 / Thm 4.7"
    schema = Schema(
        (
            count_bound_param(high=10**6),
            epsilon_param(
                "Guarantee for one count of sensitivity 1; achieved: ln(a/b) ∈ [(63/64)ε, ε] "
                "for the simplest rational a/b there.",
                low=mpq(1, 1 << 20),
            ),
        )
    )
    conformance_cases = ({"n": 4, "epsilon": mpq(1, 2)}, {"n": 6, "epsilon": mpq(1, 5)})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n: int = self.params["n"]
        self.geometric = GeometricParams.for_epsilon(self.params["epsilon"])
        a, b = self.geometric.a, self.geometric.b
        self._d = (a + b) * mpz(a) ** (self.n - 1)
        self.d: int = int(self._d)
        self.derived = self.geometric.as_dict()
        self._g_enclosure = lru_cache(maxsize=1 << 14)(lambda j: self._g(j)(Enclosure.of))
        # exact values are read while d is short (cached: a few MiB at most), else on a rare tie
        exact = lambda j: self._g(j)(mpz)  # noqa: E731
        short = self._d.bit_length() <= EXACT_BITS
        self._g_exact = lru_cache(maxsize=1 << 10)(exact) if short else exact

    def _g(self, j: int) -> Any:
        """A formula of G(j) (see the module docstring)."""
        a, b, n, d = self.geometric.a, self.geometric.b, self.n, self._d

        def formula(lift: Lift) -> Any:
            if j < 0:
                return lift(b) ** (-j) * lift(a) ** (n + j)
            if j < n:
                return lift(d) - lift(b) ** (j + 1) * lift(a) ** (n - 1 - j)
            return lift(d)

        return formula

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.geometric.exp_epsilon, 0, COUNT_SENSITIVITY_1)

    def _output(self, count: int, u: int) -> int:
        j = smallest_reaching(self._g_exact, self._g_enclosure, -self.n, self.n, u)
        return min(max(count + j, 0), self.n)

    def _scaled_cdf(self, z: int, count: int) -> int:
        if z < 0:
            return 0
        if z >= self.n:
            return self.d
        return int(self._g(z - count)(mpz))

    def probability_at_most(self, z: int, count: int) -> Any:
        """Pr[M(count, U) ≤ z] = F(count, z)/d in closed form, for error bounds that read many
        of them (:mod:`dpplug.plugins.histograms.error_bounds`): G(j)/d = (b/a)^{−j}·a/(a+b)
        for j = z − count < 0 and 1 − (b/a)^{j+1}·a/(a+b) for 0 ≤ j, rationals of about
        |j|·log₂ a bits where F has n·log₂ a. It must equal F(count, z)/d: a subclass that
        changes the law overrides both."""
        if z < 0:
            return mpq(0)
        if z >= self.n:
            return mpq(1)
        a, b, j = self.geometric.a, self.geometric.b, z - count
        if j < 0:
            return mpq(mpz(b) ** -j, mpz(a) ** (-j - 1) * (a + b))
        return 1 - mpq(mpz(b) ** (j + 1), mpz(a) ** j * (a + b))

    def _noise_variance(self, count: int) -> float:
        """The clamped geometric's variance in closed form (:mod:`.noise_moments`)."""
        a, b = self.geometric.a, self.geometric.b
        noise = ClampedNoise(count, self.n)
        noise.symmetric(mpq(b, a), mpq(a - b, a + b), None)
        return noise.variance

    def _accuracy(self, beta: Any) -> Accuracy:
        """Exact integer form of m = ⌈ln(2/((1+α)β))/ε̃⌉ − 1: the smallest m with
        Pr[|Z| > m] = 2b^{m+1}/((a+b)·a^m) ≤ β (clamping only shrinks the error)."""
        m = smallest_error_bound(self.geometric.tail, beta, cap=self.n)
        bound = ErrorBound(m, beta)
        return Accuracy(bound, bound, formula="smallest m with 2·b^(m+1) ≤ β·(a+b)·a^m, a/b = e^ε̃")
