"""The conformance suite on histogram releasers: exact release laws (dpplug.conformance.
release_law), the exact replace-one check, the releaser probe, and a stability histogram that
releases something passing every contract."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product
from typing import Any

import pytest

import dpplug
from dpplug import Registry
from dpplug.conformance.probes.histogram_releaser.probe import ReleaserProbe, releaser_privacy
from dpplug.conformance.results import Level
from dpplug.conformance.runner import run_plugin
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.kinds.histogram_releaser.release_law import release_law
from dpplug.plugins.histograms import StabilityHistogramReleaser
from dpplug.randomness import SeededSource

#: Threshold t = 2 < n = 3: a bin is released when its noisy count is 3.
RELEASING = {
    "universe": "range:0:2",
    "n": 3,
    "epsilon": Fraction(41, 50),  # geosample at ε = 41/100: e^ε̃ = 3/2 exactly, d = 5·3²
    "delta": Fraction(3, 10),
    "sampler": "geosample",
}


class ReleasingStability(StabilityHistogramReleaser):
    """The stability histogram on conformance cases where something is released."""

    name = "test-releasing-stability"
    conformance_cases = (
        RELEASING,
        {"universe": "bytes:1", "n": 5, "epsilon": 1, "delta": Fraction(3, 10)},
    )


class _Plugin:
    __name__ = "test_releasers"

    @dpplug.hookimpl
    def register_histogram_releasers(self, register: Any) -> None:
        register(ReleasingStability)


REGISTRY = Registry.load([_Plugin()], entry_points=False)


def create(name: str, **params: object) -> Any:
    return REGISTRY.create(name, **params)


def test_basic_release_law_is_the_product_of_the_sampler_pmfs() -> None:
    releaser = create(
        "basic-histogram",
        universe='labels:["a", "b", "c", "d"]',
        n=3,
        epsilon=1,
        sampler="geosample",
    )
    data = {"a": 2, "c": 1}
    pmfs = [releaser.sampler.pmf(data.get(label, 0)) for label in "abcd"]
    expected = {
        tuple(enumerate(outcome)): math.prod(pmf[z] for pmf, z in zip(pmfs, outcome, strict=True))
        for outcome in product(*(pmf.keys() for pmf in pmfs))
    }
    assert release_law(releaser, data) == expected


def test_stability_release_law_keeps_the_nonempty_bins_above_t() -> None:
    releaser = create("stability-histogram", **RELEASING)
    assert releaser.threshold == 2
    pmf_2, pmf_1 = releaser.sampler.pmf(2), releaser.sampler.pmf(1)
    expected: dict[Any, Any] = {}
    for c0, c1 in product(pmf_2.keys(), pmf_1.keys()):
        kept = tuple((i, c) for i, c in ((0, c0), (1, c1)) if c > 2)
        expected[kept] = expected.get(kept, 0) + pmf_2[c0] * pmf_1[c1]
    assert release_law(releaser, {0: 2, 1: 1}) == expected


@pytest.mark.parametrize(
    ("name", "params", "reason"),
    [
        (
            "compact-histogram",
            {"universe": "range:0:3", "n": 1, "epsilon": 2, "sampler": "geosample"},
            "only for n ≥ 2",
        ),
        (
            "pure-sparse-histogram",
            {"universe": "range:0:99999", "n": 2, "epsilon": 2, "sampler": "geosample"},
            "Uniform with more than 65536 outcomes",
        ),
        (
            "basic-histogram",
            {"universe": "range:0:1", "n": 2, "epsilon": 1, "sampler": "discrete-laplace"},
            "unbounded",
        ),
    ],
)
def test_release_law_refuses_what_it_cannot_enumerate(
    name: str, params: dict[str, Any], reason: str
) -> None:
    with pytest.raises(NotSupported, match=reason):
        release_law(create(name, **params), {0: 1})


def test_releaser_privacy_finds_the_exact_delta_of_a_stability_histogram() -> None:
    releaser = create("stability-histogram", **RELEASING)
    report = releaser_privacy(releaser)
    assert report.failures == ()
    # ≤ 3 rows over 3 labels: 30 pairs a row apart by replacing, 30 by adding or removing
    assert report.datasets == 20 and report.pairs == 60
    assert report.worst_ratio is None  # a bin at count 1 appears: only δ covers it
    assert report.worst_divergence == releaser.guarantee.delta  # the declared δ is attained


def test_releaser_privacy_catches_a_threshold_one_too_low() -> None:
    releaser = create("stability-histogram", **RELEASING)
    releaser.threshold -= 1  # releases counts > t − 1 but keeps the δ of t
    report = releaser_privacy(releaser)
    assert report.worst_divergence > releaser.guarantee.delta
    assert "exceeds δ = 4/15" in report.failures[0]


def test_releaser_probe_codes_both_watched_counts() -> None:
    releaser = create("stability-histogram", **RELEASING)
    probe = ReleaserProbe(releaser, RELEASING)
    assert probe.inputs == (0, 1) and probe.pairs == ((0, 1),)
    assert probe.dataset(1) == {0: 1, 1: 2}
    law = probe.law(1)
    assert law.total() == 1
    assert set(law) <= {c0 * 4 + c1 for c0 in (0, 3) for c1 in (0, 3)}
    draws = probe.draw(1, 200, SeededSource(0))
    assert set(draws.tolist()) <= {z for z in law if law[z] > 0}
    assert probe.show_output(15) == "(0: 3, 1: 3)"


def test_a_stability_histogram_that_releases_passes_every_contract() -> None:
    result = run_plugin(REGISTRY.get(ReleasingStability.name), Settings(mode="fast"))
    failures = [f"{r.contract}: {r.detail}" for r in result.results if not r.passed]
    assert failures == []
    assert result.level is Level.EXACTLY_VERIFIED
