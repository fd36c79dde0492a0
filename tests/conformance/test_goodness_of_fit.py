"""Pearson chi-square goodness of fit against exact pmfs (dpplug.conformance.goodness_of_fit)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gmpy2 import mpq
from scipy import stats

import dpplug
from dpplug.conformance.goodness_of_fit import chi_square_gof

HALVES = dpplug.Pmf({0: mpq(1, 2), 1: mpq(1, 2)})


def test_perfect_fit() -> None:
    result = chi_square_gof([0] * 50 + [1] * 50, HALVES)
    assert result.statistic == 0 and result.dof == 1 and result.p_value == 1.0
    assert not result.rejected
    assert [(b.low, b.high, b.observed, b.expected) for b in result.bins] == [
        (0, 0, 50, 50.0),
        (1, 1, 50, 50.0),
    ]


def test_statistic_matches_scipy_without_pooling() -> None:
    pmf = dpplug.Pmf({0: mpq(1, 4), 1: mpq(1, 4), 2: mpq(1, 2)})
    samples = np.repeat([0, 1, 2], [30, 20, 50])
    result = chi_square_gof(samples, pmf, false_alarm=0.01)
    expected = stats.chisquare([30, 20, 50], [25, 25, 50])
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.dof == 2 and not result.rejected


def test_rejects_a_clearly_wrong_law() -> None:
    samples = np.random.default_rng(1).integers(0, 2, size=20_000)
    biased = dpplug.Pmf({0: mpq(11, 20), 1: mpq(9, 20)})
    assert chi_square_gof(samples, biased).rejected
    assert not chi_square_gof(samples, HALVES).rejected


def test_small_outcomes_are_pooled_with_their_neighbours() -> None:
    probs = {z: mpq(1, 2 ** (z + 1)) for z in range(12)}
    probs[12] = mpq(1, 2**12)
    pmf = dpplug.Pmf(probs)
    samples = np.random.default_rng(2).choice(13, size=200, p=[float(p) for p in probs.values()])
    result = chi_square_gof(samples, pmf, min_expected=5)
    assert all(b.expected >= 5 for b in result.bins)
    assert sum(b.observed for b in result.bins) == 200
    assert sum(b.expected for b in result.bins) == pytest.approx(200)
    assert result.bins[0].low == 0 and result.bins[-1].high == 12  # the rare end joins the last
    assert [b.high + 1 for b in result.bins[:-1]] == [b.low for b in result.bins[1:]]
    assert result.dof == len(result.bins) - 1 < 12


def test_tails_of_an_unbounded_law_go_into_the_end_bins() -> None:
    r = mpq(1, 2)
    pmf = dpplug.Pmf({z: mpq(1, 3) * r ** abs(z) for z in range(-2, 3)}, tail_ratio=r)
    samples = [-9, -3, 0, 0, 1, 7, 40] * 100
    result = chi_square_gof(samples, pmf, min_expected=5)
    assert result.bins[0].low is None and result.bins[-1].high is None
    assert sum(b.observed for b in result.bins) == len(samples)
    assert sum(b.expected for b in result.bins) == pytest.approx(len(samples))
    assert result.impossible == 0


def test_an_impossible_output_rejects_outright() -> None:
    gappy = dpplug.Pmf({0: mpq(1, 2), 1: mpq(0), 2: mpq(1, 2)})
    result = chi_square_gof([0, 2] * 500 + [1], gappy)
    assert result.rejected and result.p_value == 0 and math.isinf(result.statistic)
    assert result.impossible == 1
    outside = chi_square_gof([0, 1] * 500 + [5], HALVES)
    assert outside.rejected and outside.impossible == 1


def test_false_alarm_rate_is_calibrated() -> None:
    """200 tests of correct samples at false alarm 0.05: the number rejected is Binomial(200,
    0.05) up to the chi-square approximation; accept anything within a 1e-6 two-sided band."""
    pmf = dpplug.Pmf({z: mpq(1, 6) for z in range(6)})
    rng = np.random.default_rng(3)
    rejected = sum(
        chi_square_gof(rng.integers(0, 6, size=600), pmf, false_alarm=0.05).rejected
        for _ in range(200)
    )
    assert stats.binomtest(rejected, 200, 0.05).pvalue > 1e-6


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="integers"):
        chi_square_gof([0.0, 1.0], HALVES)
    with pytest.raises(ValueError, match="integers"):
        chi_square_gof([True, False], HALVES)
    with pytest.raises(ValueError, match="at least one"):
        chi_square_gof([], HALVES)
    with pytest.raises(ValueError, match="sums to"):
        chi_square_gof([0, 1], dpplug.Pmf({0: mpq(1, 2), 1: mpq(1, 3)}))
    with pytest.raises(ValueError, match="false_alarm"):
        chi_square_gof([0, 1], HALVES, false_alarm=0)
    with pytest.raises(ValueError, match="min_expected"):
        chi_square_gof([0, 1], HALVES, min_expected=0)


def test_a_single_bin_cannot_reject() -> None:
    result = chi_square_gof([0, 1, 1], HALVES, min_expected=5)
    assert result.dof == 0 and result.p_value == 1.0 and not result.rejected


def test_power_is_a_function_of_the_laws_and_the_size_only() -> None:
    """The power of the test against a 5% perturbation grows with the sample size, from about
    the false-alarm rate (a handful of samples) to certainty (many), and agrees with the rate at
    which seeded samples of the truth reject the perturbed law (200 trials at the size where
    the power is near one half: a binomial interval at 1 − 1e-6 around it)."""
    from scipy.stats import binom

    from dpplug.conformance.goodness_of_fit import chi_square_power
    from dpplug.conformance.sampling_law import perturbed

    truth = dpplug.Pmf({z: mpq(1, 10) for z in range(10)})
    moved = perturbed(truth)
    powers = [chi_square_power(size, truth, moved, 1e-3) for size in (20, 200, 2000, 20000)]
    assert powers == sorted(powers) and powers[0] < 0.01 and powers[-1] > 0.999
    size = next(n for n in range(100, 5000, 50) if chi_square_power(n, truth, moved, 1e-3) > 0.5)
    power = chi_square_power(size, truth, moved, 1e-3)
    rng = np.random.default_rng(0)
    trials = 200
    rejected = sum(
        chi_square_gof(rng.integers(0, 10, size), moved, false_alarm=1e-3).rejected
        for _ in range(trials)
    )
    low, high = binom.interval(1 - 1e-6, trials, power)
    assert low - 0.1 * trials <= rejected <= high + 0.1 * trials
