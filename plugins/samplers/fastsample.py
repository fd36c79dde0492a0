"""FastSample_{n,ε,γ}: a truncated geometric core mixed with uniform output (Balcer & Vadhan,
full version Thm 4.10, Alg. 4.11, Lemma 4.12, and the mixing Lemma 3.2;
docs/mechanisms.md#fastsample).

The core is clamp(c + Z_t, 0, n), where Z_t is the two-sided geometric of ratio x/(x+1) with
|Z| > t moved to 0. With d′ = (2x+1)(x+1)^t its scaled CDF F′(c, z) is

    x^{c−z}(x+1)^{t+1−(c−z)} − x^{t+1}        for c − t ≤ z < c     (0 below c − t),
    d′ − x^{z−c+1}(x+1)^{t−(z−c)} + x^{t+1}    for c ≤ z < min(c+t, n),
    d′                                         for z ≥ min(c + t, n).

The mechanism releases the core with probability 1 − γ and Unif([0, n]) otherwise, with
d = (n+1)·d′/γ and F(c, z) = (z+1)·d′ + (1/γ − 1)(n+1)·F′(c, z) for z < n.

**Privacy.** The reference GeometricMechanism_{ε̃} has likelihood ratio exactly (x+1)/x, and
TV(core, reference) ≤ Pr[|Z| > t] = (2x/(2x+1))(x/(x+1))^t. Lemma 3.2 makes the mixture pure
DP with the same ratio (x+1)/x when that TV is at most tanh(ε̃/4)·(γ/(1−γ))/(n+1), where
tanh(ε̃/4) = 1/(2x+1) exactly. So t is the smallest integer with 2x·x^t·(1/γ−1)(n+1) ≤ (x+1)^t,
checked in integers. t is **never capped at n**: the public reference code's cap t ≤ n breaks
privacy (n=3, ε=1/2, γ=1/10 gives a ratio of 5.09; docs/mechanisms.md#fastsample).
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

from dpplug.exact import smallest_at_least, smallest_error_bound
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler
from dpplug.params import Param, Schema, count_bound_param, epsilon_param, unit_fraction
from dpplug.plugins.samplers.geometric_params import GeometricParams
from dpplug.pmf import Pmf


class FastSample(CountingQuerySampler):
    name = "fastsample"
    summary = "Truncated geometric core mixed with uniform output; exact pure DP, small d."
    reference = "Balcer & Vadhan, Differential Privacy on Finite Computers: Alg. 4.11 / Thm 4.10"
    schema = Schema(
        (
            count_bound_param(high=1 << 40),
            epsilon_param(
                "Guarantee for one count of sensitivity 1; achieved: ln((x+1)/x) as for geosample.",
                low=mpq(1, 1 << 10),
            ),
            Param(
                "gamma",
                "rational",
                "Probability of uniform output (rounded down into 1/ℕ); adds at most γ to β.",
                low=mpq(1, 1 << 128),
                high=mpq(1, 2),
                example="1/1000",
            ),
        )
    )
    conformance_cases = (
        {"n": 3, "epsilon": mpq(1, 4), "gamma": mpq(1, 10)},
        {"n": 5, "epsilon": mpq(1, 2), "gamma": mpq(1, 4)},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n: int = self.params["n"]
        self.gamma = unit_fraction(self.params["gamma"])
        self.geometric = GeometricParams.for_epsilon(self.params["epsilon"])
        x, n, g = self.geometric.x, self.n, int(1 / self.gamma)
        t = smallest_error_bound(lambda t: mpq(2 * x * x**t * (g - 1) * (n + 1), (x + 1) ** t), 1)
        self.t = t
        self.core_d: int = int((2 * x + 1) * (x + 1) ** t)
        self.d: int = (n + 1) * self.core_d * g
        self.derived = {**self.geometric.as_dict(), "gamma": self.gamma, "t": t}

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.geometric.exp_epsilon, 0, COUNT_SENSITIVITY_1)

    def _core_cdf(self, c: int, z: int) -> int:
        """F′(c, z): d′·Pr[clamp(c + Z_t, 0, n) ≤ z] for 0 ≤ z < n."""
        x, t = self.geometric.x, self.t
        if z < c:
            if z < c - t:
                return 0
            return int(x ** (c - z) * (x + 1) ** (t + 1 - (c - z)) - x ** (t + 1))
        if z < min(c + t, self.n):
            return int(self.core_d - x ** (z - c + 1) * (x + 1) ** (t - (z - c)) + x ** (t + 1))
        return self.core_d

    def _scaled_cdf(self, z: int, count: int) -> int:
        if z < 0:
            return 0
        if z >= self.n:
            return self.d
        g = int(1 / self.gamma)
        return int((z + 1) * self.core_d + (g - 1) * (self.n + 1) * self._core_cdf(count, z))

    def _output(self, count: int, u: int) -> int:
        return smallest_at_least(lambda z: self._scaled_cdf(z, count), 0, self.n, u)

    def _pmf(self, count: int) -> Pmf:
        return self._pmf_from_scaled_cdf(count)

    def _accuracy(self, beta: Any) -> Accuracy:
        """Smallest a with (1−γ)·Pr[|Z| > a] + γ·(n−a)/(n+1) ≤ β: the core's error is at most
        |Z| and the uniform part misses by more than a on at most n − a of its n + 1 values.
        For β > γ this is at most the paper's ⌈(2/ε̃)·ln(1/(β−γ))⌉."""
        n, gamma = self.n, self.gamma

        def tail(a: int) -> Any:
            return (1 - gamma) * self.geometric.tail(a) + gamma * mpq(max(n - a, 0), n + 1)

        a = smallest_error_bound(tail, beta, cap=n)
        bound = ErrorBound(a, beta)
        return Accuracy(bound, bound, formula="smallest a with (1−γ)·Pr[|Z|>a] + γ(n−a)/(n+1) ≤ β")
