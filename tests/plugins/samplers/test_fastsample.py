"""FastSample (Balcer–Vadhan Alg. 4.11 + Lemma 3.2 with the ratio a/b; docs/mechanisms.md)
against an independent closed form, and the capped-t pitfall of the public reference code."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from gmpy2 import mpq, mpz

import dpplug
from dpplug.conformance.divergence import max_likelihood_ratio
from dpplug.conformance.probes.sampler.probe import sampler_privacy
from dpplug.plugins.samplers.geometric_params import GeometricParams

from support.geometric import expected_ratio, spends_its_budget, tail, two_sided

FASTSAMPLE = dpplug.registry().get("fastsample").cls
CASES = [
    {"n": 1, "epsilon": 1, "gamma": Fraction(1, 2)},
    {"n": 2, "epsilon": Fraction(1, 2), "gamma": Fraction(1, 3)},
    {"n": 6, "epsilon": Fraction(1, 4), "gamma": Fraction(1, 7)},
    {"n": 20, "epsilon": Fraction(1, 2), "gamma": Fraction(1, 2)},  # t = 11 < n: truncation bites
    {"n": 4, "epsilon": Fraction(3, 10), "gamma": Fraction(3, 100)},  # γ rounded down to 1/34
    *FASTSAMPLE.conformance_cases,
]
BETAS = [Fraction(1, 2), Fraction(1, 5), Fraction(1, 20)]


def frac(value: Any) -> Fraction:
    """An exact mpq as a Fraction."""
    return Fraction(value)


def unit_gamma(gamma: Any) -> Fraction:
    """γ rounded down into 1/ℕ."""
    return Fraction(1, math.ceil(1 / Fraction(gamma)))


def fastsample_law(n: int, a: int, b: int, gamma: Fraction, t: int, c: int) -> dict[int, Fraction]:
    """(1−γ)·clamp(c + Z_t, 0, n) + γ·Unif[0, n], Z_t = Z with |Z| > t moved to 0."""
    noise = {j: two_sided(a, b, j) for j in range(-t, t + 1)}
    noise[0] += tail(a, b, t)  # Pr[|Z| > t]
    law = {z: gamma / (n + 1) for z in range(n + 1)}
    for j, p in noise.items():
        law[min(max(c + j, 0), n)] += (1 - gamma) * p
    return law


def a5_condition(n: int, a: int, b: int, gamma: Fraction, t: int) -> bool:
    """The mixing lemma (docs/mechanisms.md#fastsample) with e^ε = a/b and Unif([0, n]):
    TV ≤ ((e^ε−1)/(e^ε+1))·γ/(1−γ)/(n+1), TV bounded by Pr[|Z| > t]."""
    e = Fraction(a, b)
    return tail(a, b, t) <= (e - 1) / (e + 1) * gamma / (1 - gamma) / (n + 1)


def create(case: dict[str, Any]) -> Any:
    return dpplug.create("fastsample", **case)


@pytest.mark.parametrize("case", CASES)
def test_parameters_guarantee_and_uncapped_t(case: dict[str, Any]) -> None:
    sampler = create(case)
    n, gamma, t = case["n"], unit_gamma(case["gamma"]), sampler.t
    a, b = expected_ratio(case["epsilon"])
    assert (sampler.derived["a"], sampler.derived["b"]) == (a, b)
    assert sampler.derived["t"] == t
    assert frac(sampler.derived["gamma"]) == gamma
    assert frac(sampler.guarantee.exp_epsilon) == Fraction(a, b)
    assert sampler.guarantee.delta == 0
    assert spends_its_budget(a, b, case["epsilon"])
    # t is the smallest truncation satisfying the mixing condition, never capped at n.
    assert a5_condition(n, a, b, gamma, t)
    assert t == 0 or not a5_condition(n, a, b, gamma, t - 1)
    assert sampler.d == (n + 1) * (a + b) * a**t / gamma


def test_t_exceeds_n_when_the_condition_needs_it() -> None:
    sampler = create({"n": 3, "epsilon": Fraction(1, 4), "gamma": Fraction(1, 10)})
    assert sampler.t > sampler.n


@pytest.mark.parametrize("case", CASES)
def test_pmf_is_the_mixture_of_the_truncated_core_and_uniform(case: dict[str, Any]) -> None:
    sampler = create(case)
    n, gamma = case["n"], unit_gamma(case["gamma"])
    a, b = sampler.derived["a"], sampler.derived["b"]
    for c in range(n + 1):
        expected = fastsample_law(n, a, b, gamma, sampler.derived["t"], c)
        assert sum(expected.values()) == 1
        pmf = sampler.pmf(c)
        assert pmf.tail_ratio is None and pmf.total() == 1
        assert {z: frac(p) for z, p in pmf.items()} == expected


@pytest.mark.parametrize("case", CASES)
def test_exact_privacy(case: dict[str, Any]) -> None:
    report = sampler_privacy(create(case))
    assert report.passed, report.failures
    assert report.totals_exact and report.pairs == case["n"]


class CappedFastSample(FASTSAMPLE):
    """The public reference code's variant: the paper's ratio (x+1)/x, x = 4 for ε = 1/4, and
    t = min(t₀, n) (docs/mechanisms.md#fastsample)."""

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.geometric = GeometricParams(5, 4)
        g = int(1 / self.gamma)
        self.t = min(self.t, self.n)
        self._mix = (g - 1) * (self.n + 1)
        self._core_d = 9 * mpz(5) ** self.t
        self.core_d = int(self._core_d)
        self.d = (self.n + 1) * self.core_d * g
        self.derived = {**self.derived, "a": 5, "b": 4, "t": self.t}


def test_capping_t_at_n_breaks_privacy_but_the_plugin_does_not() -> None:
    params = {"n": 3, "epsilon": Fraction(1, 4), "gamma": Fraction(1, 10)}
    capped, real = CappedFastSample(**params), create(params)
    bound = capped.guarantee.exp_epsilon
    assert bound == mpq(5, 4) and real.guarantee.exp_epsilon == mpq(32, 25)
    # The capped variant is still a correct sampler of its own (wrong) law ...
    for c in range(4):
        assert capped.pmf(c).total() == 1
        assert {z: frac(p) for z, p in capped.pmf(c).items()} == fastsample_law(
            3, 5, 4, Fraction(1, 10), 3, c
        )
    # ... but that law is far from private: the tails moved to c separate neighbouring counts.
    ratio = max(max_likelihood_ratio(capped.pmf(c), capped.pmf(c + 1)) for c in range(3))
    assert ratio > bound, f"capped FastSample: max ratio {ratio} ≈ {float(ratio):.4f}"
    assert ratio == mpq(891, 175)  # ≈ 5.09 (docs/mechanisms.md#fastsample)
    report = sampler_privacy(capped)
    assert not report.passed and report.worst_ratio == ratio
    assert sampler_privacy(real).passed


@pytest.mark.parametrize(
    "case",
    [
        {"n": 1, "epsilon": 1, "gamma": Fraction(1, 2)},
        {"n": 2, "epsilon": 1, "gamma": Fraction(1, 2)},
    ],
)
def test_enumerating_every_u_reproduces_the_pmf(case: dict[str, Any]) -> None:
    sampler = create(case)
    assert sampler.d <= 100_000
    for c in range(case["n"] + 1):
        outputs = [sampler(c, u) for u in range(1, sampler.d + 1)]
        assert outputs == sorted(outputs)  # M(c, u) is non-decreasing in u
        counts = {z: outputs.count(z) for z in set(outputs)}
        assert {z: Fraction(k, sampler.d) for z, k in counts.items()} == {
            z: frac(p) for z, p in sampler.pmf(c).items() if p > 0
        }


@pytest.mark.parametrize("case", CASES)
def test_scaled_cdf_and_inverse_cdf_boundaries(case: dict[str, Any]) -> None:
    """F is non-decreasing, 0 below 0 and d from n on, and M(c, ·) switches exactly at F(c, z)."""
    sampler = create(case)
    n, d = case["n"], sampler.d
    for c in range(n + 1):
        cdf = [sampler.scaled_cdf(z, c) for z in range(-2, n + 2)]
        assert cdf == sorted(cdf) and cdf[:2] == [0, 0] and cdf[-2:] == [d, d]
        pmf = sampler.pmf(c)
        for z in range(n + 1):
            low, high = sampler.scaled_cdf(z - 1, c), sampler.scaled_cdf(z, c)
            assert Fraction(high - low, d) == frac(pmf[z])
            assert high > low  # the uniform part gives every output positive mass
            assert sampler(c, low + 1) == z and sampler(c, high) == z


@pytest.mark.parametrize(
    "case",
    [
        {"n": 1000, "epsilon": Fraction(1, 3), "gamma": Fraction(1, 2**70)},  # t = 174
        {"n": 2**20, "epsilon": 2, "gamma": Fraction(1, 2**100)},
    ],
)
def test_inverse_cdf_switches_exactly_at_the_steps_of_large_samplers(case: dict[str, Any]) -> None:
    """M(c, u) found from the table of steps (one bisection) is z exactly on (F(c, z − 1),
    F(c, z)], at counts near 0, n and the middle, and at outputs across the core and its ends."""
    sampler = create(case)
    n, t = case["n"], sampler.t
    for c in (0, 1, t, n // 2, n - t, n - 1, n):
        outputs = {0, 1, n - 1, n} | set(range(max(0, c - t - 2), min(n, c + t + 2) + 1))
        for z in sorted(outputs):
            low, high = sampler.scaled_cdf(z - 1, c), sampler.scaled_cdf(z, c)
            for u in (low + 1, (low + high + 1) // 2, high):
                assert sampler(c, u) == z


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("beta", BETAS)
def test_accuracy_bound_holds_and_matches_its_formula(case: dict[str, Any], beta: Fraction) -> None:
    """(a, β): every count's exact tail Pr[|M(c,U) − c| > a] ≤ β; a is the smallest a with
    (1−γ)·Pr[|Z| > a] + γ(n−a)/(n+1) ≤ β (core error ≤ |Z|, uniform misses on ≤ n−a values)."""
    sampler = create(case)
    n, gamma = case["n"], unit_gamma(case["gamma"])
    ra, rb = sampler.derived["a"], sampler.derived["b"]
    a = sampler.accuracy(beta).per_query.a
    assert 0 <= a <= n
    for c in range(n + 1):
        pmf = sampler.pmf(c)
        assert sum(frac(p) for z, p in pmf.items() if abs(z - c) > a) <= beta

    def bound(a: int) -> Fraction:
        return (1 - gamma) * tail(ra, rb, a) + gamma * Fraction(n - a, n + 1)

    assert a == n or bound(a) <= beta
    assert a == 0 or bound(a - 1) > beta


def test_accuracy_at_a_large_n_is_the_smallest_sound_a() -> None:
    """At n = 2^31 and β < γ the bound sits where the uniform part's misses, γ(n − a)/(n + 1),
    meet β, far in the geometric tail (α^a underflows every float): it is found from enclosures
    of α^a, never from a^m and b^m (which overflow them), and is the smallest sound a."""
    n, gamma, beta = 1 << 31, Fraction(1, 10), Fraction(1, 20)
    sampler = create({"n": n, "epsilon": Fraction(1, 4), "gamma": gamma})
    a = sampler.accuracy(beta).per_query.a
    # γ(n − a)/(n + 1) ≤ β < γ(n − a + 1)/(n + 1) up to the geometric part, below 2^-1000 there.
    assert gamma * Fraction(n - a, n + 1) <= beta < gamma * Fraction(n - a + 2, n + 1)
