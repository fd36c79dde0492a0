"""FastSample_{n,ε,γ}: a truncated geometric core mixed with uniform output (Balcer & Vadhan,
full version Thm 4.10, Alg. 4.11, Lemma 4.12, and the mixing Lemma 3.2;
docs/mechanisms.md#fastsample).

The core is clamp(c + Z_t, 0, n), where Z_t is the two-sided geometric of ratio α = b/a
(e^ε̃ = a/b, :mod:`.geometric_params`; the paper's a = x + 1, b = x) with |Z| > t moved to 0.
With d′ = (a+b)·a^t its scaled CDF F′(c, z) is

    b^{c−z}·a^{t+1−(c−z)} − b^{t+1}            for c − t ≤ z < c     (0 below c − t),
    d′ − b^{z−c+1}·a^{t−(z−c)} + b^{t+1}        for c ≤ z < min(c+t, n),
    d′                                         for z ≥ min(c + t, n),

since d′·Pr[Z ≤ −m] = d′·Pr[Z ≥ m] = b^m·a^{t+1−m} for m ≥ 1. The mechanism releases the core
with probability 1 − γ and Unif([0, n]) otherwise, with d = (n+1)·d′/γ and
F(c, z) = (z+1)·d′ + (1/γ − 1)(n+1)·F′(c, z) for z < n.

**Privacy.** The reference GeometricMechanism_{ε̃} has likelihood ratio exactly a/b, and
TV(core, reference) ≤ Pr[|Z| > t] = 2b^{t+1}/((a+b)·a^t). Lemma 3.2 makes the mixture pure DP with
the same ratio a/b when that TV is at most ((a/b − 1)/(a/b + 1))·(γ/(1−γ))/(n+1), and
(a/b − 1)/(a/b + 1) = (a − b)/(a + b) exactly. So t is the smallest integer with
2·b^{t+1}·(1/γ − 1)(n+1) ≤ (a − b)·a^t (for a = x + 1, b = x: the paper's 2x·x^t(1/γ−1)(n+1) ≤
(x+1)^t), decided exactly. t is **never capped at n**: the public reference code's cap t ≤ n breaks
privacy (n=3, ε=1/2, γ=1/10 gives a ratio of 5.09; docs/mechanisms.md#fastsample).

**Cost.** For z < n, F(c, z) − (z+1)·d′ depends on c − z only, so its 2t + 2 values are computed
once (when they fit in :data:`TABLE_BITS`) and written as F(c, c + w) = (c + K_w)·d′ + B_w with
0 ≤ B_w < d′; K_w rises strictly with w. M(c, u) is then one division u − 1 = q·d′ + r and one
bisection of q − c among the K_w, with r compared with B_w on a tie (:meth:`FastSample._output`),
exactly. Without the table, F(c, z) is (z+1)·d′ below c − t and (z+1+(1/γ−1)(n+1))·d′ from
min(c+t, n) on, so M(c, u) is found by one division there and by a binary search over at most
2t values in between, each comparison decided from enclosures (:mod:`dpplug.enclosure`). A
sample costs the ⌈log₂ d⌉ ≈ t·log₂ a + log₂((n+1)/γ) random bits of u and O(log t) short
operations.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import cached_property, lru_cache
from typing import Any

from gmpy2 import mpq, mpz

from dpplug.enclosure import Enclosure, Lift
from dpplug.exact import ceil_div, smallest_error_bound, smallest_reaching
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler
from dpplug.param_types import RATIONAL
from dpplug.params import Param, Schema, count_bound_param, epsilon_param, unit_fraction
from dpplug.plugins.samplers.geometric_params import GeometricParams
from dpplug.plugins.samplers.noise_moments import ClampedNoise

#: :meth:`FastSample._scaled_cdf` reads the 2t + 2 possible values of (1/γ − 1)(n+1)·F′ from a table
#: built once when it holds at most this many bits (8 MiB), and evaluates F′'s formula otherwise.
TABLE_BITS = 1 << 26


class FastSample(CountingQuerySampler):
    name = "fastsample"
    summary = "Truncated geometric core mixed with uniform output; exact pure DP, small d."
    reference = "Balcer & Vadhan, Differential Privacy on Finite Computers: Alg. 4.11 / Thm 4.10"
    schema = Schema(
        (
            count_bound_param(high=1 << 40),
            epsilon_param(
                "Guarantee for one count of sensitivity 1; achieved: ln(a/b) ∈ [(63/64)ε, ε] "
                "as for geosample.",
                low=mpq(1, 1 << 10),
            ),
            Param(
                "gamma",
                RATIONAL,
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
        a, b, n, g = self.geometric.a, self.geometric.b, self.n, int(1 / self.gamma)

        def excess(t: int) -> Any:  # the mixing condition holds iff this is ≤ 1
            return lambda lift: (
                2 * lift(b) ** (t + 1) * ((g - 1) * (n + 1)) / ((a - b) * lift(a) ** t)
            )

        self.t = t = smallest_error_bound(excess, 1)
        self._mix = (g - 1) * (n + 1)  # F = (z+1)·d′ + _mix·F′
        self._core_d = (a + b) * mpz(a) ** t
        self.core_d: int = int(self._core_d)
        self.d: int = (n + 1) * self.core_d * g
        self.derived = {**self.geometric.as_dict(), "gamma": self.gamma, "t": t}
        self._cdf_enclosure = lru_cache(maxsize=1 << 14)(lambda c, z: self._cdf(c, z)(Enclosure.of))

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.geometric.exp_epsilon, 0, COUNT_SENSITIVITY_1)

    def _cdf(self, c: int, z: int) -> Any:
        """A formula of F(c, z) for 0 ≤ z < n (see the module docstring)."""
        a, b, t, core_d, mix = self.geometric.a, self.geometric.b, self.t, self._core_d, self._mix

        def formula(lift: Lift) -> Any:
            if z < c - t:
                core = lift(0)
            elif z < c:
                core = lift(b) ** (c - z) * lift(a) ** (t + 1 - (c - z)) - lift(b) ** (t + 1)
            elif z < min(c + t, self.n):
                core = lift(core_d) - lift(b) ** (z - c + 1) * lift(a) ** (t - (z - c))
                core = core + lift(b) ** (t + 1)
            else:
                core = lift(core_d)
            return (z + 1) * lift(core_d) + mix * core

        return formula

    @cached_property
    def _mixed_cores(self) -> list[int] | None:
        """(1/γ − 1)(n+1)·F′(c, z) for c − z = −t … t + 1, from :meth:`_cdf` once, when the table
        holds at most :data:`TABLE_BITS` bits (else None): for z < n it depends on z only through
        c − z, and is 0 above t and (1/γ − 1)(n+1)·d′ from −t down (module docstring)."""
        t, core_d = self.t, self.core_d
        if (2 * t + 2) * self.d.bit_length() > TABLE_BITS:
            return None
        return [
            int(self._cdf(max(k, 0), max(-k, 0))(mpz)) - (max(-k, 0) + 1) * core_d
            for k in range(-t, t + 2)
        ]

    def _scaled_cdf(self, z: int, count: int) -> int:
        if z < 0:
            return 0
        if z >= self.n:
            return self.d
        table, t = self._mixed_cores, self.t
        if table is None:
            return int(self._cdf(count, z)(mpz))
        return (z + 1) * self.core_d + table[min(max(count - z, -t), t + 1) + t]

    @cached_property
    def _steps(self) -> tuple[list[int], list[int]] | None:
        """(K_w, B_w) for the offsets w = z − c = −t − 1 … t, where F(c, z) = (c + K_w)·d′ + B_w
        for z < n with 0 ≤ B_w < d′ (from :attr:`_mixed_cores`; None when it is not built).
        K_w is strictly increasing, since F rises by at least d′ per step."""
        table = self._mixed_cores
        if table is None:
            return None
        keys, rests = [], []
        for w, core in zip(range(-self.t - 1, self.t + 1), reversed(table), strict=True):
            whole, rest = divmod(core, self.core_d)
            keys.append(w + 1 + whole)
            rests.append(rest)
        return keys, rests

    def _output(self, count: int, u: int) -> int:
        """The smallest z with F(count, z) ≥ u. With u − 1 = q·d′ + r (0 ≤ r < d′) and the
        steps of :attr:`_steps`, F(c, c + w) ≥ u exactly when K_w > q − c, or K_w = q − c and
        r < B_w; the condition is monotone in w (also where the formula runs past [0, n), below
        c − t − 1 with K_w = w + 1 and above t with K_w = w + 1 + mix, both with B_w = 0), so
        one bisection finds w, and the output is c + w clamped to [0, n] (F(c, n) = d)."""
        steps = self._steps
        if steps is None:
            return self._output_by_search(count, u)
        keys, rests = steps
        q, r = divmod(u - 1, self.core_d)
        s = q - count
        j = bisect_left(keys, s)
        if j == len(keys):
            w = s - self._mix
        elif j == 0 and s < keys[0]:
            w = s
        else:
            w = j - self.t - 1 + (keys[j] == s and r >= rests[j])
        return int(min(max(count + w, 0), self.n))

    def _output_by_search(self, count: int, u: int) -> int:
        """:meth:`_output` by a binary search over F, for samplers too large for the table."""
        n, t, core_d = self.n, self.t, self.core_d
        # (z+1)·d′ ≤ F(c, z) ≤ (z+1+mix)·d′, with equality below c − t and from min(c+t, n) on.
        below = ceil_div(u, core_d) - 1
        if below < count - t:
            return below
        above = below - self._mix
        if above >= min(count + t, n):
            return int(min(above, n))
        low, high = max(0, above, count - t), min(below, count + t, n)
        return smallest_reaching(
            lambda z: self._scaled_cdf(z, count),
            lambda z: self._cdf_enclosure(count, z) if z < n else Enclosure.of(self.d),
            low,
            high,
            u,
        )

    def _noise_variance(self, count: int) -> float:
        """(1 − γ)·(truncated, clamped geometric) + γ·Unif([0, n]), in closed form."""
        a, b, t, gamma = self.geometric.a, self.geometric.b, self.t, self.gamma
        noise = ClampedNoise(count, self.n)
        tails = self.geometric.tail(t)(mpq)
        noise.symmetric(mpq(b, a), (1 - gamma) * mpq(a - b, a + b), t, (1 - gamma) * tails)
        noise.uniform(-count, self.n - count, gamma)
        return noise.variance

    def _accuracy(self, beta: Any) -> Accuracy:
        """Smallest m with (1−γ)·Pr[|Z| > m] + γ·(n−m)/(n+1) ≤ β: the core's error is at most
        |Z| and the uniform part misses by more than m on at most n − m of its n + 1 values.
        For β > γ this is at most the paper's ⌈(2/ε̃)·ln(1/(β−γ))⌉."""
        n, gamma = self.n, self.gamma

        def tail(m: int) -> Any:
            geometric = self.geometric.tail(m)
            return lambda lift: (1 - gamma) * geometric(lift) + gamma * mpq(max(n - m, 0), n + 1)

        m = smallest_error_bound(tail, beta, cap=n)
        bound = ErrorBound(m, beta)
        return Accuracy(bound, bound, formula="smallest m with (1−γ)·Pr[|Z|>m] + γ(n−m)/(n+1) ≤ β")
