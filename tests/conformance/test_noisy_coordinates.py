"""The exact privacy of T noisy coordinates all moved by one: the Laplace case is randomized
response composed (the optimal composition), the Gaussian case the brute-force product, and
declarations that contradict themselves or the guarantee fail."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from gmpy2 import mpq

from dpplug.bounds import ball, lower, precise, upper
from dpplug.composition import optimal_delta_at
from dpplug.conformance.structures.noisy_coordinates import coordinate_privacy, product_divergence
from dpplug.exact import exp_upper
from dpplug.guarantee import Guarantee, Relation
from dpplug.kinds.query_releaser.coordinate_noise import GaussianCoordinates, LaplaceCoordinates


def guarantee(exp_epsilon: mpq, delta: mpq) -> Guarantee:
    return Guarantee(exp_epsilon, delta, Relation.ADD_REMOVE)


@pytest.mark.parametrize("t", [1, 3, 16])
def test_laplace_coordinates_are_randomized_response_composed(t: int) -> None:
    scale, e = mpq(2), exp_upper(mpq(t, 4), 64)
    noise = LaplaceCoordinates(scale, t)
    law = noise.enclosed(128)
    with precise(128):
        low, high = product_divergence(noise, law, e, 1)
        rr = optimal_delta_at(1 / scale, t, e)  # the unit shift's pair is RR with e^(1/b)
        assert low <= upper(rr) and lower(rr) <= high
    assert high - low < mpq(1, 2**100)


def test_gaussian_coordinates_match_the_brute_force_product() -> None:
    noise = GaussianCoordinates(mpq(1), 2)
    law = noise.enclosed(128)
    e = mpq(3, 2)
    with precise(128):
        low, high = product_divergence(noise, law, e, -1)
        brute = ball(0)
        for a, b in itertools.product(law.window(), repeat=2):
            p = ball(law.lo(a - 1)) * ball(law.lo(b - 1))  # P: both moved up by one
            q = ball(law.hi(a)) * ball(law.hi(b))
            excess = p - ball(e) * q
            if excess > 0:
                brute += excess
        assert lower(brute) - mpq(1, 2**90) <= high and low <= upper(brute) + mpq(1, 2**90)
    assert 0 < low <= high


def test_the_decision_passes_at_the_exact_delta_and_fails_below_it() -> None:
    noise = LaplaceCoordinates(mpq(4), 16)
    e = exp_upper(mpq(2), 64)
    with precise(128):
        low, high = product_divergence(noise, noise.enclosed(128), e, 1)
    failure, summary = coordinate_privacy(noise, guarantee(e, high))
    assert failure is None and "T = 16 noisy coordinates" in summary
    failure, _ = coordinate_privacy(noise, guarantee(e, low / 2))
    assert failure is not None and "moving all T = 16 coordinates by one" in failure


@dataclass(frozen=True)
class _MislabelledLaplace(LaplaceCoordinates):
    """Declares the loss of a Laplace twice as wide as its law."""

    def unit_loss(self, z: int) -> mpq:
        return super().unit_loss(z) / 2


def test_a_loss_that_contradicts_the_law_fails() -> None:
    noise = _MislabelledLaplace(mpq(2), 4)
    failure, _ = coordinate_privacy(noise, guarantee(mpq(100), mpq(1, 2)))
    assert failure is not None and "contradicts the declared noise law" in failure


def test_a_pure_laplace_release_is_decided_by_its_bounded_loss() -> None:
    """δ = 0: T·(1/b) ≤ ε passes, met with equality too (no enclosure could show a divergence of
    exactly 0); one more coordinate fails; the Gaussian's loss is unbounded, so it fails."""
    noise = LaplaceCoordinates(mpq(4), 8)  # T/b = 2
    failure, summary = coordinate_privacy(noise, guarantee(exp_upper(mpq(2), 64), mpq(0)))
    assert failure is None and "T·max|ℓ| = 2 ≤ ε (pure)" in summary
    failure, _ = coordinate_privacy(
        LaplaceCoordinates(mpq(4), 9), guarantee(exp_upper(mpq(2), 64), mpq(0))
    )
    assert failure is not None and "moving all T = 9 coordinates by one" in failure
    failure, _ = coordinate_privacy(GaussianCoordinates(mpq(4), 1), guarantee(mpq(100), mpq(0)))
    assert failure is not None
