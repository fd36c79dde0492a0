"""The exact privacy of a session of independent answers: one answer's exact loss, the optimal
composition over adaptive queries, the repeated query, and the decision between them."""

from __future__ import annotations

import itertools

import pytest
from gmpy2 import mpq

from dpplug.bounds import Ball, ball, lower, precise, upper
from dpplug.composition import optimal_delta_at
from dpplug.conformance.divergence import enclosed_hockey_stick
from dpplug.conformance.structures.independent_answers import (
    answer_loss,
    repeated_pair,
    session_privacy,
    summed_law,
)
from dpplug.errors import NotSupported
from dpplug.exact import exp_lower, exp_upper
from dpplug.guarantee import Guarantee, Relation
from dpplug.kinds.query_releaser.polynomial_law import PolynomialLaw, clamped_laplace_law

SCALE, N_W, W = mpq(2), 6, 2  # ε₁ = W/scale = 1


def laws(scale: mpq = SCALE) -> dict[int, PolynomialLaw]:
    return {s: clamped_laplace_law(scale, s, N_W) for s in range(N_W + 1)}


def guarantee(exp_epsilon: mpq, delta: mpq = 0) -> Guarantee:
    return Guarantee(exp_epsilon, delta, Relation.ADD_REMOVE)


def overlaps(a: Ball, b: Ball) -> bool:
    return bool(lower(a) <= upper(b) and lower(b) <= upper(a))


def test_one_answers_loss_is_w_over_the_scale_at_the_clamped_end() -> None:
    found = answer_loss(laws(), W)
    assert found.epsilon1 == 1
    assert found.pair == (0, 2) and found.output == 0


def test_the_repeated_pair_once_is_the_hockey_stick_of_the_two_laws() -> None:
    p, q = laws()[1], laws()[3]
    e = mpq(3, 2)
    with precise(256):
        once = repeated_pair(p, q, 1, e)
    low, high = enclosed_hockey_stick(p.enclosed(256), q.enclosed(256), e)
    assert low - mpq(1, 2**200) <= upper(once) and lower(once) <= high + mpq(1, 2**200)


def test_the_repeated_pair_twice_is_the_product_laws_hockey_stick() -> None:
    p, q = laws()[0], laws()[2]
    e = mpq(5, 2)
    with precise(256):
        twice = repeated_pair(p, q, 2, e)
        qb = (-1 / ball(SCALE)).exp()
        brute = ball(0)
        for a, b in itertools.product(range(N_W + 1), repeat=2):
            excess = p.probability(a, qb) * p.probability(b, qb) - ball(e) * q.probability(
                a, qb
            ) * q.probability(b, qb)
            if excess > 0:
                brute += excess
        assert overlaps(twice, brute)


def test_a_pure_session_passes_at_k_epsilon1_and_fails_just_below() -> None:
    failure, summary = session_privacy(laws(), W, 3, guarantee(exp_upper(mpq(3), 64)))
    assert failure is None
    assert "ε₁ = 1" in summary and "δ ≤ 0" in summary
    failure, _ = session_privacy(laws(), W, 3, guarantee(exp_lower(mpq(3), 64)))
    assert failure is not None and "the same query asked k = 3 times already has" in failure


def test_an_approximate_session_passes_fails_or_is_left_undecided() -> None:
    e = exp_upper(mpq(2), 64)
    with precise(256):
        adaptive = upper(optimal_delta_at(mpq(1), 4, e))
        p, q = laws()[0], laws()[2]
        repeated = lower(repeated_pair(p, q, 4, e))
    assert 0 < repeated < adaptive
    assert session_privacy(laws(), W, 4, guarantee(e, adaptive * 2))[0] is None
    failure, _ = session_privacy(laws(), W, 4, guarantee(e, repeated / 2))
    assert failure is not None and "already has hockey-stick divergence" in failure
    with pytest.raises(NotSupported, match="neither proved nor refuted"):
        session_privacy(laws(), W, 4, guarantee(e, (repeated + adaptive) / 2))


def test_a_law_that_does_not_sum_to_one_fails() -> None:
    found = laws()
    law = found[2]
    found[2] = PolynomialLaw(law.scale, law.low, law.terms[:-1], law.denominator)
    failure, _ = session_privacy(found, W, 3, guarantee(exp_upper(mpq(3), 64)))
    assert failure is not None and "true scaled answer is 2 does not sum to one" in failure


def test_ratios_that_are_not_powers_of_q_are_not_decided() -> None:
    found = {0: clamped_laplace_law(SCALE, 0, 1), 1: clamped_laplace_law(mpq(3), 1, 1)}
    with pytest.raises(NotSupported, match="not a power of q"):
        session_privacy(found, 1, 2, guarantee(mpq(10)))


def test_the_summed_law_of_k_answers_encloses_the_convolution_of_one_answers_law() -> None:
    law = clamped_laplace_law(SCALE, 2, N_W)
    one = law.enclosed(256)
    assert summed_law(law, 1).bounds == law.enclosed(128).bounds
    total = summed_law(law, 3)
    assert (total.low, total.high, total.outside) == (0, 3 * N_W, 0)
    assert 0 < total.width() < mpq(1, 2**100)
    for t in total.window():  # the convolution of one answer's bounds, at twice the precision
        terms = [
            (a, b, c) for a, b, c in itertools.product(one.window(), repeat=3) if a + b + c == t
        ]
        low = sum((one.lo(a) * one.lo(b) * one.lo(c) for a, b, c in terms), mpq(0))
        high = sum((one.hi(a) * one.hi(b) * one.hi(c) for a, b, c in terms), mpq(0))
        assert total.lo(t) <= high and low <= total.hi(t)
    # the total's law is not the law of one answer tripled: 3·Y takes only multiples of 3
    assert total.lo(3 * 2 + 1) > 0
