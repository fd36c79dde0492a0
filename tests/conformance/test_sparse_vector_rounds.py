"""The exact privacy of a sparse-vector session, decided from its declared structure, and the
exact laws the sampling law tests its draws against."""

from __future__ import annotations

import pytest
from gmpy2 import mpq

from dpplug.composition import step_budget
from dpplug.conformance.structures.sparse_vector_rounds import (
    BUCKETS_PER_SIDE,
    answer_output,
    first_answer_law,
    session_privacy,
    update_time_law,
)
from dpplug.errors import NotSupported
from dpplug.exact import exp_upper
from dpplug.guarantee import Guarantee, Relation
from dpplug.kinds.query_releaser.sparse_vector import SparseVectorRounds

W = 2


def structure(
    epsilon0: mpq, rounds: int, threshold: int = 40, scale: int = 1000
) -> SparseVectorRounds:
    """The sparse-multiplicative-weights design's scales for a step ε₀: each round and each
    answer exactly ε₀-DP."""
    return SparseVectorRounds(
        threshold,
        2 * W / epsilon0,
        4 * W / epsilon0,
        W / epsilon0,
        rounds,
        scale,
        W,
        lambda q, updates: 0,
    )


def guarantee(epsilon: mpq, delta: mpq) -> Guarantee:
    return Guarantee(exp_upper(epsilon, 64), delta, Relation.ADD_REMOVE)


K = 10**6  # queries: the rounds c bound the steps


def test_pure_sessions_pass_by_basic_composition_and_fail_beyond() -> None:
    failure, proved = session_privacy(structure(mpq(1, 10), 5), guarantee(mpq(1), mpq(0)), K)
    assert failure is None and "basic composition" in proved
    failure, _ = session_privacy(structure(mpq(1, 10), 6), guarantee(mpq(1), mpq(0)), K)
    assert failure is not None and "with δ = 0 they compose to 2r·ε₀ = 6/5" in failure


def test_a_session_of_k_queries_has_at_most_k_rounds() -> None:
    """c = 6 rounds but k = 5 queries: 10 steps of ε₀ = 1/10, within ε = 1."""
    failure, proved = session_privacy(structure(mpq(1, 10), 6), guarantee(mpq(1), mpq(0)), 5)
    assert failure is None and "2·min(c, k) = 10 steps" in proved


def test_the_step_budget_proves_its_own_guarantee_by_optimal_composition() -> None:
    budget = step_budget(1, mpq(1, 10**6), 2 * 50)
    failure, proved = session_privacy(
        structure(budget.epsilon0, 50),
        Guarantee(budget.exp_epsilon, budget.delta, Relation.ADD_REMOVE),
        K,
    )
    assert failure is None and "optimal composition" in proved


def test_a_round_that_spends_more_than_its_share_fails() -> None:
    budget = step_budget(1, mpq(1, 10**6), 2 * 50)
    e0 = budget.epsilon0
    greedy = SparseVectorRounds(40, W / e0, 4 * W / e0, W / e0, 50, 1000, W, lambda q, updates: 0)
    assert greedy.round_loss() == 3 * e0 / 2
    failure, _ = session_privacy(
        greedy, Guarantee(budget.exp_epsilon, budget.delta, Relation.ADD_REMOVE), K
    )
    assert failure is not None and "the declared structure does not give the guarantee" in failure


def test_beyond_the_optimal_range_the_advanced_theorem_decides_or_nothing_does() -> None:
    budget = step_budget(4, mpq(1, 10**6), 2 * 40_000)
    assert budget.rule == "advanced"
    rounds = structure(budget.epsilon0, 40_000)
    failure, proved = session_privacy(
        rounds, Guarantee(budget.exp_epsilon, budget.delta, Relation.ADD_REMOVE), K
    )
    assert failure is None and "advanced composition" in proved
    with pytest.raises(NotSupported, match="neither proved nor refuted"):
        session_privacy(rounds, guarantee(mpq(3), mpq(1, 10**6)), K)


def test_the_first_answer_law_is_the_hypothesis_or_a_bucket_of_the_noise() -> None:
    rounds = structure(mpq(1, 4), 3, threshold=200)  # b_ans = 8: buckets of 4
    far_below = first_answer_law(rounds, 500, 500, 128)  # gap 0: the round survives, nearly
    assert far_below.lo(BUCKETS_PER_SIDE + 1) > mpq(99, 100)
    at = first_answer_law(rounds, 700, 500, 128)  # gap τ: about half each way
    assert mpq(1, 4) < at.lo(BUCKETS_PER_SIDE + 1) < mpq(3, 4)
    assert at.width() < mpq(1, 10**20)
    low = sum(at.lo(y) for y in at.window())
    assert 1 - mpq(1, 10**20) < low <= 1
    top = first_answer_law(rounds, 1000, 0, 128)  # clamped at n·W: no answer above the truth
    assert all(top.hi(j) == 0 for j in range(1, BUCKETS_PER_SIDE + 1))
    assert top.lo(0) > mpq(49, 100)


def test_answer_outputs_are_buckets_of_the_offset() -> None:
    rounds = structure(mpq(1, 4), 3)  # buckets of ⌈8/2⌉ = 4
    assert answer_output(rounds, 500, 600, 500) == BUCKETS_PER_SIDE + 1
    assert answer_output(rounds, 601, 600, 0) == 0
    assert answer_output(rounds, 599, 600, 0) == -1
    assert answer_output(rounds, 592, 600, 0) == -2
    assert answer_output(rounds, 10**6, 600, 0) == BUCKETS_PER_SIDE
    assert answer_output(rounds, 0, 600, 1) == -BUCKETS_PER_SIDE


def test_the_update_time_law_sums_to_one_and_decreases() -> None:
    rounds = structure(mpq(1, 4), 3)
    law, slack = update_time_law(rounds, 540, 500, 6, 128)
    assert law.low == 1 and law.high == 7
    assert mpq(1, 10**4) < slack < mpq(1, 10**3)  # Pr[an update's answer is H] = q^40·(1−q)/(1+q)
    total = sum(law.lo(t) for t in law.window())
    assert 1 - mpq(1, 10**20) < total <= 1
    assert all(law.lo(t) > law.hi(t + 1) for t in range(1, 6))
