"""PAVA in exact rationals (Suresh 2019, L1 and H5): the KKT conditions of the non-increasing
weighted least-squares fit on random instances, equality with a brute-force fit on small ones,
and the rounding rule."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from gmpy2 import mpq

from dpplug.plugins.anonymized.pava import isotonic_non_increasing, pava_blocks, round_non_negative


def kkt_problems(y: list[Fraction], w: list[int], x: list[Fraction]) -> list[str]:
    """The KKT conditions of min Σ w_i (x_i − y_i)² s.t. x_1 ≥ … ≥ x_n, exactly: x feasible, and
    with g_i = w_i (y_i − x_i) the prefix sums G_k = Σ_{i≤k} g_i are ≤ 0 everywhere (the
    multipliers of x_k ≥ x_{k+1} are −G_k ≥ 0), = 0 at the end, and = 0 wherever the
    constraint is slack (complementary slackness)."""
    problems = []
    if any(a < b for a, b in itertools.pairwise(x)):
        problems.append("not non-increasing")
    prefix = list(itertools.accumulate(wi * (yi - xi) for wi, yi, xi in zip(w, y, x, strict=True)))
    if prefix[-1] != 0:
        problems.append(f"total gradient {prefix[-1]} ≠ 0")
    for k in range(len(x) - 1):
        if prefix[k] > 0:
            problems.append(f"negative multiplier at {k}")
        if x[k] > x[k + 1] and prefix[k] != 0:
            problems.append(f"slack constraint {k} with multiplier {prefix[k]}")
    return problems


@pytest.mark.parametrize("seed", range(200))
def test_random_weighted_instances_satisfy_kkt(seed: int) -> None:
    rng = random.Random(seed)
    size = rng.randint(1, 40)
    y = [Fraction(rng.randint(-50, 50), rng.randint(1, 7)) for _ in range(size)]
    w = [rng.randint(1, 30) ** 2 for _ in range(size)]
    x = [Fraction(int(v.numerator), int(v.denominator)) for v in isotonic_non_increasing(y, w)]
    assert kkt_problems(y, w, x) == []


def brute_force(y: list[int], w: list[int]) -> list[Fraction]:
    """The best non-increasing fit among all splits into consecutive blocks at their weighted
    means (the optimum is one of them)."""
    best: tuple[Fraction, list[Fraction]] | None = None
    n = len(y)
    for cuts in itertools.product((False, True), repeat=n - 1):
        fit: list[Fraction] = []
        start = 0
        for end in [i + 1 for i, cut in enumerate(cuts) if cut] + [n]:
            mean = Fraction(sum(w[i] * y[i] for i in range(start, end)), sum(w[start:end]))
            fit += [mean] * (end - start)
            start = end
        if any(a < b for a, b in itertools.pairwise(fit)):
            continue
        cost = sum(wi * (fi - yi) ** 2 for wi, fi, yi in zip(w, fit, y, strict=True))
        if best is None or cost < best[0]:
            best = (cost, fit)
    assert best is not None
    return best[1]


@pytest.mark.parametrize("seed", range(150))
def test_small_instances_equal_the_brute_force_fit(seed: int) -> None:
    rng = random.Random(1000 + seed)
    size = rng.randint(1, 8)
    y = [rng.randint(-6, 6) for _ in range(size)]
    w = [rng.randint(1, 4) for _ in range(size)] if seed % 2 else [1] * size
    expected = brute_force(y, w)
    assert [
        Fraction(int(v.numerator), int(v.denominator)) for v in isotonic_non_increasing(y, w)
    ] == expected


def test_blocks_keep_integers_and_totals() -> None:
    blocks = pava_blocks([3, 5, 1, 4], [1, 1, 1, 1])
    assert blocks == [(8, 2, 2), (5, 2, 2)]  # means 4 and 5/2
    assert all(isinstance(s, int) for s, _, _ in blocks)
    with pytest.raises(ValueError, match="positive"):
        pava_blocks([1], [0])


@pytest.mark.parametrize(
    ("value", "rounded"),
    [
        (mpq(-3, 2), 0),
        (0, 0),
        (mpq(1, 2), 1),
        (mpq(3, 2), 2),
        (mpq(5, 2), 3),
        (mpq(7, 3), 2),
        (4, 4),
    ],
)
def test_rounding_is_half_up_after_clipping_at_zero(value: object, rounded: int) -> None:
    assert round_non_negative(value) == rounded


def test_rounding_a_non_increasing_fit_keeps_it_non_increasing() -> None:
    rng = random.Random(7)
    for _ in range(100):
        y = [rng.randint(-20, 40) for _ in range(30)]
        fitted = [round_non_negative(v) for v in isotonic_non_increasing(y)]
        assert all(a >= b >= 0 for a, b in itertools.pairwise(fitted))
