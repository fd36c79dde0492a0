"""Exact samplers of the discrete Laplace and the discrete Gaussian (Canonne, Kamath, Steinke
2020, Alg. 1–3) and the rigorous bounds on their tails.

The laws are irrational, so the samples are compared with rational laws within 2^−190 of them
(χ² goodness of fit of ``dpplug.conformance.goodness_of_fit``, each test at false alarm
1e-6 / (number of tests), fixed seeds), and each test must reject the same samples against a law
with 5% of its mass moved (the conformance suite's perturbation): a sampler of the wrong law fails.
Tails are compared with their series evaluated to 80 digits.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from gmpy2 import mpq
from scipy.stats import binomtest

from dpplug.bounds import ball, precise, upper
from dpplug.conformance.goodness_of_fit import chi_square_gof
from dpplug.conformance.sampling_law import perturbed
from dpplug.discrete_noise import (
    MAX_ENCLOSED_RADIUS,
    BitStream,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    gaussian_enclosure,
    gaussian_error,
    gaussian_tail,
    laplace_error,
    laplace_log_mgf,
    laplace_tail,
)
from dpplug.errors import NotSupported
from dpplug.pmf import Pmf
from dpplug.randomness import SeededSource

LAPLACE_SCALES = [mpq(2, 3), mpq(5, 2), mpq(40)]
GAUSSIAN_VARIANCES = [mpq(1, 2), mpq(7, 3), mpq(60)]
GAMMAS = [mpq(0), mpq(1, 3), mpq(1), mpq(7, 4), mpq(5, 2)]
#: Every statistical test of this module, for the Bonferroni split of 1e-6.
TESTS = len(LAPLACE_SCALES) + len(GAUSSIAN_VARIANCES) + len(GAMMAS) + 1
FALSE_ALARM = 1e-6 / TESTS
SAMPLES = 20_000


def rational(x: mpmath.mpf) -> mpq:
    """An mpmath number (80 digits) as a rational within 2^−200 of it."""
    mantissa, exponent = mpmath.mpf(x).man_exp
    return mpq(int(mantissa) << exponent) if exponent >= 0 else mpq(int(mantissa), 1 << -exponent)


def laplace_law(scale: mpq) -> Pmf:
    """Pr[Y = y] = ((1 − q)/(1 + q))·q^{|y|} with q a rational within 2^−200 of e^{−1/scale}:
    an exact law (total 1) within 2^−190 of the discrete Laplace."""
    with mpmath.workdps(80):
        q = rational(mpmath.exp(-1 / mpmath.mpf(Fraction(scale))))
    window = int(10 * scale) + 2
    centre = (1 - q) / (1 + q)
    return Pmf({y: centre * q ** abs(y) for y in range(-window, window + 1)}, tail_ratio=q)


def gaussian_law(sigma2: mpq) -> Pmf:
    """e^{−y²/(2σ²)} within 2^−200, on |y| ≤ 15σ, normalised exactly (the mass beyond is below
    e^{−112})."""
    window = int(15 * math.sqrt(sigma2)) + 2
    with mpmath.workdps(80):
        weights = {
            y: rational(mpmath.exp(-mpmath.mpf(y * y) / (2 * mpmath.mpf(Fraction(sigma2)))))
            for y in range(-window, window + 1)
        }
    total = sum(weights.values(), mpq(0))
    return Pmf({y: w / total for y, w in weights.items()})


def assert_follows(samples: list[int], law: Pmf) -> None:
    fit = chi_square_gof(np.array(samples, dtype=np.int64), law, false_alarm=FALSE_ALARM)
    assert not fit.rejected, (fit.statistic, fit.dof, fit.p_value)
    power = chi_square_gof(np.array(samples, dtype=np.int64), perturbed(law), FALSE_ALARM)
    assert power.rejected, "no power: a law with 5% of its mass moved was not rejected"


@pytest.mark.parametrize("scale", LAPLACE_SCALES, ids=str)
def test_discrete_laplace_follows_its_law(scale: mpq) -> None:
    samples = discrete_laplace(scale, SeededSource(11), SAMPLES)
    assert all(isinstance(y, int) for y in samples)
    assert_follows(samples, laplace_law(scale))


@pytest.mark.parametrize("sigma2", GAUSSIAN_VARIANCES, ids=str)
def test_discrete_gaussian_follows_its_law(sigma2: mpq) -> None:
    samples = discrete_gaussian(sigma2, SeededSource(12), SAMPLES)
    assert_follows(samples, gaussian_law(sigma2))


@pytest.mark.parametrize("gamma", GAMMAS, ids=str)
def test_bernoulli_exp_has_probability_e_to_the_minus_gamma(gamma: mpq) -> None:
    bits = BitStream(SeededSource(13))
    hits = sum(bernoulli_exp(gamma, bits) for _ in range(SAMPLES))
    p = math.exp(-float(gamma))
    if gamma == 0:
        assert hits == SAMPLES
        return
    assert binomtest(hits, SAMPLES, p).pvalue > FALSE_ALARM
    wrong = p + 0.03 if p < 0.5 else p - 0.03
    assert binomtest(hits, SAMPLES, wrong).pvalue < FALSE_ALARM  # power: 0.03 off is seen


def test_bit_stream_serves_uniform_integers() -> None:
    bits = BitStream(SeededSource(14))
    draws = [bits.uniform(6) for _ in range(SAMPLES)]
    assert set(draws) == set(range(1, 7))
    fit = chi_square_gof(
        np.array(draws, dtype=np.int64), Pmf({u: mpq(1, 6) for u in range(1, 7)}), FALSE_ALARM
    )
    assert not fit.rejected


def test_samples_come_from_the_source_only() -> None:
    first = discrete_laplace(mpq(7, 2), SeededSource(3), 50)
    assert discrete_laplace(mpq(7, 2), SeededSource(3), 50) == first
    assert discrete_laplace(mpq(7, 2), SeededSource(4), 50) != first
    source = SeededSource(5)
    discrete_gaussian(mpq(5), source)
    assert source.draws >= 1


@pytest.mark.parametrize("bad", [mpq(0), mpq(-1)])
def test_parameters_must_be_positive(bad: mpq) -> None:
    with pytest.raises(ValueError):
        discrete_laplace(bad, SeededSource(1))
    with pytest.raises(ValueError):
        discrete_gaussian(bad, SeededSource(1))
    with pytest.raises(ValueError):
        bernoulli_exp(mpq(-1), BitStream(SeededSource(1)))


def true_laplace_tail(scale: mpq, a: int) -> mpmath.mpf:
    with mpmath.workdps(110):
        q = mpmath.exp(-1 / mpmath.mpf(Fraction(scale)))
        return 2 * q ** (a + 1) / (1 + q)


@pytest.mark.parametrize("scale", [mpq(1, 3), mpq(5, 2), mpq(10**6, 7)], ids=str)
def test_laplace_tail_is_a_tight_upper_bound(scale: mpq) -> None:
    for a in (0, 1, 7, int(3 * scale)):
        bound = laplace_tail(scale, a)
        exact = true_laplace_tail(scale, a)
        with mpmath.workdps(80):
            assert mpmath.mpf(Fraction(bound)) >= exact
            assert mpmath.mpf(Fraction(bound)) <= exact * (1 + mpmath.mpf(10) ** -60)


@pytest.mark.parametrize(
    ("scale", "beta"),
    [(mpq(5, 2), mpq(1, 20)), (mpq(1000, 3), mpq(1, 10**9)), (mpq(1, 3), mpq(1, 2))],
)
def test_laplace_error_is_the_smallest_a(scale: mpq, beta: mpq) -> None:
    a = laplace_error(scale, beta)
    assert laplace_tail(scale, a) <= beta
    with mpmath.workdps(80):
        assert a == 0 or true_laplace_tail(scale, a - 1) > mpmath.mpf(Fraction(beta))


@pytest.mark.parametrize("sigma2", [mpq(1, 4), mpq(1, 2), mpq(2), mpq(3)], ids=str)
def test_discrete_gaussian_is_subgaussian_and_its_tail_bound_holds(sigma2: mpq) -> None:
    """The CKS fact the Gaussian bounds rest on, checked on the exact series: E[e^{tY}] ≤
    e^{t²σ²/2}; and the declared tail bound is at least the true tail. (For larger σ² the
    margin, about e^{−2π²σ²}, is below any working precision.)"""
    window = int(40 * math.sqrt(sigma2)) + 5
    with mpmath.workdps(60):
        s2 = mpmath.mpf(Fraction(sigma2))
        weights = {y: mpmath.exp(-mpmath.mpf(y * y) / (2 * s2)) for y in range(-window, window + 1)}
        total = mpmath.fsum(weights.values())
        for t in (0.05, 0.5, 2.0, 5.0):
            t = mpmath.mpf(t) / mpmath.sqrt(s2)
            mgf = mpmath.fsum(w * mpmath.exp(t * y) for y, w in weights.items()) / total
            assert mgf <= mpmath.exp(t * t * s2 / 2)
        for a in (0, 1, 5, 3 * int(math.sqrt(sigma2))):
            tail = mpmath.fsum(w for y, w in weights.items() if abs(y) > a) / total
            assert mpmath.mpf(Fraction(gaussian_tail(sigma2, a))) >= tail
    a = gaussian_error(sigma2, mpq(1, 1000))
    assert gaussian_tail(sigma2, a) <= mpq(1, 1000) < gaussian_tail(sigma2, a - 1) or a == 0


def test_laplace_log_mgf_matches_its_series_and_grows_like_its_square() -> None:
    scale = mpq(3)
    with mpmath.workdps(60):
        q = mpmath.exp(-1 / mpmath.mpf(3))
        ys = range(-8000, 8001)
        law = {y: (1 - q) / (1 + q) * q ** abs(y) for y in ys}
    previous = 0.0
    for x in (0.01, 0.1, 0.2, 0.3):
        with precise():
            value = laplace_log_mgf(scale, ball(mpq(x)))
            bound = upper(value)
        with mpmath.workdps(60):
            terms = (p * mpmath.exp(mpmath.mpf(x) * y) for y, p in law.items())
            series = mpmath.log(mpmath.fsum(terms))
            assert abs(mpmath.mpf(Fraction(bound)) - series) < mpmath.mpf(10) ** -40
        ratio = float(bound) / x**2  # ln E[e^{xY}]/x² is non-decreasing in |x|
        assert ratio >= previous
        previous = ratio


@pytest.mark.parametrize("sigma2", GAUSSIAN_VARIANCES, ids=str)
@pytest.mark.parametrize("bits", [64, 128])
def test_gaussian_enclosure_contains_the_law_and_bounds_its_outside_mass(
    sigma2: mpq, bits: int
) -> None:
    law, centre = gaussian_law(sigma2), 5
    enclosed = gaussian_enclosure(sigma2, centre, bits)
    slack = mpq(1, 1 << 190)  # the reference's own error
    assert enclosed.low == 2 * centre - enclosed.high
    for y in range(law.low, law.high + 1):
        p = law.prob(y)
        assert enclosed.lo(y + centre) - slack <= p <= enclosed.hi(y + centre) + slack
    beyond = sum((law.prob(y) for y in law if abs(y) > enclosed.high - centre), mpq(0))
    assert beyond <= enclosed.outside <= mpq(1, 1 << (bits - 8))
    assert 0 < enclosed.width() < mpq(1, 1 << (bits - 16))


def test_gaussian_enclosure_refuses_a_window_too_wide() -> None:
    with pytest.raises(NotSupported, match="window"):
        gaussian_enclosure(mpq(MAX_ENCLOSED_RADIUS) ** 2, 0, 128)
