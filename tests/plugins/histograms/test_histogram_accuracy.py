"""Empirical accuracy of the releasers on synthetic Zipf data: the per-query and simultaneous
(a, β) attached to each release hold (Balcer & Vadhan, full version Thm 5.3, 5.6, 6.10/6.11, 8.3;
docs/mechanisms.md).

Each releaser releases the same dataset R times from one fixed seed. For a bin x (per query:
bins with true count above the declared threshold; for the dense releasers also a count-1 and
an empty bin) the number of releases with |released − true| > a is Bin(R, p) with p ≤ β if the
promise holds; so is the number of releases whose largest error over all labels exceeds the
simultaneous a. Each count is checked with the one-sided binomial test (scipy) at false-alarm
rate 1e-8; the file runs fewer than 30 such tests, so a correct implementation fails it with
probability below 1e-6 (and, the seeds being fixed, reproducibly).

Power: the same releases fail the same test against a deliberately under-declared a, a quarter
of the declared one, where the true failure rates are 0.3–1.

Exact counterparts, without sampling: the per-query failure probability of one bin, for every
true count where the promise applies, from the sampler's pmf (and M₀'s S_v intervals for the
compact histogram's empty bins); and the simultaneous failure probability on the Zipf data for
the releasers whose bins are independent (basic, stability).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.kinds.histogram_releaser.outputs import (
    CompactHistogram,
    DenseHistogram,
    SparseHistogram,
)

from support.histograms import exceeds, zipf_counts

FALSE_ALARM = 1e-8
BETA = Fraction(1, 20)


@dataclass(frozen=True)
class Case:
    releaser: str
    params: tuple[tuple[str, Any], ...]
    size: int
    exponent: float
    releases: int


CASES = {
    "basic": Case("basic-histogram", (("n", 500), ("epsilon", 1)), 1000, 1.3, 2000),
    "stability": Case(
        "stability-histogram",
        (("n", 500), ("epsilon", 1), ("delta", Fraction(1, 10**6))),
        1000,
        1.3,
        2000,
    ),
    "pure-sparse": Case("pure-sparse-histogram", (("n", 250), ("epsilon", 1)), 1000, 1.6, 600),
    "compact": Case("compact-histogram", (("n", 100), ("epsilon", 1)), 500, 1.3, 500),
    "blanket": Case("blanket-sparse-histogram", (("n", 500), ("epsilon", 1)), 1000, 1.3, 2000),
}


@dataclass(frozen=True)
class Errors:
    true: list[int]
    errors: npt.NDArray[np.int64]  # releases × labels: |released − true|
    accuracy: dpplug.Accuracy


@cache
def errors(name: str) -> Errors:
    case = CASES[name]
    params = dict(case.params)
    releaser = dpplug.create(
        case.releaser, universe=f"range:0:{case.size - 1}", beta=BETA, **params
    )
    true = zipf_counts(params["n"], case.size, case.exponent)
    data = {label: count for label, count in enumerate(true) if count}
    source = dpplug.SeededSource(2024)
    rows = []
    for _ in range(case.releases):
        release = releaser.release(data, source)
        assert release.accuracy == releaser.accuracy(BETA)
        if isinstance(release, DenseHistogram):
            estimate = release.counts
        elif isinstance(release, SparseHistogram):
            estimate = np.zeros(case.size, dtype=np.int64)
            estimate[list(release.indices)] = release.counts
        else:
            assert isinstance(release, CompactHistogram)
            estimate = np.array(release.counts(range(case.size)), dtype=np.int64)
        rows.append(np.abs(estimate - np.array(true)))
    return Errors(true, np.array(rows), releaser.accuracy(BETA))


def per_query_bins(result: Errors, dense: bool) -> list[int]:
    """The three heaviest bins above the threshold; for dense releasers also a count-1 bin
    and an empty bin."""
    heavy = [x for x, c in enumerate(result.true) if c > result.accuracy.threshold][:3]
    assert heavy, "the data must have bins above the per-query threshold"
    if dense:
        heavy += [result.true.index(1), result.true.index(0)]
    return heavy


@pytest.mark.parametrize("name", CASES)
def test_per_query_error_within_the_declared_bound(name: str) -> None:
    result = errors(name)
    bound = result.accuracy.per_query
    assert bound.beta == BETA
    releases = len(result.errors)
    for x in per_query_bins(result, dense=name in ("basic", "compact")):
        failures = int((result.errors[:, x] > bound.a).sum())
        assert not exceeds(failures, releases, bound.beta, FALSE_ALARM), (x, failures, releases)
        # Power: a quarter of the declared a is flagged by the same test.
        under = int((result.errors[:, x] > bound.a // 4).sum())
        assert exceeds(under, releases, bound.beta, FALSE_ALARM), (x, under, releases)


@pytest.mark.parametrize("name", CASES)
def test_simultaneous_error_within_the_declared_bound(name: str) -> None:
    result = errors(name)
    bound = result.accuracy.simultaneous
    assert bound.beta == BETA
    worst = result.errors.max(axis=1)
    releases = len(worst)
    failures = int((worst > bound.a).sum())
    assert not exceeds(failures, releases, bound.beta, FALSE_ALARM), (failures, releases)
    under = int((worst > bound.a // 4).sum())
    assert exceeds(under, releases, bound.beta, FALSE_ALARM), (under, releases)


def test_stability_drops_light_bins_and_keeps_heavy_ones() -> None:
    """Bins at or below t − a are (almost) never released; bins above t + a (almost) always."""
    result = errors("stability")
    releaser = dpplug.create(
        "stability-histogram", universe="range:0:999", beta=BETA, **dict(CASES["stability"].params)
    )
    t, a = releaser.threshold, result.accuracy.per_query.a
    released = result.errors != np.array(result.true)  # error ≠ true count: the bin was released
    light = [x for x, c in enumerate(result.true) if 0 < c <= t - a]
    heavy = [x for x, c in enumerate(result.true) if c > t + a]
    assert light and heavy
    assert released[:, light].mean() < 0.01 and released[:, heavy].mean() > 0.9


# --- exact counterparts (no sampling) ----------------------------------------------------------

EXACT = {
    "basic": ("basic-histogram", {}),
    "basic geosample": ("basic-histogram", {"sampler": "geosample"}),
    "stability": ("stability-histogram", {"delta": Fraction(1, 10**4)}),
    "compact": ("compact-histogram", {}),
}


def exact_releaser(name: str, size: int = 200, n: int = 60) -> Any:
    releaser_name, extra = EXACT[name]
    return dpplug.create(
        releaser_name, universe=f"range:0:{size - 1}", n=n, epsilon=1, beta=BETA, **extra
    )


def failure(releaser: Any, count: int, a: int) -> Any:
    """Pr[|released − count| > a] for one bin with true count *count* (exact): the sampler's
    law for nonempty bins, a dropped bin (stability) reading 0, an empty bin reading M₀
    (compact) or nothing (stability)."""
    if count == 0 and releaser.name == "compact-histogram":
        law, modulus = releaser.law, releaser.modulus
        return 1 - mpq(law.threshold(a), modulus)
    if count == 0 and releaser.name == "stability-histogram":
        return mpq(0)
    t = getattr(releaser, "threshold", None)
    total = mpq(0)
    for value, p in releaser.sampler.pmf(count).items():
        released = 0 if t is not None and value <= t else value
        if abs(released - count) > a:
            total += p
    return total


@pytest.mark.parametrize("name", EXACT)
def test_exact_per_query_failure_is_at_most_beta(name: str) -> None:
    releaser = exact_releaser(name)
    accuracy = releaser.accuracy(BETA)
    a, threshold = accuracy.per_query.a, accuracy.threshold
    counts = range(threshold + 1 if threshold else 0, releaser.n + 1)  # where the promise holds
    assert len(counts) > 10
    assert max(failure(releaser, c, a) for c in counts) <= BETA
    assert max(failure(releaser, c, a // 4) for c in counts) > 4 * BETA  # a is not vacuous


@pytest.mark.parametrize("name", ["basic", "basic geosample", "stability"])
def test_exact_simultaneous_failure_on_zipf_data_is_at_most_beta(name: str) -> None:
    """Bins are independent in these two releasers: Pr[some error > a] = 1 − Π (1 − p_x)."""
    releaser = exact_releaser(name)
    a = releaser.accuracy(BETA).simultaneous.a
    true = zipf_counts(releaser.n, releaser.universe.size)
    laws: dict[int, Any] = {}
    success = mpq(1)
    for count in true:
        if count not in laws:
            laws[count] = failure(releaser, count, a)
        success *= 1 - laws[count]
    assert 1 - success <= BETA
