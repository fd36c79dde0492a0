"""fixedpoint-geometric: a clamped geometric on a 63-bit table (Balcer–Vadhan §3 route,
docs/mechanisms.md). Its table has no closed form, so the tests check the structural
facts its privacy proof rests on, exactly."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import gmpy2
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.conformance.probes.sampler.probe import sampler_privacy

TABLE = 1 << 63
CASES = [
    {"n": 1, "epsilon": Fraction(1, 2)},
    {"n": 3, "epsilon": 32},
    {"n": 10, "epsilon": Fraction(1, 100)},
    {"n": 30, "epsilon": 4},
    {"n": 120, "epsilon": Fraction(1, 10)},
    {"n": 25, "epsilon": 0.7},
    *dpplug.registry().get("fixedpoint-geometric").cls.conformance_cases,
]
BETAS = [Fraction(1, 2), Fraction(1, 10), Fraction(1, 1000), Fraction(1, 10**12)]


def create(case: dict[str, Any]) -> Any:
    return dpplug.create("fixedpoint-geometric", **case)


def noise_weights(sampler: Any) -> dict[int, int]:
    """W(j) for j in [−n, n], read off the public scaled CDF: F(c, z) = C(z − c) for 0 ≤ z < n."""
    n = sampler.n

    def cumulative(j: int) -> int:  # C(j) = Σ_{i ≤ j} W(i), for −n ≤ j ≤ n − 1
        c = n if j < 0 else 0
        return int(sampler.scaled_cdf(j + c, c))

    weights = {-n: cumulative(-n), n: TABLE - cumulative(n - 1)}
    for j in range(-n + 1, n):
        weights[j] = cumulative(j) - cumulative(j - 1)
    return weights


@pytest.mark.parametrize("case", CASES)
def test_guarantee_is_a_rigorous_close_lower_bound_of_e_to_epsilon(case: dict[str, Any]) -> None:
    sampler = create(case)
    exp_epsilon = sampler.guarantee.exp_epsilon
    assert sampler.guarantee.delta == 0 and sampler.d == TABLE
    with gmpy2.context(precision=512, round=gmpy2.RoundDown):
        lower = mpq(gmpy2.exp(gmpy2.mpfr(mpq(case["epsilon"]))))  # ≤ e^ε, rigorously
    assert exp_epsilon <= lower
    assert exp_epsilon >= lower * (1 - mpq(1, 10**9))


@pytest.mark.parametrize("case", CASES)
def test_table_noise_is_symmetric_and_decreasing(case: dict[str, Any]) -> None:
    sampler = create(case)
    n = case["n"]
    weights = noise_weights(sampler)
    assert sum(weights.values()) == TABLE
    assert all(w > 0 for w in weights.values())
    assert all(weights[j] == weights[-j] for j in range(n + 1))
    assert all(weights[j] >= weights[j + 1] for j in range(n - 1))  # w_n is the fold


@pytest.mark.parametrize("case", CASES)
def test_pmf_is_the_clamped_table_noise(case: dict[str, Any]) -> None:
    """Total 1, the mirror symmetry P_c(z) = P_{n−c}(n−z), and P_c = clamp(c + Z̃, 0, n)."""
    sampler = create(case)
    n = case["n"]
    weights = noise_weights(sampler)
    pmfs = [sampler.pmf(c) for c in range(n + 1)]
    for c, pmf in enumerate(pmfs):
        assert pmf.tail_ratio is None and pmf.total() == 1
        assert all(pmf[z] == pmfs[n - c][n - z] for z in range(n + 1))
        expected = dict.fromkeys(range(n + 1), 0)
        for j, w in weights.items():
            expected[min(max(c + j, 0), n)] += w
        assert {z: Fraction(p) for z, p in pmf.items()} == {
            z: Fraction(w, TABLE) for z, w in expected.items()
        }


@pytest.mark.parametrize("case", CASES)
def test_exact_privacy(case: dict[str, Any]) -> None:
    report = sampler_privacy(create(case))
    assert report.passed, report.failures
    assert report.totals_exact and report.pairs == case["n"]


@pytest.mark.parametrize("case", CASES)
def test_scaled_cdf_and_inverse_cdf_boundaries(case: dict[str, Any]) -> None:
    """F is non-decreasing, 0 below 0 and d from n on; M(c, ·) switches exactly at F(c, z) and is
    non-decreasing in u on random u (d = 2^63 is too large to enumerate)."""
    sampler = create(case)
    n, d = case["n"], sampler.d
    rng = random.Random(5)
    for c in sorted({0, 1 % (n + 1), n // 2, n}):
        cdf = [sampler.scaled_cdf(z, c) for z in range(-2, n + 2)]
        assert cdf == sorted(cdf) and cdf[:2] == [0, 0] and cdf[-2:] == [d, d]
        for z in range(n + 1):
            low, high = sampler.scaled_cdf(z - 1, c), sampler.scaled_cdf(z, c)
            assert high > low
            assert sampler(c, low + 1) == z and sampler(c, high) == z
        us = sorted([1, d, *(rng.randint(1, d) for _ in range(300))])
        outputs = [sampler(c, u) for u in us]
        assert outputs == sorted(outputs)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("beta", BETAS)
def test_accuracy_is_the_smallest_a(case: dict[str, Any], beta: Fraction) -> None:
    sampler = create(case)
    n = case["n"]
    a = sampler.accuracy(beta).per_query.a
    assert 0 <= a <= n
    for c in range(n + 1):
        pmf = sampler.pmf(c)
        assert sum(Fraction(p) for z, p in pmf.items() if abs(z - c) > a) <= beta
    weights = noise_weights(sampler)
    if a > 0:  # one less would fail for the unclamped table noise
        assert Fraction(sum(w for j, w in weights.items() if abs(j) > a - 1), TABLE) > beta
