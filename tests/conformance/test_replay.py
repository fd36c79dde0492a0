"""The replay finds the exact law of what code does, with and without split hints, and reports
code whose output is out of place inside a large draw."""

from __future__ import annotations

import pytest
from gmpy2 import mpq

from dpplug.conformance.replay import ImplementationMismatch, implementation_law
from dpplug.errors import NotSupported
from dpplug.randomness import RandomSource

BIG = 10**40 + 7


def _coin_then_threshold(source: RandomSource) -> int:
    """A fair bit, then a large uniform draw compared with thresholds: output in {0, 1, 2, 3}."""
    high = source.bits(1)
    u = source.uniform(BIG)
    return 2 * high + (1 if u > BIG // 3 else 0)


def test_small_and_large_draws_give_the_exact_law() -> None:
    replay = implementation_law(_coin_then_threshold)
    above = mpq(BIG - BIG // 3, BIG)
    assert replay.law == {0: (1 - above) / 2, 1: above / 2, 2: (1 - above) / 2, 3: above / 2}


def test_the_power_on_the_code_is_that_of_the_random_points_in_the_largest_piece() -> None:
    """The most probable piece (u > BIG/3 after either bit: probability 1/3) is checked at 16
    random points, which see a deviation on half of it (total variation 1/6) with probability
    1 − 2^−16 but one of total variation 1/3·(1 − 2^(−1/16)) ≈ 0.0142 only with 1/2; a draw
    small enough to run every value leaves nothing unseen."""
    assert implementation_law(_coin_then_threshold).code_tv == pytest.approx(
        (1 - mpq(BIG // 3, BIG)) / 2 * (1 - 2 ** (-1 / 16))
    )
    assert implementation_law(lambda source: source.bits(3) > 4).code_tv == 0


@pytest.mark.parametrize("hints", [[BIG // 3], [5, BIG // 3, BIG - 2], [BIG // 2]])
def test_split_hints_change_the_cost_not_the_law(hints: list[int]) -> None:
    plain = implementation_law(_coin_then_threshold)
    hinted = implementation_law(_coin_then_threshold, splits=lambda draw: hints)
    assert hinted.law == plain.law


def test_a_value_out_of_place_inside_a_piece_is_a_finding() -> None:
    def stripes(source: RandomSource) -> int:
        return source.uniform(BIG) % 2  # agrees at the ends of every even-length run

    with pytest.raises(ImplementationMismatch, match="not monotone"):
        implementation_law(stripes, splits=lambda draw: [BIG // 2 - 1])


def test_a_large_draw_followed_by_another_cannot_be_replayed() -> None:
    def two_large(source: RandomSource) -> int:
        return int(source.uniform(BIG) > source.uniform(BIG))

    with pytest.raises(NotSupported, match="draws again"):
        implementation_law(two_large)
