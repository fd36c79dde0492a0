"""KeepTable: the rounded-down optimal recurrence on the 2^-63 grid (keep_table.py), recomputed
independently with exact rationals, its declared δ, and its one-draw keep decisions."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gmpy2 import mpq

from dpplug.plugins.partition.keep_table import ONE, KeepTable
from dpplug.plugins.partition.optimal import keep_probabilities

from support.selectors import GRID, Words, b1_slack, floor_grid

TABLE_CASES = [
    (mpq(3, 2), mpq(1, 10**6)),
    (mpq(2), mpq(1, 10)),
    (mpq(101, 100), mpq(1, 1000)),
    (mpq(20), mpq(1, 10**12)),
    (mpq(765128314358509, 1 << 48), mpq(1, 3)),  # ⌊e·2^48⌋/2^48, as the selectors round e^1
]


def tid(case: tuple[Any, Any]) -> str:
    return f"L{float(case[0]):.4g}-delta{case[1]}"


def reference(L: Any, delta: Any, target: Callable[[int], int] | None = None) -> list[int]:
    """v(0) = 0, v(n+1) = ⌊2^63·min(L·π̂ + δ, 1 − (1 − δ − π̂)/L, 1)⌋ with π̂ = v(n)/2^63, capped by
    target(n+1) but never below v(n); until 2^63 (keep_table.py, written out with mpq)."""
    values = [0]
    while values[-1] < ONE:
        p = mpq(values[-1], ONE)
        nxt = floor_grid(min(L * p + delta, 1 - (1 - delta - p) / L, mpq(1)))
        if target is not None:
            nxt = max(min(nxt, target(len(values))), values[-1])
        values.append(nxt)
    return values


@pytest.mark.parametrize("case", TABLE_CASES, ids=tid)
def test_build_is_the_rounded_recurrence(case: tuple[Any, Any]) -> None:
    L, delta = case
    table = KeepTable.build(L, delta)
    assert list(table.values) == reference(L, delta)
    assert table.values[0] == 0 and table.values[-1] == ONE
    assert all(a <= b for a, b in zip(table.values, table.values[1:], strict=False))
    assert table.saturation == len(table.values) - 1
    assert table.values[table.saturation - 1] < ONE
    # π̂ never exceeds the exact recurrence, and saturates no earlier
    pi = keep_probabilities(L, delta)
    assert table.saturation >= len(pi) - 1
    for n in range(table.saturation + 1):
        assert table.probability(n) == mpq(table.values[n], ONE)
        assert table.probability(n) <= pi[min(n, len(pi) - 1)]
    for n in (table.saturation, table.saturation + 1, 10**12):
        assert table.probability(n) == 1


@pytest.mark.parametrize("case", TABLE_CASES, ids=tid)
def test_achieved_delta(case: tuple[Any, Any]) -> None:
    """achieved_delta is exactly the worst slack of the four inequalities of B1 at L (beyond the
    table π̂ = 1 adds no slack), and at most δ: the grid is (ln L, δ)-DP per partition."""
    L, delta = case
    table = KeepTable.build(L, delta)
    probs = [table.probability(n) for n in range(table.saturation + 2)]
    worst = max(b1_slack(lo, hi, L) for lo, hi in itertools.pairwise(probs))
    assert table.achieved_delta(L) == worst
    assert 0 < worst <= delta
    # π̂(1) = ⌊δ·2^63⌋/2^63 and the first pair alone needs δ ≥ π̂(1)
    assert table.values[1] == floor_grid(delta)
    assert worst >= probs[1]


def slow_curve(n: int) -> int:
    """A cap well below the optimum that reaches 1 at n = 40: n²/1600 on the grid."""
    return min(ONE, floor_grid(mpq(n * n, 1600)))


def erratic_curve(n: int) -> int:
    """A non-monotone cap (the table must stay non-decreasing)."""
    return ONE if n >= 30 else floor_grid(mpq(n % 7 + 1, 64))


@pytest.mark.parametrize("case", TABLE_CASES[:3], ids=tid)
@pytest.mark.parametrize("target", [slow_curve, erratic_curve])
def test_build_with_target(case: tuple[Any, Any], target: Callable[[int], int]) -> None:
    """A target curve only lowers the table (it never exceeds the target unless the previous
    value does) and the table stays (ln L, δ)-DP, with the δ it uses declared."""
    L, delta = case
    table = KeepTable.build(L, delta, target)
    assert list(table.values) == reference(L, delta, target)
    plain = KeepTable.build(L, delta)
    for n in range(1, table.saturation + 1):
        v = table.values[n]
        assert v <= max(target(n), table.values[n - 1])
        assert v <= plain.values[min(n, plain.saturation)]
    achieved = table.achieved_delta(L)
    assert achieved <= delta


def test_delta_below_grid_resolution() -> None:
    with pytest.raises(ValueError, match="2\\^-63"):
        KeepTable.build(mpq(2), mpq(1, 1 << 64))
    assert KeepTable.build(mpq(2), GRID).values[1] == 1  # δ = 2^-63 is one grid step


@pytest.mark.parametrize("case", TABLE_CASES[:3], ids=tid)
def test_keep_is_exact_threshold_on_one_draw(case: tuple[Any, Any]) -> None:
    """A partition with n units is kept iff its 63-bit draw u < v(n): Pr[keep] = v(n)/2^63
    exactly. Checked at both sides of every boundary, n = 0 … saturation + 1."""
    L, delta = case
    table = KeepTable.build(L, delta)
    units, draws, expected = [], [], []
    for n in range(table.saturation + 2):
        v = table.values[min(n, table.saturation)]
        for u in (v - 1, v, 0, ONE - 1):
            if 0 <= u < ONE:
                units.append(n)
                draws.append(u)
                expected.append(u < v)
    source = Words(draws)
    kept = table.keep(np.array(units, dtype=np.int64), source)
    assert source.draws == len(units)
    assert source.buffer == b""
    assert kept.tolist() == expected
