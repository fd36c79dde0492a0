"""The bounded replay explores code with unbounded rejection loops down to a budget of path
probability: exact lower bounds per output and an exact unexplored mass, lazily through
comparisons with draws of hundreds of bits (dpplug.conformance.bounded_replay)."""

from __future__ import annotations

import numpy as np
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.bounds import ball, upper_of
from dpplug.conformance.bounded_replay import bounded_law
from dpplug.discrete_noise import BitStream, bernoulli_exp
from dpplug.errors import NotSupported
from dpplug.randomness import RandomSource

BIG = 10**40 + 7


def _die_by_rejection(source: RandomSource) -> int:
    """A fair die from three bits at a time, 6 and 7 rejected (an unbounded loop)."""
    while True:
        u = source.bits(3)
        if u < 6:
            return int(u) + 1


def test_found_mass_and_unexplored_mass_are_exact() -> None:
    budget = mpq(1, 1 << 10)
    law = bounded_law(_die_by_rejection, budget)
    assert sum(law.found.values(), mpq(0)) + law.unexplored == 1
    rounds = next(r for r in range(1, 20) if mpq(1, 4) ** r * mpq(1, 8) < budget) - 1
    explored = 1 - mpq(1, 4) ** (rounds + 1)  # the rounds whose face is still above the budget
    assert law.found == {face: explored / 6 for face in range(1, 7)}


def test_comparisons_with_huge_draws_are_lazy() -> None:
    def threshold(source: RandomSource) -> int:
        return 1 if BitStream(source).uniform(BIG) <= BIG // 3 else 0

    law = bounded_law(threshold, mpq(1, 1 << 40))
    assert law.found[1] / (law.found[1] + law.found[0]) == mpq(BIG // 3, BIG)
    assert law.unexplored < mpq(1, 1 << 30)  # only rejection rounds are cut


def test_bernoulli_exp_is_replayed_within_its_unexplored_mass() -> None:
    law = bounded_law(lambda source: bernoulli_exp(mpq(1, 3), BitStream(source)), mpq(1, 1 << 16))
    assert law.found[True] <= upper_of(lambda: (-ball(mpq(1, 3))).exp())
    assert law.found[True] + law.unexplored >= mpq(7165, 10000)  # e^(−1/3) ≈ 0.71653
    assert law.unexplored < mpq(1, 100)


def test_computing_with_a_huge_draw_is_not_replayed() -> None:
    with pytest.raises(NotSupported, match="too many to enumerate"):
        bounded_law(lambda source: source.uniform(BIG) % 2, mpq(1, 8))


def test_vectorised_draws_are_not_replayed() -> None:
    with pytest.raises(NotSupported, match="vectorised"):
        bounded_law(lambda source: int(source.bits_array(3, 2)[0]), mpq(1, 8))


def test_too_many_runs_are_refused() -> None:
    with pytest.raises(NotSupported, match="more than 10 runs"):
        bounded_law(_die_by_rejection, mpq(1, 1 << 20), max_runs=10)


def test_a_sampler_array_call_replays() -> None:
    sampler = dpplug.create("discrete-gaussian", epsilon=8, delta=mpq(1, 10**6))
    law = bounded_law(lambda s: int(sampler.sample(np.array([3]), s)[0]), mpq(1, 1 << 8))
    enclosed = sampler.enclosed_law(3)
    assert all(p <= enclosed.hi(y) for y, p in law.found.items())
