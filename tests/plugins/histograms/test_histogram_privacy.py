"""Exact privacy of the basic and stability histograms over every replace-one neighbour of tiny
universes (Balcer & Vadhan, full version Thm 5.2 and Thm 5.5; docs/mechanisms.md).

The output laws are built from the releaser's own sampler: the basic histogram is the product
of M(c_x, U) over all labels (program.Noise, the draw the releasers' programs use); the stability
histogram is the product over the nonempty bins with every count ≤ t dropped. Datasets have
0 … n rows (neighbours keep the number of rows).

Power: the basic histogram's worst ratio exceeds one count's bound (two counts move), the
stability histogram with threshold t − 1 exceeds the declared δ, and the chi-square check that
release() samples the stability law rejects a neighbour's law.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache
from typing import Any

import pytest
from gmpy2 import mpq
from scipy.stats import chisquare

import dpplug
from dpplug.plugins.histograms.sampler_choice import REPLACE_ONE
from dpplug.program import Noise

from support.histograms import hockey_stick, max_ratio, neighbour_pairs, plugin_registry

BASIC_CASES = {
    "geosample": {"universe": "range:0:2", "n": 2, "epsilon": 1, "sampler": "geosample"},
    "fastsample": {"universe": "range:0:2", "n": 2, "epsilon": 1, "sampler": "fastsample"},
    "fixedpoint": {"universe": "range:0:2", "n": 3, "epsilon": Fraction(1, 2)},
    "ternary": {"universe": "range:0:2", "n": 2, "sampler": "ternary-response"},
    "four labels": {"universe": "range:0:3", "n": 2, "epsilon": 2, "sampler": "geosample"},
}


def create(name: str, params: dict[str, Any]) -> Any:
    return plugin_registry().create(name, **params)


@pytest.mark.parametrize("params", BASIC_CASES.values(), ids=BASIC_CASES.keys())
def test_basic_histogram_likelihood_ratios_are_at_most_the_guarantee(
    params: dict[str, Any],
) -> None:
    releaser = create("basic-histogram", params)
    guarantee = releaser.guarantee
    assert guarantee.pure and guarantee.neighbouring == REPLACE_ONE
    assert guarantee.exp_epsilon == releaser.sampler.guarantee.exp_epsilon**2

    law = cache(lambda data: Noise(releaser.sampler, data).law())
    worst = mpq(0)
    for data, other in neighbour_pairs(releaser.universe.size, releaser.n):
        assert sum(law(data).values()) == 1
        worst = max(worst, max_ratio(law(data), law(other)))
    assert worst <= guarantee.exp_epsilon
    # Power: one replacement moves two counts, so one count's bound would be exceeded.
    assert worst > releaser.sampler.guarantee.exp_epsilon


def test_basic_histogram_with_an_approximate_sampler_composes_delta() -> None:
    """truncated-geometric is (ε_M, δ_M) per count; two counts change: hockey-stick at e^{2ε_M}
    is at most 2δ_M."""
    releaser = create(
        "basic-histogram",
        {
            "universe": "range:0:2",
            "n": 2,
            "epsilon": 1,
            "sampler": "truncated-geometric",
            "sampler_options": {"delta": Fraction(1, 10)},
        },
    )
    per_count = releaser.sampler.guarantee
    assert releaser.guarantee.exp_epsilon == per_count.exp_epsilon**2
    assert releaser.guarantee.delta == 2 * per_count.delta > 0
    law = cache(lambda data: Noise(releaser.sampler, data).law())
    worst = max(
        hockey_stick(law(data), law(other), releaser.guarantee.exp_epsilon)
        for data, other in neighbour_pairs(3, 2)
    )
    assert 0 < worst <= releaser.guarantee.delta


# --- stability ---------------------------------------------------------------------------------

STABILITY_CASES = {
    "geosample t=2": {"n": 3, "epsilon": 2, "delta": Fraction(3, 10), "sampler": "geosample"},
    "geosample t=1": {"n": 3, "epsilon": 2, "delta": Fraction(1, 2), "sampler": "geosample"},
    "fixedpoint t=1": {"n": 3, "epsilon": 4, "delta": Fraction(1, 5)},
    "fixedpoint n=2": {"n": 2, "epsilon": 6, "delta": Fraction(1, 20)},
    "fastsample": {"n": 3, "epsilon": 2, "delta": Fraction(2, 5), "sampler": "fastsample"},
    "ternary": {"n": 2, "delta": Fraction(1, 4), "sampler": "ternary-response"},
}


def stability_law(releaser: Any, data: tuple[int, ...]) -> dict[Any, Any]:
    """Product of the samplers' pmfs over the nonempty bins, counts ≤ t dropped."""
    law: dict[Any, Any] = {(): mpq(1)}
    for label, count in enumerate(data):
        if count:
            pmf = releaser.sampler.pmf(count)
            grown: dict[Any, Any] = {}
            for released, p in law.items():
                for value, q in pmf.items():
                    key = (*released, (label, value)) if value > releaser.threshold else released
                    grown[key] = grown.get(key, mpq(0)) + p * q
            law = grown
    return law


def tail_above(releaser: Any, t: int) -> Any:
    """Pr[M(1, U) > t]."""
    return sum((p for v, p in releaser.sampler.pmf(1).items() if v > t), mpq(0))


@pytest.mark.parametrize("params", STABILITY_CASES.values(), ids=STABILITY_CASES.keys())
def test_stability_threshold_is_the_smallest_with_tail_at_most_delta(
    params: dict[str, Any],
) -> None:
    releaser = create("stability-histogram", {"universe": "range:0:2", **params})
    t = releaser.threshold
    assert 0 < t < releaser.n  # something can be released, and something can be dropped
    assert tail_above(releaser, t) <= params["delta"] < tail_above(releaser, t - 1)
    assert releaser.guarantee.delta == tail_above(releaser, t)
    assert releaser.guarantee.exp_epsilon == releaser.sampler.guarantee.exp_epsilon**2
    assert releaser.derived["threshold"] == t


@pytest.mark.parametrize("params", STABILITY_CASES.values(), ids=STABILITY_CASES.keys())
def test_stability_hockey_stick_over_all_neighbours_is_the_declared_delta(
    params: dict[str, Any],
) -> None:
    releaser = create("stability-histogram", {"universe": "range:0:2", **params})
    guarantee = releaser.guarantee
    law = cache(lambda data: stability_law(releaser, data))
    worst = mpq(0)
    for data, other in neighbour_pairs(releaser.universe.size, releaser.n):
        assert sum(law(data).values()) == 1
        worst = max(worst, hockey_stick(law(data), law(other), guarantee.exp_epsilon))
    assert worst <= guarantee.delta
    # Tight (docs/mechanisms.md#stability-histogram): a bin appearing at count 1
    assert worst == guarantee.delta


@pytest.mark.parametrize("params", STABILITY_CASES.values(), ids=STABILITY_CASES.keys())
def test_stability_with_a_lower_threshold_would_break_the_declared_delta(
    params: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Power of the check above: the same computation with t − 1 exceeds the declared δ."""
    releaser = create("stability-histogram", {"universe": "range:0:2", **params})
    guarantee = releaser.guarantee
    monkeypatch.setattr(releaser, "threshold", releaser.threshold - 1)
    law = cache(lambda data: stability_law(releaser, data))
    worst = max(
        hockey_stick(law(data), law(other), guarantee.exp_epsilon)
        for data, other in neighbour_pairs(releaser.universe.size, releaser.n)
    )
    assert worst > guarantee.delta


def chi_square_rejects(observed: Counter[Any], law: dict[Any, Any], false_alarm: float) -> bool:
    """Pearson's test of the observed outcomes against an exact law (outcomes outside the law
    pooled with its rarest one)."""
    outcomes = sorted(law, key=lambda o: law[o])
    counts = [observed.get(o, 0) for o in outcomes]
    counts[0] += sum(c for o, c in observed.items() if o not in law)
    total = sum(counts)
    expected = [float(law[o]) * total for o in outcomes]
    return bool(chisquare(counts, expected).pvalue < false_alarm)


def test_stability_release_samples_the_law() -> None:
    """The law above is what release() samples (chi-square, false alarm 1e-6, 10 000 releases);
    the same test rejects the law of a replace-one neighbour (power)."""
    releaser = create(
        "stability-histogram", {"universe": "range:0:2", **STABILITY_CASES["geosample t=1"]}
    )
    source = dpplug.SeededSource(7)
    observed: Counter[Any] = Counter()
    for _ in range(10_000):
        hist = releaser.release({0: 2, 2: 1}, source)
        assert all(c > releaser.threshold for c in hist.counts)
        observed[tuple(zip(hist.indices, hist.counts, strict=True))] += 1
    assert not chi_square_rejects(observed, stability_law(releaser, (2, 0, 1)), 1e-6)
    assert chi_square_rejects(observed, stability_law(releaser, (1, 0, 2)), 1e-6)
