"""The sparse-vector structure's exact round law (:mod:`dpplug.kinds.query_releaser.sparse_vector`):
against a direct sum over the threshold noise, normalised, and the two-sided AboveThreshold bound
checked on every short gap sequence of a small structure."""

from __future__ import annotations

import itertools
import math
from functools import cache

import pytest
from gmpy2 import mpq

from dpplug.bounds import Ball, precise, upper
from dpplug.kinds.query_releaser.sparse_vector import SparseVectorRounds


def rounds(threshold: int, threshold_scale: object, query_scale: object) -> SparseVectorRounds:
    return SparseVectorRounds(
        threshold, mpq(threshold_scale), mpq(query_scale), mpq(1), 3, 100, 1, lambda q, updates: 0
    )


def direct(r: SparseVectorRounds, gaps: list[int], radius: int = 600) -> float:
    """E_ρ[Π_i B(g_i, τ + ρ)] summed over |ρ| ≤ radius in floats (the rest is below 1e-100)."""
    s, q = math.exp(-1 / float(r.threshold_scale)), math.exp(-1 / float(r.query_scale))

    def cdf(x: int) -> float:
        return 1 - q ** (x + 1) / (1 + q) if x >= 0 else q ** (-x) / (1 + q)

    total = 0.0
    for rho in range(-radius, radius + 1):
        y, p = r.threshold + rho, (1 - s) / (1 + s) * s ** abs(rho)
        for g in gaps:
            p *= cdf(y - g - 1) * cdf(y + g - 1)
        total += p
    return total


@pytest.mark.parametrize(
    ("threshold", "threshold_scale", "query_scale"),
    [(3, 2, 4), (0, mpq(3, 2), 5), (-2, 2, mpq(1, 2)), (7, 1, 2)],
)
@pytest.mark.parametrize("gaps", [[], [0], [5], [-3], [2, -4], [1, 1, 9], [10, -10, 0, 3]])
def test_continuing_is_the_sum_over_the_threshold_noise(
    threshold: int, threshold_scale: object, query_scale: object, gaps: list[int]
) -> None:
    r = rounds(threshold, threshold_scale, query_scale)
    with precise(128):
        found = r.continuing(gaps)
    assert found.rad() < 1e-30
    assert float(found.mid()) == pytest.approx(direct(r, gaps), abs=1e-12)


def test_update_time_is_a_law() -> None:
    r = rounds(3, 2, 4)
    with precise(128):
        law = r.update_time(4, 5)
        total: Ball = sum(law[1:], law[0])
    assert len(law) == 6 and all(p > 0 for p in law)
    assert total.contains(1)


def test_losses_are_the_declared_scales_ratios() -> None:
    r = SparseVectorRounds(10, mpq(8), mpq(16), mpq(4), 3, 100, 4, lambda q, updates: 0)
    assert r.round_loss() == mpq(4, 8) + mpq(8, 16)
    assert r.answer_loss() == 1


@pytest.mark.parametrize("bad", [(0, 1, 1), (1, -1, 1), (1, 1, 0)])
def test_scales_must_be_positive(bad: tuple[int, int, int]) -> None:
    with pytest.raises(ValueError, match="noise scales > 0"):
        SparseVectorRounds(1, *map(mpq, bad), 3, 100, 1, lambda q, updates: 0)


def test_the_round_bound_holds_on_every_short_gap_sequence() -> None:
    """Every round outcome (ends at query i, or survives) of every gap sequence of length ≤ 3 in
    [−5, 5], against every neighbour moved by at most W = 1 per query: the loss is at most
    ε_r = W/b_thr + 2W/b_q = 1, and above W/b_thr = 1/2 somewhere (the query noise's share is
    needed, so the check can fail)."""
    r = rounds(2, 2, 4)

    @cache
    def survives(gaps: tuple[int, ...]) -> Ball:
        with precise(128):
            return r.continuing(list(gaps))

    def outcomes(gaps: tuple[int, ...]) -> list[Ball]:
        ends = [survives(gaps[: i - 1]) - survives(gaps[:i]) for i in range(1, len(gaps) + 1)]
        return [*ends, survives(gaps)]

    worst = mpq(0)
    for length in (1, 2, 3):
        for gaps in itertools.product(range(-5, 6), repeat=length):
            laws = outcomes(gaps)
            for moves in itertools.product((-1, 0, 1), repeat=length):
                other = outcomes(tuple(g + m for g, m in zip(gaps, moves, strict=True)))
                for p, q in zip(laws, other, strict=True):
                    with precise(128):
                        worst = max(worst, upper((p / q).log()))
    assert r.round_loss() == 1
    assert mpq(1, 2) < worst <= 1
