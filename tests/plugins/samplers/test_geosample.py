"""GeoSample (Balcer & Vadhan, full version Alg. 4.8; docs/mechanisms.md#geosample) against an
independent closed form."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import gmpy2
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.conformance.probes.sampler.probe import sampler_privacy

from support.geometric import expected_ratio, spends_its_budget, tail, two_sided

CASES = [
    {"n": 1, "epsilon": Fraction(1, 2)},
    {"n": 4, "epsilon": Fraction(1, 2)},
    {"n": 6, "epsilon": Fraction(1, 5)},
    {"n": 7, "epsilon": Fraction(3, 10)},
    {"n": 9, "epsilon": Fraction(1, 16)},
    {"n": 5, "epsilon": 2},
    *dpplug.registry().get("geosample").cls.conformance_cases,
]
BETAS = [Fraction(1, 2), Fraction(1, 10), Fraction(1, 20), Fraction(1, 1000)]


def frac(value: Any) -> Fraction:
    """An exact mpq as a Fraction."""
    return Fraction(value)


def clamped_geometric(n: int, a: int, b: int, c: int) -> dict[int, Fraction]:
    """clamp(c + Z, 0, n) for Z two-sided geometric of ratio α = b/a (docs/mechanisms.md)."""
    alpha = Fraction(b, a)
    law = {z: two_sided(a, b, z - c) for z in range(1, n)}
    law[0] = alpha**c / (1 + alpha)  # Pr[Z ≤ −c]
    law[n] = alpha ** (n - c) / (1 + alpha)  # Pr[Z ≥ n − c]
    return law


def create(case: dict[str, Any]) -> Any:
    return dpplug.create("geosample", **case)


def test_guarantee_for_epsilon_one_half_is_eighteen_elevenths() -> None:
    """The simplest rational in [e^{(63/64)/2}, e^{1/2}] is 18/11 (not BV's 3/2 = e^0.405)."""
    sampler = create({"n": 12, "epsilon": Fraction(1, 2)})
    assert sampler.guarantee.exp_epsilon == mpq(18, 11)
    assert sampler.guarantee.delta == 0
    assert sampler.guarantee.neighbouring == dpplug.COUNT_SENSITIVITY_1
    with gmpy2.context(precision=512, round=gmpy2.RoundDown):
        assert sampler.guarantee.exp_epsilon <= mpq(gmpy2.exp(gmpy2.mpfr(1) / 2))


@pytest.mark.parametrize("case", CASES)
def test_guarantee_is_the_simplest_ratio_spending_the_budget(case: dict[str, Any]) -> None:
    sampler = create(case)
    a, b = expected_ratio(case["epsilon"])
    assert (sampler.derived["a"], sampler.derived["b"]) == (a, b)
    assert frac(sampler.guarantee.exp_epsilon) == Fraction(a, b)
    assert spends_its_budget(a, b, case["epsilon"])
    assert sampler.d == (a + b) * a ** (case["n"] - 1)


@pytest.mark.parametrize("case", CASES)
def test_pmf_is_the_clamped_geometric(case: dict[str, Any]) -> None:
    sampler = create(case)
    n, a, b = case["n"], sampler.derived["a"], sampler.derived["b"]
    for c in range(n + 1):
        expected = clamped_geometric(n, a, b, c)
        assert sum(expected.values()) == 1
        pmf = sampler.pmf(c)
        assert pmf.tail_ratio is None and pmf.total() == 1
        assert {z: frac(p) for z, p in pmf.items()} == expected


@pytest.mark.parametrize("case", CASES)
def test_exact_privacy_and_tight_ratio(case: dict[str, Any]) -> None:
    sampler = create(case)
    report = sampler_privacy(sampler)
    assert report.passed, report.failures
    assert report.totals_exact and report.pairs == case["n"]
    # The clamped geometric attains a/b exactly (at an interior or end output).
    assert report.worst_ratio == sampler.guarantee.exp_epsilon


@pytest.mark.parametrize(
    "case",
    [
        {"n": 1, "epsilon": 1},  # a/b = 19/7, d = 26
        {"n": 3, "epsilon": Fraction(1, 2)},  # a/b = 18/11, d = 29·18²
        {"n": 2, "epsilon": Fraction(1, 4)},  # a/b = 32/25, d = 57·32
    ],
)
def test_enumerating_every_u_reproduces_the_pmf(case: dict[str, Any]) -> None:
    sampler = create(case)
    assert sampler.d <= 10_000
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
            if high > low:
                assert sampler(c, low + 1) == z and sampler(c, high) == z
            if high < d:
                assert sampler(c, high + 1) > z


@pytest.mark.parametrize("case", CASES)
def test_the_closed_form_cdf_is_the_clamped_geometrics(case: dict[str, Any]) -> None:
    """probability_at_most(z, c), which the releasers' error bounds read instead of F when d is
    long, is Σ_{v ≤ z} of the clamped geometric's law (written from its definition) and F/d."""
    sampler = create(case)
    n, a, b = case["n"], sampler.geometric.a, sampler.geometric.b
    for c in range(n + 1):
        law = clamped_geometric(n, a, b, c)
        for z in range(-2, n + 2):
            expected = sum((p for v, p in law.items() if v <= z), Fraction(0))
            assert frac(sampler.probability_at_most(z, c)) == expected
            assert expected == Fraction(sampler.scaled_cdf(z, c), sampler.d)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("beta", BETAS)
def test_accuracy_is_the_smallest_a(case: dict[str, Any], beta: Fraction) -> None:
    sampler = create(case)
    n, ra, rb = case["n"], sampler.derived["a"], sampler.derived["b"]
    a = sampler.accuracy(beta).per_query.a
    assert 0 <= a <= n
    for c in range(n + 1):
        pmf = sampler.pmf(c)
        assert sum(frac(p) for z, p in pmf.items() if abs(z - c) > a) <= beta
    if a > 0:  # one less would fail for the unclamped noise (the bound for large n)
        assert tail(ra, rb, a - 1) > beta
    if a < n:
        assert tail(ra, rb, a) <= beta
