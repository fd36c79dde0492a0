"""oblivious-laplace: a dyadic alias table of the clamped discrete Laplace noise mixed with the
uniform law (docs/mechanisms.md#oblivious-laplace). Checked exactly: the alias table reproduces
its weights, the declared law is what every (column, position) pair gives through the code's own
vectorised layout, the table is within the total variation Balcer–Vadhan's Lemma 3.2 allows, the
mixture is λ-DP for every pair of counts, the window is the smallest of mass 1 − δ/2, and every
count costs two draws whatever the data."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.conformance.probes.sampler.probe import exact_worst_tails, sampler_privacy
from dpplug.plugins.samplers.alias_table import build
from dpplug.plugins.samplers.oblivious_laplace import clamped_mixture

CASES = [
    {"n": 1, "epsilon": Fraction(1, 2), "gamma": Fraction(1, 2)},
    {"n": 4, "epsilon": 1, "gamma": Fraction(1, 8)},
    {"n": 6, "epsilon": Fraction(1, 1000), "gamma": Fraction(1, 4)},
    {"n": 12, "epsilon": 3, "gamma": Fraction(1, 1000)},
    {"n": 40, "epsilon": Fraction(1, 10)},
    {"n": 64, "epsilon": Fraction(1, 64), "gamma": Fraction(1, 10**6)},
]
#: Cases whose (column, position) pairs are few enough to run every one.
SMALL = CASES[:3]


def create(case: dict[str, Any]) -> Any:
    return dpplug.create("oblivious-laplace", **case)


def test_alias_tables_reproduce_their_weights_exactly() -> None:
    rng = random.Random(7)  # test inputs only
    for _ in range(200):
        bits = rng.randint(0, 6)
        outcomes = rng.randint(1, 1 << bits)
        capacity = rng.choice([1, 3, 1 << 20, (1 << 62) + 5])
        cuts = sorted(rng.randint(0, capacity << bits) for _ in range(outcomes - 1))
        weights = [b - a for a, b in zip([0, *cuts], [*cuts, capacity << bits], strict=True)]
        table = build(weights, bits)
        assert table.weights() == weights and table.capacity == capacity
        assert all(0 <= t <= capacity for t in table.threshold.tolist())


@pytest.mark.parametrize("case", SMALL, ids=str)
def test_declared_law_is_what_every_column_and_position_give(case: dict[str, Any]) -> None:
    """Run the code's layout on all 2^(m+B) (column, position) pairs at every count, and check
    that within a column the output never decreases with the position."""
    sampler = create(case)
    m, b, n = sampler.table.column_bits, sampler.position_bits, sampler.n
    column = np.repeat(np.arange(1 << m, dtype=np.int64), 1 << b)
    position = np.tile(np.arange(1 << b, dtype=np.int64), 1 << m)
    for count in range(n + 1):
        counts = np.full(column.size, count, dtype=np.int64)
        out = clamped_mixture(counts, column, position, sampler._columns, n)
        assert bool(np.all(np.diff(out.reshape(1 << m, 1 << b), axis=1) >= 0))
        tally = np.bincount(out, minlength=n + 1)
        assert {z: mpq(int(t), column.size) for z, t in enumerate(tally)} == dict(
            sampler.pmf(count)
        )


@pytest.mark.parametrize("case", CASES, ids=str)
def test_table_is_within_the_mixing_lemmas_total_variation(case: dict[str, Any]) -> None:
    """TV(Z̃, Z) = W_0/U − Pr[Z = 0] ≤ δ = (λ − 1)·2^s/((λ + 1)·K), recomputed here from the
    table's weights and the folded discrete Laplace law."""
    sampler = create(case)
    alpha, n, w = sampler.alpha, sampler.n, sampler.window
    weights = sampler.table.weights()
    units = sum(weights)
    assert units == sampler.table.capacity << sampler.table.column_bits

    def ideal(j: int) -> Any:
        k = abs(j)
        return alpha**k / (1 + alpha) if k == n else (1 - alpha) / (1 + alpha) * alpha**k

    def table(j: int) -> Any:
        return mpq(weights[j + w], units) if abs(j) <= w else mpq(0)

    distance = sum((max(mpq(0), ideal(j) - table(j)) for j in range(-n, n + 1)), mpq(0))
    distance_other_way = sum((max(mpq(0), table(j) - ideal(j)) for j in range(-n, n + 1)), mpq(0))
    assert distance == distance_other_way == sampler.total_variation <= sampler.delta
    lam = 1 / alpha
    capacity = sampler.table.capacity
    assert sampler.delta == (lam - 1) * (1 << sampler.spread_bits) / ((lam + 1) * capacity)
    gamma = mpq((n + 1) << sampler.spread_bits, 1 << sampler.position_bits)
    assert gamma <= case.get("gamma", Fraction(1, 1 << 20)) < 2 * gamma


@pytest.mark.parametrize("case", CASES, ids=str)
def test_window_is_the_smallest_holding_mass_one_minus_half_delta(case: dict[str, Any]) -> None:
    sampler = create(case)
    alpha, w, half = sampler.alpha, sampler.window, sampler.delta / 2

    def beyond(v: int) -> Any:  # the folded law's mass outside [−v, v]
        return 0 if v >= sampler.n else 2 * alpha ** (v + 1) / (1 + alpha)

    assert beyond(w) <= half
    assert w == 0 or beyond(w - 1) > half


@pytest.mark.parametrize("case", CASES, ids=str)
def test_exactly_pure_with_the_declared_ratio(case: dict[str, Any]) -> None:
    sampler = create(case)
    report = sampler_privacy(sampler)
    assert report.passed and report.totals_exact, report.failures
    assert sampler.guarantee.exp_epsilon == 1 / sampler.alpha
    assert report.worst_ratio <= sampler.guarantee.exp_epsilon


@pytest.mark.parametrize("case", CASES, ids=str)
def test_declared_accuracy_is_sound_and_tight(case: dict[str, Any]) -> None:
    sampler = create(case)
    for beta in (Fraction(1, 2), Fraction(1, 20), Fraction(1, 10**4)):
        a = sampler.accuracy(beta).per_query.a
        tail, below = exact_worst_tails(sampler, [a, max(a - 1, 0)], 64)
        assert tail <= beta
        if a > 0:  # the smallest such a: one less fails at some count
            assert below > beta


@pytest.mark.parametrize("case", CASES, ids=str)
def test_two_draws_per_count_whatever_the_counts(case: dict[str, Any]) -> None:
    sampler = create(case)
    n = sampler.n
    for counts in (np.zeros(50), np.full(50, n), np.arange(50) % (n + 1), np.array([])):
        source = dpplug.SeededSource(3)
        sampler.sample(counts.astype(np.int64), source)
        assert source.draws == 2 * counts.size
    assert sampler.strict_time


def test_noise_variance_is_the_exact_laws() -> None:
    sampler = create(CASES[3])
    for count in (0, 5, 12):
        law = sampler.pmf(count)
        mean = sum((p * (z - count) for z, p in law.items()), mpq(0))
        second = sum((p * (z - count) ** 2 for z, p in law.items()), mpq(0))
        assert sampler.noise_std(count) ** 2 == pytest.approx(float(second - mean**2), rel=1e-12)


def test_sampled_law_matches_the_pmf() -> None:
    """χ² of 200,000 draws at every count of n = 4 against the exact pmf; false alarm 1e-7 per
    count, and the same draws reject the law of the neighbouring count (power)."""
    from scipy.stats import chisquare

    sampler = create(CASES[1])
    for count in range(5):
        draws = sampler.sample(np.full(200_000, count), dpplug.SeededSource(40 + count))
        observed = np.bincount(draws, minlength=5)
        for other, reject in ((count, False), (min(count + 1, 4) if count < 4 else 3, True)):
            expected = [float(sampler.pmf(other)[z]) * draws.size for z in range(5)]
            assert bool(chisquare(observed, expected).pvalue < 1e-7) is reject


def test_large_parameters_are_refused_with_what_to_change() -> None:
    with pytest.raises(dpplug.BadParameter, match="larger gamma or a smaller n"):
        dpplug.create("oblivious-laplace", n=1 << 32, epsilon=1, gamma=Fraction(1, 1 << 40))
    sampler = dpplug.create("oblivious-laplace", n=10**6, epsilon=Fraction(1, 8), gamma=2**-30)
    assert sampler.position_bits <= 63 and sampler.window < 400
