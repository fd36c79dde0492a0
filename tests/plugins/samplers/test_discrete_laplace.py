"""discrete-laplace: c + Z with Pr[Z = z] = ((1−α)/(1+α))α^{|z|}
(docs/mechanisms.md#discrete-laplace) against an independent closed form, tails included."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import gmpy2
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.conformance.probes.sampler.probe import sampler_privacy

CASES = [
    {"epsilon": Fraction(1, 10)},
    {"epsilon": 1},
    {"epsilon": 0.25},
    {"epsilon": 16},
    *dpplug.registry().get("discrete-laplace").cls.conformance_cases,
]
BETAS = [Fraction(1, 2), Fraction(1, 10), Fraction(1, 1000), Fraction(1, 10**9)]


def create(case: dict[str, Any]) -> Any:
    return dpplug.create("discrete-laplace", **case)


def laplace(alpha: Fraction, c: int, z: int) -> Fraction:
    return (1 - alpha) / (1 + alpha) * alpha ** abs(z - c)


@pytest.mark.parametrize("case", CASES)
def test_alpha_rounds_e_to_minus_epsilon_up(case: dict[str, Any]) -> None:
    """α ≥ e^{−ε} rigorously (so the ratio 1/α ≤ e^ε), within 2^−32, and the guarantee is 1/α."""
    sampler = create(case)
    alpha = sampler.derived["alpha"]
    with gmpy2.context(precision=512, round=gmpy2.RoundUp):
        upper = mpq(gmpy2.exp(gmpy2.mpfr(-mpq(case["epsilon"]))))  # ≥ e^{−ε}
    assert upper <= alpha <= upper + mpq(1, 1 << 32)
    assert sampler.guarantee.exp_epsilon == 1 / alpha and sampler.guarantee.delta == 0
    assert sampler.n is None and sampler.d is None


@pytest.mark.parametrize("case", CASES)
def test_pmf_is_the_two_sided_geometric_tails_included(case: dict[str, Any]) -> None:
    sampler = create(case)
    alpha = Fraction(sampler.derived["alpha"])
    for c in (-5, 0, 3, 1 << 40):
        pmf = sampler.pmf(c)
        assert pmf.total() == 1 and Fraction(pmf.tail_ratio) == alpha
        for z in range(c - 120, c + 121):  # far beyond the stored window on both sides
            assert Fraction(pmf.prob(z)) == laplace(alpha, c, z)
        window = sum(laplace(alpha, c, z) for z in range(pmf.low, pmf.high + 1))
        assert Fraction(pmf.outside_mass) == 1 - window


@pytest.mark.parametrize("case", CASES)
def test_exact_privacy_ratio_is_exactly_one_over_alpha(case: dict[str, Any]) -> None:
    sampler = create(case)
    report = sampler_privacy(sampler)
    assert report.passed, report.failures
    assert report.counts == (-3, 3) and report.pairs == 6 and report.totals_exact
    assert report.worst_ratio == 1 / sampler.derived["alpha"] == sampler.guarantee.exp_epsilon


def test_no_inverse_cdf() -> None:
    sampler = create({"epsilon": 1})
    with pytest.raises(dpplug.NotSupported):
        sampler(0, 1)
    with pytest.raises(dpplug.NotSupported):
        sampler.scaled_cdf(0, 0)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("beta", BETAS)
def test_accuracy_is_the_smallest_a(case: dict[str, Any], beta: Fraction) -> None:
    sampler = create(case)
    alpha = Fraction(sampler.derived["alpha"])
    a = sampler.accuracy(beta).per_query.a

    def tail(a: int) -> Fraction:  # Pr[|Z| > a] from the pmf: 1 − Σ_{|z−c| ≤ a} P(z)
        pmf = sampler.pmf(7)
        return 1 - sum(Fraction(pmf.prob(z)) for z in range(7 - a, 7 + a + 1))

    assert tail(a) <= beta
    assert tail(a) == 2 * alpha ** (a + 1) / (1 + alpha)
    assert a == 0 or tail(a - 1) > beta
