"""GeoSample_{n,ε}: the exact clamped geometric mechanism (Balcer & Vadhan, full version
Thm 4.7, Alg. 4.8, Lemma 4.9; ITCS version Thm 4.5; docs/mechanisms.md#geosample).

With x = 2^K (see :mod:`.geometric_params`) and d = (2x+1)(x+1)^{n−1}, the scaled CDF of the
output for true count c is F(c, z) = G(z − c) for 0 ≤ z < n and d for z ≥ n, where

    G(j) = x^{−j}·(x+1)^{n+j}            for −n ≤ j < 0,
    G(j) = d − x^{j+1}·(x+1)^{n−1−j}     for 0 ≤ j ≤ n − 1.

M(c, u) is the smallest z with F(c, z) ≥ u, which equals clamp(c + j*, 0, n) for j* the smallest
j with G(j) ≥ u: one inverse CDF serves every count. The output law is exactly
GeometricMechanism_{n,ε̃}(c), so the per-count likelihood ratio is at most (x+1)/x.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gmpy2 import mpq

from dpplug.exact import smallest_at_least, smallest_error_bound
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler
from dpplug.params import Schema, count_bound_param, epsilon_param
from dpplug.plugins.samplers.geometric_params import GeometricParams
from dpplug.pmf import Pmf


class GeoSample(CountingQuerySampler):
    name = "geosample"
    summary = "Exact clamped geometric mechanism by integer inverse CDF (pure DP)."
    reference = "Balcer & Vadhan, Differential Privacy on Finite Computers: Alg. 4.8 / Thm 4.7"
    schema = Schema(
        (
            count_bound_param(high=10**6),
            epsilon_param(
                "Guarantee for one count of sensitivity 1; achieved: ln((x+1)/x) with "
                "x = 2^⌈log₂(1/ε)⌉ (paper ε′ = 2ε rounded down into 1/ℕ).",
                low=mpq(1, 1 << 20),
            ),
        )
    )
    conformance_cases = ({"n": 4, "epsilon": mpq(1, 2)}, {"n": 6, "epsilon": mpq(1, 5)})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n: int = self.params["n"]
        self.geometric = GeometricParams.for_epsilon(self.params["epsilon"])
        x, n = self.geometric.x, self.n
        self.d: int = (2 * x + 1) * (x + 1) ** (n - 1)
        self.derived = self.geometric.as_dict()
        self._g = lru_cache(maxsize=1 << 14)(self._g_uncached)

    def _g_uncached(self, j: int) -> int:
        x, n = self.geometric.x, self.n
        if j < 0:
            return int(x ** (-j) * (x + 1) ** (n + j))
        if j < n:
            return int(self.d - x ** (j + 1) * (x + 1) ** (n - 1 - j))
        return self.d

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.geometric.exp_epsilon, 0, COUNT_SENSITIVITY_1)

    def _output(self, count: int, u: int) -> int:
        j = smallest_at_least(self._g, -self.n, self.n, u)
        return min(max(count + j, 0), self.n)

    def _scaled_cdf(self, z: int, count: int) -> int:
        if z < 0:
            return 0
        if z >= self.n:
            return self.d
        return int(self._g(z - count))

    def _pmf(self, count: int) -> Pmf:
        return self._pmf_from_scaled_cdf(count)

    def _accuracy(self, beta: Any) -> Accuracy:
        """Exact integer form of a = ⌈(2/ε̃)·ln(1/β)⌉: the smallest a with
        Pr[|Z| > a] = 2x·x^a/((2x+1)(x+1)^a) ≤ β (clamping only shrinks the error)."""
        a = smallest_error_bound(self.geometric.tail, beta, cap=self.n)
        bound = ErrorBound(a, beta)
        return Accuracy(bound, bound, formula="smallest a with 2x·x^a ≤ β·(2x+1)·(x+1)^a")
