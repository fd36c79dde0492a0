"""The discrete-gaussian sampler (Canonne, Kamath, Steinke 2020): σ² from the zCDP conversion,
a declared δ that the exact privacy curve of the discrete Gaussian (their Thm 7) respects, and
noise drawn by the exact sampler of dpplug.discrete_noise (whose law tests/core checks)."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.composition import largest_rho, zcdp_delta
from dpplug.conformance.runner import run_contract
from dpplug.conformance.settings import Settings
from dpplug.discrete_noise import discrete_gaussian, gaussian_enclosure, gaussian_error
from dpplug.errors import BadParameter, NotSupported
from dpplug.guarantee import COUNT_SENSITIVITY_1, within_budget
from dpplug.plugins.samplers.discrete_gaussian import epsilon_below
from dpplug.randomness import SeededSource

CASES = [(mpq(1), mpq(1, 10**6)), (mpq(4), mpq(1, 100)), (mpq(1, 4), mpq(1, 10**9))]


def exact_delta(sigma2: mpq, epsilon: mpq) -> mpmath.mpf:
    """CKS Thm 7 at sensitivity 1: Pr[Y > εσ² − 1/2] − e^ε·Pr[Y > εσ² + 1/2], Y ~ N_Z(0, σ²)."""
    with mpmath.workdps(50):
        s2, e = mpmath.mpf(Fraction(sigma2)), mpmath.mpf(Fraction(epsilon))
        window = int(60 * mpmath.sqrt(s2)) + 10
        weights = {y: mpmath.exp(-mpmath.mpf(y * y) / (2 * s2)) for y in range(-window, window + 1)}
        total = mpmath.fsum(weights.values())

        def above(t: mpmath.mpf) -> mpmath.mpf:
            return mpmath.fsum(w for y, w in weights.items() if y > t) / total

        return above(e * s2 - mpmath.mpf(1) / 2) - mpmath.exp(e) * above(e * s2 + mpmath.mpf(1) / 2)


@pytest.mark.parametrize(("epsilon", "delta"), CASES, ids=str)
def test_guarantee_is_the_zcdp_conversion_and_the_exact_curve_respects_it(
    epsilon: mpq, delta: mpq
) -> None:
    sampler = dpplug.create("discrete-gaussian", epsilon=epsilon, delta=delta)
    below = epsilon_below(epsilon)  # a hair below ε, so e^ε̃ rounded up stays within e^ε
    assert 0 < epsilon - below <= mpq(max(1, epsilon), 1 << 60)
    rho = largest_rho(below, delta)
    assert sampler.sigma2 == 1 / (2 * rho)
    guarantee = sampler.guarantee
    assert guarantee.neighbouring == COUNT_SENSITIVITY_1
    assert guarantee.delta == zcdp_delta(rho, below) <= delta
    assert within_budget(guarantee, epsilon, delta)
    assert guarantee.epsilon == pytest.approx(float(epsilon), abs=1e-15)
    with mpmath.workdps(50):
        assert exact_delta(sampler.sigma2, below) <= mpmath.mpf(Fraction(guarantee.delta))


def test_samples_are_counts_plus_the_exact_discrete_gaussian() -> None:
    sampler = dpplug.create("discrete-gaussian", epsilon=1, delta=1e-6)
    counts = np.array([[0, 5], [-3, 10**6]], dtype=np.int64)
    noisy = sampler.sample(counts, SeededSource(2))
    noise = discrete_gaussian(sampler.sigma2, SeededSource(2), 4)
    assert noisy.shape == (2, 2) and noisy.dtype == np.int64
    assert list(noisy.reshape(-1) - counts.reshape(-1)) == noise


def test_there_is_no_exact_pmf_and_accuracy_is_the_tail_bound() -> None:
    sampler = dpplug.create("discrete-gaussian", epsilon=1, delta=1e-6)
    with pytest.raises(NotSupported, match="irrational"):
        sampler.pmf(0)
    assert sampler.enclosed_law(7) == gaussian_enclosure(sampler.sigma2, 7, 128)
    with pytest.raises(BadParameter, match="bits ≥ 16"):
        sampler.enclosed_law(0, bits=8)
    accuracy = sampler.accuracy(Fraction(1, 20))
    assert (
        accuracy.per_query.a
        == accuracy.simultaneous.a
        == gaussian_error(sampler.sigma2, mpq(1, 20))
    )


def exact_tail(sigma2: mpq, a: int) -> mpmath.mpf:
    """Pr[|Y| > a] = 2·Σ_{j>a} e^{−j²/(2σ²)} / Σ_z e^{−z²/(2σ²)}, by direct sums to 60σ past a
    (the rest is below e^{−1800} of the total)."""
    with mpmath.workdps(50):
        s2 = mpmath.mpf(Fraction(sigma2))
        window = a + int(60 * mpmath.sqrt(s2)) + 10
        weights = [mpmath.exp(-mpmath.mpf(y * y) / (2 * s2)) for y in range(window + 1)]
        total = weights[0] + 2 * mpmath.fsum(weights[1:])
        return 2 * mpmath.fsum(weights[a + 1 :]) / total


GRID = [
    (eps, delta, beta)
    for eps, delta in [*CASES, (mpq(1, 2), mpq(1, 10**6))]
    for beta in (mpq(1, 20), mpq(1, 10**6))
]


@pytest.mark.parametrize(("epsilon", "delta", "beta"), GRID, ids=str)
def test_declared_a_is_sound_and_at_most_one_above_the_exact_tails(
    epsilon: mpq, delta: mpq, beta: mpq
) -> None:
    """The exact tail (direct sums) at the declared a is at most β, and at a − 2 above it: the
    declared a is the exact one or one more (at ε = 1/2, δ = 10⁻⁶, β = 1/20: 17, where the
    subgaussian bound 2e^{−(a+1)²/(2σ²)} gave 23)."""
    sampler = dpplug.create("discrete-gaussian", epsilon=epsilon, delta=delta)
    a = sampler.accuracy(beta).per_query.a
    with mpmath.workdps(50):
        assert exact_tail(sampler.sigma2, a) <= mpmath.mpf(Fraction(beta))
        assert a < 2 or exact_tail(sampler.sigma2, a - 2) > mpmath.mpf(Fraction(beta))


def test_its_draws_are_tested_inside_its_enclosed_law() -> None:
    entry = dpplug.Registry.load(entry_points=False).get("discrete-gaussian")
    result = run_contract(entry, "sampling-law", Settings(mode="fast"))
    assert result.passed, result.detail
    assert "enclosed laws: tested inside their enclosures" in result.detail
