"""The releasers' declared accuracy is sound and tight (issue 16): within 10% of the true worst
case over every dataset of at most n rows, computed here independently of the releasers' code
(docs/mechanisms.md#histogram-releasers).

- **Stability, basic** (bins independent): the true simultaneous failure probability of a dataset
  is 1 − Π_x (1 − f(c_x)), with f the exact failure probability of one bin from the sampler's
  scaled CDF; its maximum over datasets is a knapsack over the counts (at most n rows), solved
  by dynamic programming. Soundness is checked exactly: the largest Σ_x f(c_x) (which bounds
  the failure) is at most β at the declared a, in rationals. Tightness: the declared a is at
  most 10% above the smallest a whose worst case (in floats, as log(1 − f) sums) is ≤ β.
- **Compact**: values at distinct labels are pairwise independent (the polynomial is (n+1)-wise
  independent), so the failure probability is at least S − S²/2 with S = Σ_x f_x (Bonferroni);
  soundness is the exact largest S at the declared a.
- **Pure sparse**: lower bounds on the true worst case. Per query: a bin of count c fails if its
  noise exceeds a (dropped or not) and in the random histogram unless drawn, so the failure is
  at least β₂(1 − n/|X|) + (1 − β₂)(Pr[|M(c) − c| > a] − δ). Threshold: on the dataset {x: c},
  x is dropped if the n-th largest empty bin is above it (Poisson approximation of the binomial,
  off by at most m·q² ≈ 10⁻¹⁵), so a count of T/1.1 still fails too often. All bins: on the
  empty dataset, the largest empty bin is released unless tied with the (n+1)-th.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from functools import cache
from typing import Any

import pytest
from gmpy2 import mpq
from scipy.stats import poisson

import dpplug

BETA = Fraction(1, 20)


def knapsack(values: list[Any], capacity: int, zero: Any) -> Any:
    """max Σ values[c] over multisets of counts c ≥ 1 with Σ c ≤ capacity (values[0] unused)."""
    best = [zero] * (capacity + 1)
    for w in range(1, capacity + 1):
        best[w] = max([best[w - 1], *(best[w - c] + values[c] for c in range(1, w + 1))])
    return best[capacity]


def smallest(holds: Any, high: int) -> int:
    """The smallest a in [0, high] with holds(a), for holds monotone."""
    low = 0
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle + 1, high)
    return low


def cdf(sampler: Any, count: int) -> Any:
    return lambda z: int(sampler.scaled_cdf(z, count))


# --- stability ----------------------------------------------------------------------------------


def stability_failure(releaser: Any, count: int, a: int) -> Any:
    """Exactly: released (noisy > t) more than a off, or dropped (≤ t) while count > a."""
    sampler, t, d = releaser.sampler, releaser.threshold, releaser.sampler.d
    F = cdf(sampler, count)
    bad = d - F(max(t, count + a))  # released above count + a
    if count - a - 1 > t:
        bad += F(count - a - 1) - F(t)  # released below count − a
    if count > a:
        bad += F(t)  # dropped
    return mpq(bad, d)


STABILITY = [
    (1000, Fraction(1), Fraction(1, 10**6)),
    (1000, Fraction(1, 10), Fraction(1, 10**6)),
    (300, Fraction(1, 2), Fraction(1, 10**9)),
]


@pytest.mark.parametrize(("n", "epsilon", "delta"), STABILITY, ids=str)
def test_stability_simultaneous_bound_is_sound_and_within_ten_percent(
    n: int, epsilon: Fraction, delta: Fraction
) -> None:
    releaser = dpplug.create(
        "stability-histogram", universe="range:0:9999", n=n, epsilon=epsilon, delta=delta
    )
    declared = releaser.accuracy(BETA).simultaneous.a

    def failures(a: int) -> list[Any]:
        return [mpq(0)] + [stability_failure(releaser, c, a) for c in range(1, n + 1)]

    assert knapsack(failures(declared), n, mpq(0)) <= BETA  # sound, exactly

    def worst_at_most_beta(a: int) -> bool:
        logs = [-math.log1p(-float(f)) if f < 1 else math.inf for f in failures(a)]
        return -math.expm1(-knapsack(logs, n, 0.0)) <= BETA

    true = smallest(worst_at_most_beta, declared)
    assert true <= declared <= 1.1 * true, (true, declared)


# --- basic and compact (dense) ------------------------------------------------------------------


def two_sided(sampler: Any, count: int, a: int) -> Any:
    F = cdf(sampler, count)
    return mpq(F(count - a - 1) + sampler.d - F(count + a), sampler.d)


def dense_worst(size: int, n: int, empty: Any, nonempty: list[Any]) -> Any:
    """max over datasets of Σ_x f(c_x) over all *size* labels: size·f(0) plus the best gains
    f(c) − f(0) of at most n rows (n ≤ size here, so any multiset of counts fits)."""
    gains = [mpq(0)] + [max(mpq(0), f - empty) for f in nonempty[1:]]
    return size * empty + knapsack(gains, n, mpq(0))


DENSE = [("basic-histogram", {}), ("basic-histogram", {"sampler": "geosample"})]


@pytest.mark.parametrize(("name", "extra"), DENSE, ids=["fixedpoint", "geosample"])
def test_basic_simultaneous_bound_is_sound_and_within_ten_percent(
    name: str, extra: dict[str, Any]
) -> None:
    size, n = 200, 60
    releaser = dpplug.create(name, universe=f"range:0:{size - 1}", n=n, epsilon=1, **extra)
    sampler, declared = releaser.sampler, releaser.accuracy(BETA).simultaneous.a

    def failures(a: int) -> list[Any]:
        return [two_sided(sampler, c, a) for c in range(n + 1)]

    exact = failures(declared)
    assert dense_worst(size, n, exact[0], exact) <= BETA  # the union bound, exactly

    def worst_at_most_beta(a: int) -> bool:  # independent bins: 1 − Π(1 − f)
        logs = [-math.log1p(-float(f)) for f in failures(a)]
        gains = [0.0] + [max(0.0, g - logs[0]) for g in logs[1:]]
        return -math.expm1(-(size * logs[0] + knapsack(gains, n, 0.0))) <= BETA

    true = smallest(worst_at_most_beta, declared)
    assert true <= declared <= 1.1 * true, (true, declared)


@pytest.mark.parametrize("sampler", ["fastsample", "geosample"])
def test_compact_simultaneous_bound_is_sound_and_within_ten_percent(sampler: str) -> None:
    size, n = 200, 40
    releaser = dpplug.create(
        "compact-histogram", universe=f"range:0:{size - 1}", n=n, epsilon=1, sampler=sampler
    )
    law, modulus, declared = releaser.law, releaser.modulus, releaser.accuracy(BETA).simultaneous.a

    def union(a: int) -> Any:  # labels read M₀ (empty) or the sampler's noise (nonempty)
        empty = 1 - mpq(law.threshold(a), modulus)
        nonempty = [empty] + [two_sided(releaser.sampler, c, a) for c in range(1, n + 1)]
        return dense_worst(size, n, empty, nonempty)

    assert union(declared) <= BETA  # sound whatever the dependence between labels
    true_at_least = smallest(lambda a: union(a) - union(a) ** 2 / 2 <= BETA, declared)
    assert declared <= 1.1 * true_at_least, (true_at_least, declared)


# --- pure sparse --------------------------------------------------------------------------------


@cache
def pure_sparse(n: int, epsilon: Fraction) -> Any:
    return dpplug.create(
        "pure-sparse-histogram", universe=f"range:0:{2**64 - 1}", n=n, epsilon=epsilon
    )


PURE = [(1000, Fraction(1)), (1000, Fraction(1, 4)), (300, Fraction(1, 2))]


@pytest.mark.parametrize(("n", "epsilon"), PURE, ids=str)
def test_pure_sparse_per_query_bound_is_within_ten_percent(n: int, epsilon: Fraction) -> None:
    releaser = pure_sparse(n, epsilon)
    accuracy = releaser.accuracy(BETA)
    size, beta2 = releaser.universe.size, releaser.beta2
    delta = mpq(1, 1 << releaser.delta_bits)
    count = (accuracy.threshold + n) // 2  # above the threshold, noise two-sided: not clamped
    assert accuracy.threshold < count - accuracy.per_query.a < count + accuracy.per_query.a < n

    def lower(a: int) -> Any:
        miss = two_sided(releaser.sampler, count, a)
        return beta2 * (1 - mpq(n, size)) + (1 - beta2) * (miss - delta)

    true_at_least = smallest(lambda a: lower(a) <= BETA, n)
    # within 10%, or one unit where 10% is less than one (a is an integer)
    tight = max(1.1 * true_at_least, true_at_least + 1)
    assert accuracy.per_query.a <= tight, (true_at_least, accuracy.per_query.a)


@pytest.mark.parametrize(("n", "epsilon"), PURE, ids=str)
def test_pure_sparse_threshold_and_simultaneous_are_within_ten_percent(
    n: int, epsilon: Fraction
) -> None:
    releaser = pure_sparse(n, epsilon)
    accuracy = releaser.accuracy(BETA)
    sampler, d, size = releaser.sampler, releaser.sampler.d, releaser.universe.size
    beta2, delta, empties = float(releaser.beta2), 2.0**-releaser.delta_bits, size - 1
    a = accuracy.per_query.a

    def at_least(w: int) -> float:  # Pr[M(0, U) ≥ w]
        return float(mpq(d - int(sampler.scaled_cdf(w - 1, 0)), d))

    def fails_at_least(count: int) -> float:  # the dataset {x: count}
        total = 0.0
        for v in range(max(0, count - 3 * a - 40), min(n, count + 3 * a + 40) + 1):
            F = cdf(sampler, count)
            p = float(mpq(F(v) - F(v - 1), d))
            dropped = poisson.sf(n - 1, empties * at_least(v + 1))  # n-th largest empty > v
            total += p * (1.0 if abs(v - count) > a else dropped)
        return beta2 * (1 - n / size) + (1 - beta2) * (total - delta)

    # The true threshold is at least T/1.1 (a count there fails too often), and the count just
    # above T does not fail (this lower bound is consistent with soundness).
    assert fails_at_least(math.ceil(accuracy.threshold / 1.1)) > BETA
    assert fails_at_least(accuracy.threshold + 1) <= BETA

    ties = sum(  # the largest n + 1 empty bins all equal v: then none is released
        min(
            poisson.sf(n, empties * (at_least(v) - at_least(v + 1))),
            math.exp(empties * math.log1p(-at_least(v + 1))),
        )
        for v in range(n + 1)
    )

    def released_top(top: int) -> float:  # empty dataset: the largest empty bin exceeds top
        top_above = -math.expm1(empties * math.log1p(-at_least(top + 1)))
        return (1 - beta2) * (top_above - ties - delta)

    true_at_least = smallest(lambda top: released_top(top) <= BETA, n)
    assert true_at_least <= accuracy.simultaneous.a <= 1.1 * true_at_least


def test_pure_sparse_accuracy_is_at_most_the_theorem_6_6_bounds() -> None:
    """Sanity against the paper: the declared bounds are below Thm 6.6's (a₁ at β/3 per query on
    counts > 2a₂, 2a₂ for all bins, a₂ the basic histogram's a at β/(3|X|))."""
    releaser = pure_sparse(1000, Fraction(1))
    accuracy, sampler, size = releaser.accuracy(BETA), releaser.sampler, releaser.universe.size
    a2 = sampler.accuracy(BETA / 3 / size).per_query.a
    assert accuracy.per_query.a <= sampler.accuracy(BETA / 3).per_query.a
    assert accuracy.threshold < 2 * a2 and accuracy.simultaneous.a < 2 * a2


# --- a release that covers no count says so -----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("pure-sparse-histogram", {"universe": f"range:0:{2**64 - 1}", "n": 1000, "epsilon": 0.05}),
        ("stability-histogram", {"universe": "bytes:8", "n": 30, "epsilon": 0.5, "delta": 1e-9}),
    ],
)
def test_a_releaser_whose_threshold_is_above_n_warns_with_the_n_and_epsilon_that_fix_it(
    name: str, params: dict[str, Any]
) -> None:
    with pytest.warns(dpplug.AccuracyWarning, match="no bin is reliably released") as caught:
        releaser = dpplug.create(name, **params)
    assert releaser.accuracy(releaser.params["beta"]).threshold >= releaser.n
    text = str(caught[0].message)
    n_from = int(text.split("from n = ")[1].split(" ")[0].replace(",", ""))
    epsilon_from = Fraction(text.split("from ε = ")[1].split(" ")[0])

    def threshold_below_n(**changes: Any) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpplug.AccuracyWarning)
            other = dpplug.create(name, **{**params, **changes})
        return bool(other.accuracy(other.params["beta"]).threshold < other.n)

    assert threshold_below_n(n=n_from) and not threshold_below_n(n=n_from - 1)
    assert threshold_below_n(epsilon=epsilon_from)
    assert not threshold_below_n(epsilon=epsilon_from * Fraction(9, 10))  # nearly the smallest


def test_a_releaser_that_covers_counts_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpplug.AccuracyWarning)
        pure_sparse(1000, Fraction(1))
        dpplug.create("stability-histogram", universe="bytes:8", n=300, epsilon=1, delta=1e-9)
