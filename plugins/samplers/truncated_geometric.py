"""k-TSGD: the truncated symmetric geometric distribution (Desfontaines et al., Def. 6–7,
Thm 4; docs/mechanisms.md#truncated-geometric), sampled exactly with a rational e^ε.

e^ε is rounded down to a rational L = a/b (so ε̃ = ln L ≤ ε, within ε/1024). The noise X on
{−k, …, k} has integer weights w_x = a^{k−|x|}·b^{|x|}, the two-sided geometric conditioned on
|X| ≤ k, and k is the smallest integer with Pr[X = k] = (L−1)/((L+1)L^k − 2) ≤ δ. The release
c + X is (ε̃, δ′)-DP for counts differing by one, with δ′ = Pr[X = k] ≤ δ exactly: neighbouring
outputs have likelihood ratio at most L except at the extreme value, whose mass is δ′.

Given a count bound ``n``, the release is clamp(c + X, 0, n), a counting-query sampler on [0, n]
as Balcer–Vadhan's releasers need (clamping is post-processing); without one it is c + X on ℤ.

The inverse CDF uses the closed form of the partial sums S(s) = Σ_{m=s}^{k} a^{k−m} b^m
= b^s (a^{k−s+1} − b^{k−s+1})/(a − b), so no table of 2k+1 big integers is kept.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gmpy2 import mpq

from dpplug.exact import ceil_log2, exp_lower, smallest_at_least, smallest_error_bound
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler
from dpplug.params import Param, Schema, count_bound_param, epsilon_param
from dpplug.pmf import Pmf


def _tsgd_delta(L: Any, k: int) -> Any:
    """Pr[X = k] = (L−1)/((L+1)·L^k − 2) for k-TSGD with e^ε = L."""
    return (L - 1) / ((L + 1) * L**k - 2)


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
            Param(
                "delta",
                "rational",
                "δ of the guarantee; the achieved δ′ = Pr[X = k] ≤ δ.",
                low=mpq(1, 1 << 128),
                high=1,
                high_open=True,
                example="1e-6",
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
        self.exp_epsilon = exp_lower(epsilon, max(8, ceil_log2(1024 / epsilon)))
        L = self.exp_epsilon
        hi = 1
        while _tsgd_delta(L, hi) > delta:
            hi *= 2
        self.k: int = smallest_at_least(lambda k: -_tsgd_delta(L, k), max(1, hi // 2), hi, -delta)
        self.a, self.b = int(L.numerator), int(L.denominator)
        self.d: int = self._tail(0) + self._tail(1)
        self.delta = mpq(self.b**self.k, self.d)
        self.derived = {"exp_epsilon": L, "k": self.k, "achieved_delta": self.delta}
        self._g = lru_cache(maxsize=1 << 14)(self._g_uncached)

    def _tail(self, s: int) -> int:
        """S(s) = Σ_{m=s}^{k} a^{k−m} b^m (0 for s > k)."""
        a, b, k = self.a, self.b, self.k
        if s > k:
            return 0
        return int(b**s * (a ** (k - s + 1) - b ** (k - s + 1)) // (a - b))

    def _g_uncached(self, j: int) -> int:
        """G(j) = Σ_{x=−k}^{j} w_x."""
        if j <= 0:
            return self._tail(-j)
        return self._tail(0) + self._tail(1) - self._tail(j + 1)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.exp_epsilon, self.delta, COUNT_SENSITIVITY_1)

    def _clamp(self, z: int) -> int:
        return z if self.n is None else min(max(z, 0), self.n)

    def _output(self, count: int, u: int) -> int:
        return self._clamp(count + smallest_at_least(self._g, -self.k, self.k, u))

    def _scaled_cdf(self, z: int, count: int) -> int:
        if self.n is not None and (z < 0 or z >= self.n):
            return 0 if z < 0 else self.d
        j = z - count
        if j < -self.k:
            return 0
        return self.d if j >= self.k else int(self._g(j))

    def _pmf(self, count: int) -> Pmf:
        a, b, k = self.a, self.b, self.k
        law: dict[int, Any] = {}
        for x in range(-k, k + 1):
            z = self._clamp(count + x)
            law[z] = law.get(z, mpq(0)) + mpq(a ** (k - abs(x)) * b ** abs(x), self.d)
        return Pmf(law)

    def _accuracy(self, beta: Any) -> Accuracy:
        """Smallest a with Pr[|X| > a] = 2·S(a+1)/d ≤ β (0 for a ≥ k; clamping only helps)."""
        a = smallest_error_bound(lambda a: mpq(2 * self._tail(a + 1), self.d), beta, cap=self.k)
        bound = ErrorBound(a, beta)
        return Accuracy(bound, bound, formula="smallest a with Pr[|X| > a] ≤ β for k-TSGD X")
