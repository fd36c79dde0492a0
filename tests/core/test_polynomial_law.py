"""Polynomial laws: exact normalisation and privacy losses, enclosures that contain the discrete
Laplace's probabilities."""

from __future__ import annotations

import pytest
from gmpy2 import mpq

import dpplug
from dpplug.bounds import ball, lower, precise, upper
from dpplug.discrete_noise import discrete_laplace
from dpplug.errors import NotSupported
from dpplug.kinds.query_releaser.polynomial_law import PolynomialLaw, clamped_laplace_law
from dpplug.randomness import SeededSource


@pytest.mark.parametrize(("centre", "high"), [(0, 0), (0, 1), (1, 1), (0, 6), (3, 6), (6, 6)])
def test_the_clamped_laplace_law_sums_to_one_exactly(centre: int, high: int) -> None:
    law = clamped_laplace_law(mpq(5, 2), centre, high)
    assert law.normalised()
    assert law.window() == range(0, high + 1)


def test_a_law_off_by_one_exponent_does_not_sum_to_one() -> None:
    law = clamped_laplace_law(mpq(2), 2, 5)
    terms = list(law.terms)
    terms[3] = (terms[3][0], terms[3][1] + 1)
    assert not PolynomialLaw(law.scale, law.low, tuple(terms), law.denominator).normalised()


def test_the_enclosure_contains_the_discrete_laplace_probabilities() -> None:
    scale, centre, high = mpq(7, 3), 4, 9
    enclosed = clamped_laplace_law(scale, centre, high).enclosed(200)
    with precise(300):
        q = (-1 / ball(scale)).exp()
        for z in range(1, high):
            exact = (1 - q) * q ** abs(z - centre) / (1 + q)
            assert enclosed.lo(z) <= lower(exact) and upper(exact) <= enclosed.hi(z)
        below = q**centre / (1 + q)  # Pr[Y ≤ −centre]
        assert enclosed.lo(0) <= lower(below) and upper(below) <= enclosed.hi(0)
    assert enclosed.outside == 0
    assert 0 < enclosed.width() < mpq(1, 2**180)


def test_the_law_matches_clamped_discrete_laplace_draws() -> None:
    scale, centre, high = mpq(3, 2), 2, 5
    enclosed = clamped_laplace_law(scale, centre, high).enclosed()
    draws = discrete_laplace(scale, SeededSource(3), size=20_000)
    clamped = [min(max(centre + y, 0), high) for y in draws]
    for z in range(high + 1):
        share = clamped.count(z) / len(clamped)
        assert abs(share - float(enclosed.lo(z))) < 0.02  # ≥ 6 standard deviations


def test_losses_are_exact_powers_of_q() -> None:
    scale = mpq(3)
    p, q = clamped_laplace_law(scale, 1, 6), clamped_laplace_law(scale, 3, 6)
    losses = p.losses(q)
    assert losses is not None
    assert losses[0] == mpq(2, 3)  # q^1 against q^3 at the lower end
    assert losses[2] == 0  # |2 − 1| = |2 − 3|
    assert losses[6] == mpq(-2, 3)
    assert p.max_loss(q) == (mpq(2, 3), 0)
    wider = clamped_laplace_law(scale, 3, 7)
    assert p.losses(wider) is None  # an output only one of them gives: an infinite loss


def test_max_loss_without_the_fast_path_agrees() -> None:
    p, q = clamped_laplace_law(mpq(2), 0, 4), clamped_laplace_law(mpq(2), 3, 4)
    padded = PolynomialLaw(q.scale, q.low, (*q.terms, ((0,), 0)), q.denominator)  # Pr[5] = 0
    assert p.max_loss(q) == p.max_loss(padded) == (mpq(3, 2), 0)
    other = PolynomialLaw(p.scale, 0, (((1,), 0), ((2, -1), 0)), (3,))
    assert p.losses(other) is None


def test_bad_laws_are_refused() -> None:
    with pytest.raises(ValueError, match="scale"):
        PolynomialLaw(mpq(0), 0, (((1,), 0),), (1,))
    with pytest.raises(ValueError, match="non-zero D"):
        PolynomialLaw(mpq(1), 0, (((1,), 0),), (0,))
    with pytest.raises(ValueError, match="e_z"):
        PolynomialLaw(mpq(1), 0, (((1,), -1),), (1,))
    with pytest.raises(ValueError, match="centre"):
        clamped_laplace_law(mpq(1), 3, 2)


def test_a_law_too_large_to_write_out_is_refused_before_it_is_built() -> None:
    releaser = dpplug.create(
        "independent-laplace", n=10**6, epsilon=1, max_queries=2, sparsity=3, grid=2**16
    )
    with pytest.raises(NotSupported, match="too large to write out"):
        releaser.answer_law(0)
