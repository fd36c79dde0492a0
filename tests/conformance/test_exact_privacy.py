"""Exact privacy checks on hand-made laws (dpplug.conformance.exact_privacy)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from gmpy2 import mpq

import dpplug
from dpplug.conformance.divergence import (
    enclosed_hockey_stick,
    enclosed_ratio,
    hockey_stick,
    max_likelihood_ratio,
)
from dpplug.conformance.probes.sampler.probe import enclosed_privacy, sampler_privacy
from dpplug.conformance.runner import run_contract
from dpplug.conformance.settings import Settings
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.guarantee import COUNT_SENSITIVITY_1, Neighbouring, Relation
from dpplug.plugin_registry import registry
from dpplug.plugins.samplers import DiscreteGaussian

HALVES = dpplug.Pmf({0: mpq(1, 2), 1: mpq(1, 2)})
THIRDS = dpplug.Pmf({0: mpq(1, 3), 1: mpq(2, 3)})


def laplace(centre: int, r: Any, radius: int) -> dpplug.Pmf:
    """((1−r)/(1+r))·r^{|z−centre|}, stored on centre ± radius, with geometric tails."""
    r = mpq(r)
    return dpplug.Pmf(
        {centre + j: (1 - r) / (1 + r) * r ** abs(j) for j in range(-radius, radius + 1)},
        tail_ratio=r,
    )


def test_ratio_of_bounded_laws() -> None:
    assert max_likelihood_ratio(HALVES, THIRDS) == mpq(3, 2)  # (1/2)/(1/3) beats (2/3)/(1/2)
    assert max_likelihood_ratio(THIRDS, HALVES) == mpq(3, 2)
    assert max_likelihood_ratio(HALVES, HALVES) == 1


def test_ratio_is_infinite_when_one_law_misses_an_output() -> None:
    point = dpplug.Pmf({0: mpq(1)})
    assert max_likelihood_ratio(point, HALVES) is None
    assert max_likelihood_ratio(HALVES, point) is None
    assert max_likelihood_ratio(point, dpplug.Pmf({5: mpq(1)})) is None


def test_outputs_impossible_under_both_laws_are_skipped() -> None:
    gappy = dpplug.Pmf({0: mpq(1, 2), 1: mpq(0), 2: mpq(1, 2)})
    other = dpplug.Pmf({0: mpq(1, 4), 2: mpq(3, 4)})
    assert max_likelihood_ratio(gappy, other) == 2


def test_ratio_of_tailed_laws_is_exact_whatever_the_windows() -> None:
    r = mpq(1, 3)
    assert max_likelihood_ratio(laplace(0, r, 2), laplace(1, r, 7)) == 3  # 1/r, on every output
    assert max_likelihood_ratio(laplace(0, r, 1), laplace(0, r, 9)) == 1  # same law, two windows
    assert max_likelihood_ratio(laplace(0, r, 3), laplace(40, r, 3)) == 3**40  # disjoint windows


def test_ratio_of_a_tailed_and_a_bounded_law_is_infinite() -> None:
    assert max_likelihood_ratio(laplace(0, mpq(1, 2), 3), dpplug.Pmf({0: mpq(1)})) is None


def test_different_tail_ratios_are_refused() -> None:
    with pytest.raises(ValueError, match="tail ratios"):
        max_likelihood_ratio(laplace(0, mpq(1, 2), 3), laplace(0, mpq(1, 3), 3))
    with pytest.raises(ValueError, match="tail ratios"):
        hockey_stick(laplace(0, mpq(1, 2), 3), laplace(0, mpq(1, 3), 3), 1)


def test_hockey_stick_of_bounded_laws() -> None:
    assert hockey_stick(HALVES, THIRDS, 1) == mpq(1, 6)  # total variation
    assert hockey_stick(HALVES, THIRDS, Fraction(5, 4)) == mpq(1, 12)  # 1/2 − (5/4)(1/3)
    assert hockey_stick(HALVES, THIRDS, Fraction(3, 2)) == 0
    assert hockey_stick(THIRDS, HALVES, 1) == mpq(1, 6)
    assert hockey_stick(HALVES, dpplug.Pmf({0: mpq(1)}), 1) == mpq(1, 2)
    assert hockey_stick(HALVES, dpplug.Pmf({7: mpq(1)}), 100) == 1  # disjoint supports


def test_hockey_stick_of_tailed_laws_includes_the_tails() -> None:
    """Shifted two-sided geometrics P = c+Z, Q = c+1+Z with ratio r = 1/2: on z ≤ c, P/Q = 2 and
    P − eQ = C·r^{c−z}(1 − e·r); elsewhere P/Q = 1/2. So the divergence is C(1 − e/2)/(1 − r) for
    1 ≤ e ≤ 2 with C = (1−r)/(1+r) = 1/3: TV = 1/3, and 1/6 at e = 3/2, 0 at e = 2."""
    for p, q in (
        (laplace(0, mpq(1, 2), 2), laplace(1, mpq(1, 2), 5)),
        (laplace(0, mpq(1, 2), 30), laplace(1, mpq(1, 2), 0)),
    ):
        assert hockey_stick(p, q, 1) == mpq(1, 3)
        assert hockey_stick(p, q, Fraction(3, 2)) == mpq(1, 6)
        assert hockey_stick(p, q, 2) == 0
        assert hockey_stick(q, p, Fraction(3, 2)) == mpq(1, 6)


def test_hockey_stick_of_a_tailed_against_a_bounded_law() -> None:
    """P two-sided geometric (r = 1/2, P(0) = 1/3), Q the point mass at 0: Σ max(0, P − Q) is
    everything of P off 0 (tails included) = 2/3; the other way it is 1 − 1/3 = 2/3."""
    p, q = laplace(0, mpq(1, 2), 2), dpplug.Pmf({0: mpq(1)})
    assert hockey_stick(p, q, 1) == mpq(2, 3)
    assert hockey_stick(q, p, 1) == mpq(2, 3)
    assert hockey_stick(q, p, 3) == 0


def test_hockey_stick_takes_exact_rationals_only() -> None:
    with pytest.raises(TypeError):
        hockey_stick(HALVES, THIRDS, 1.5)
    with pytest.raises(TypeError):
        hockey_stick(HALVES, THIRDS, True)


class Coin(dpplug.CountingQuerySampler):
    """Keep a bit in {0, 1} with probability *keep*; declares whatever guarantee it is given."""

    name = "test-coin"
    summary = "Randomized response with a declared guarantee, for checker tests."
    reference = "Warner 1965"
    schema = dpplug.Schema(())

    def __init__(
        self,
        keep: Any,
        exp_epsilon: Any,
        delta: Any = 0,
        total: Any = 1,
        neighbouring: Neighbouring = COUNT_SENSITIVITY_1,
    ) -> None:
        super().__init__()
        self.n, self.d = 1, None
        self.keep, self.total = mpq(keep), mpq(total)
        self._guarantee = dpplug.Guarantee(exp_epsilon, delta, neighbouring)

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return self._guarantee

    def _pmf(self, count: int) -> dpplug.Pmf:
        return dpplug.Pmf({count: self.keep * self.total, 1 - count: (1 - self.keep) * self.total})

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        bound = dpplug.ErrorBound(1, beta)
        return dpplug.Accuracy(bound, bound)


def test_sampler_privacy_passes_a_correct_pure_guarantee() -> None:
    report = sampler_privacy(Coin(mpq(3, 4), 3))
    assert report.passed and not report.failures
    assert report.counts == (0, 1) and report.pairs == 1 and report.totals_exact
    assert report.worst_ratio == 3 and report.worst_ratio_pair == (0, 1)
    assert report.worst_divergence == 0


def test_sampler_privacy_catches_an_understated_epsilon() -> None:
    report = sampler_privacy(Coin(mpq(3, 4), Fraction(5, 2)))
    assert not report.passed
    assert report.worst_ratio == 3
    assert report.worst_divergence == mpq(3, 4) - mpq(5, 2) * mpq(1, 4)
    assert "exceeds e^ε = 5/2" in report.failures[0]


def test_sampler_privacy_checks_approximate_guarantees_by_divergence() -> None:
    # keep = 3/4 at e^ε = 1: the divergence is the total variation, exactly 1/2.
    assert sampler_privacy(Coin(mpq(3, 4), 1, mpq(1, 2))).passed
    failing = sampler_privacy(Coin(mpq(3, 4), 1, mpq(1, 4)))
    assert not failing.passed and failing.worst_divergence == mpq(1, 2)
    certain = sampler_privacy(Coin(1, 2, mpq(99, 100)))  # no noise: ratio ∞, divergence 1
    assert certain.worst_ratio is None and certain.worst_divergence == 1
    assert not certain.passed


def test_sampler_privacy_catches_a_pmf_that_does_not_sum_to_one() -> None:
    report = sampler_privacy(Coin(mpq(3, 4), 3, total=mpq(99, 100)))
    assert not report.passed and not report.totals_exact
    assert "sums to 99/100" in report.failures[0]


def test_sampler_privacy_refuses_other_relations() -> None:
    with pytest.raises(ValueError, match=r"Relation\.COUNT"):
        sampler_privacy(Coin(mpq(3, 4), 3, neighbouring=Neighbouring(Relation.ADD_REMOVE)))


def test_sampler_privacy_uses_a_small_range_for_unbounded_samplers() -> None:
    sampler = dpplug.create("discrete-laplace", epsilon=Fraction(1, 2))
    report = sampler_privacy(sampler)
    assert report.counts == (-3, 3) and report.pairs == 6 and report.passed
    assert sampler_privacy(sampler, unbounded_counts=(10, 12)).pairs == 2


@pytest.mark.parametrize(
    ("p", "q"), [(HALVES, THIRDS), (laplace(0, mpq(1, 3), 4), laplace(1, mpq(1, 3), 2))]
)
def test_enclosed_bounds_of_exact_laws_straddle_the_exact_values(
    p: dpplug.Pmf, q: dpplug.Pmf
) -> None:
    e = mpq(3, 2)
    low, high = enclosed_hockey_stick(EnclosedLaw.of_pmf(p), EnclosedLaw.of_pmf(q), e)
    assert low <= hockey_stick(p, q, e) <= high
    if p.bounded:
        assert low == high == hockey_stick(p, q, e)
        assert (
            enclosed_ratio(EnclosedLaw.of_pmf(p), EnclosedLaw.of_pmf(q))
            == (max_likelihood_ratio(p, q),) * 2
        )
    else:  # outside the windows the ratio is unknown to an enclosure
        lower, upper = enclosed_ratio(EnclosedLaw.of_pmf(p), EnclosedLaw.of_pmf(q))
        assert upper is None and lower is not None and lower <= max_likelihood_ratio(p, q)


class OverclaimedGaussian(DiscreteGaussian):
    """Declares a δ of a tenth of its real hockey-stick divergence."""

    name = "overclaimed-gaussian"

    @property
    def guarantee(self) -> dpplug.Guarantee:
        honest = super().guarantee
        return dpplug.Guarantee(honest.exp_epsilon, mpq(1, 10**8), honest.neighbouring)


def test_the_discrete_gaussian_is_proved_private_from_its_enclosed_laws() -> None:
    check = enclosed_privacy(DiscreteGaussian(epsilon=2, delta=mpq(1, 10**6)))
    assert check.failures == ()
    assert "from enclosed laws at 128 bits (6 pairs of counts" in check.summary


def test_an_overclaimed_gaussian_fails_on_a_lower_bound() -> None:
    check = enclosed_privacy(OverclaimedGaussian(epsilon=2, delta=mpq(1, 10**6)))
    assert "hockey-stick divergence for counts -3 and -2 is at least" in check.failures[0]
    assert "above δ = 1/100000000" in check.failures[0]


class WideBelow(DiscreteGaussian):
    """Declares enclosures with an outside mass of 1/2 below `honest_from` bits."""

    name = "wide-below"
    honest_from = 256

    def _enclosed_law(self, count: int, bits: int) -> EnclosedLaw:
        law = super()._enclosed_law(count, bits)
        if bits >= self.honest_from:
            return law
        return EnclosedLaw(law.low, law.bounds, mpq(1, 2), bits)


def test_an_undecided_guarantee_is_decided_at_a_higher_precision() -> None:
    check = enclosed_privacy(WideBelow(epsilon=2, delta=mpq(1, 10**6)))
    assert check.failures == ()
    assert "from enclosed laws at 256 bits" in check.summary


def test_a_guarantee_undecided_at_every_precision_is_not_checked() -> None:
    sampler = WideBelow(epsilon=2, delta=mpq(1, 10**6))
    sampler.honest_from = 1 << 20
    with pytest.raises(NotSupported, match="undecided"):
        enclosed_privacy(sampler)


def test_exact_privacy_states_the_deviations_of_the_code_its_random_points_can_miss() -> None:
    """geosample's u has hundreds of bits: its pieces are compared exactly at their ends and
    at random points inside, so the power names the smallest deviation of the code seen with
    probability 1/2 (16 points in a piece of probability at most 1), not "any"."""
    result = run_contract(registry().get("geosample"), "exact-privacy", Settings())
    assert result.passed and result.power.startswith("any (code: TV ")
    assert 0 < result.weakness <= 1 - 2 ** (-1 / 16)
