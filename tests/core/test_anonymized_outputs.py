"""The anonymized-histogram kind's core: the sorted-ℓ₁ identity (Suresh 2019, Lemma 1), the
released AnonymizedHistogram (estimators, serialisation from untrusted bytes), the kind's
translation of its relation to OpenDP distances, and its central plan's fold."""

from __future__ import annotations

import json
import math
from itertools import product
from typing import Any

import pytest

import dpplug
from dpplug.conformance.probes.anonymized_histogram_releaser.probe import neighbours, partitions
from dpplug.kind import LabelDistance
from dpplug.kinds import ANONYMIZED_HISTOGRAM_RELEASER, Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram, sorted_l1


def prevalences(counts: tuple[int, ...]) -> dict[int, int]:
    return Prevalences.of_counts(counts).as_dict()


def sorted_distance(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Σ_i |n_(i)(a) − n_(i)(b)| over counts sorted non-increasing, padded with zeros."""
    size = max(len(a), len(b))
    pad = [sorted(x, reverse=True) + [0] * (size - len(x)) for x in (a, b)]
    return sum(abs(x - y) for x, y in zip(*pad, strict=True))


def test_sorted_l1_equals_the_cumulative_prevalence_form_for_all_small_histograms() -> None:
    histograms = [h for n in range(9) for h in partitions(n)]
    for a, b in product(histograms, repeat=2):
        assert sorted_l1(prevalences(a), prevalences(b)) == sorted_distance(a, b)


def test_neighbours_are_exactly_the_histograms_at_sorted_l1_distance_one() -> None:
    histograms = [h for n in range(8) for h in partitions(n)]
    for a in histograms[:-20]:
        above = {b for b in histograms if sum(b) == sum(a) + 1 and sorted_distance(a, b) == 1}
        assert set(neighbours(a)) == above


def test_label_distance_bounds_the_sorted_distance_and_the_map_is_group_privacy() -> None:
    """Label counts k apart in ℓ₁ have anonymized histograms at most k apart (Lemma 1: the
    sorted distance is the smallest over labellings), checked over all pairs of count vectors
    on three labels with at most 4 per label; the kind's bound is group privacy over
    min(l₁, l₀·l∞) steps."""
    vectors = list(product(range(5), repeat=3))
    for a, b in product(vectors, repeat=2):
        l1 = sum(abs(x - y) for x, y in zip(a, b, strict=True))
        assert sorted_l1(prevalences(a), prevalences(b)) <= l1
    mechanism = dpplug.create("privhist", epsilon=1)
    guarantee = mechanism.guarantee
    for l0, l1, linf in [(1, 1, 1), (3, 3, 3), (1, 5, 2), (2, 9, 3), (4, 2, 4), (0, 0, 0)]:
        bound = ANONYMIZED_HISTOGRAM_RELEASER.privacy_bound(mechanism, LabelDistance(l0, l1, linf))
        assert bound == guarantee.group(min(l1, l0 * linf))
    with pytest.raises(TypeError):
        ANONYMIZED_HISTOGRAM_RELEASER.privacy_bound(mechanism, 3)


def release(**overrides: Any) -> AnonymizedHistogram:
    mechanism = dpplug.create("privhist", epsilon=1)
    base = mechanism.histogram({1: 4, 2: 1, 5: 2}, 18)
    return AnonymizedHistogram(**{**base.__dict__, **overrides})


def test_outputs_hold_counts_and_estimators() -> None:
    h = release()
    assert h.items == 16 and h.sorted_counts() == [5, 5, 2, 1, 1, 1, 1]
    assert h.to_dict() == {"prevalences": {1: 4, 2: 1, 5: 2}, "total": 18}
    support = h.support_size()
    assert support.value == 7 and support.lipschitz == 1
    entropy = h.entropy()
    expected = sum(phi * (r / 18) * math.log(18 / r) for r, phi in {1: 4, 2: 1, 5: 2}.items())
    assert entropy.value == pytest.approx(expected, rel=1e-12)
    assert entropy.lipschitz == pytest.approx((1 + math.log(18)) / 18)
    linear = h.linear_estimate(lambda r, n: min(r, 3) / n)
    assert linear.value == pytest.approx((4 + 2 + 2 * 3) / 18)
    assert linear.lipschitz == pytest.approx(1 / 18)  # f(1, N) and each step up to 3
    assert linear.gamma == pytest.approx(0.0) and linear.corollary_applies
    assert not support.corollary_applies  # L^N = 1 = N^0: γ = 1 > 1/2
    assert release(total=0, prevalences={}).entropy().value == 0
    with pytest.raises(dpplug.BadParameter, match="pass lipschitz"):
        release(total=10**8).linear_estimate(lambda r, n: r / n)
    assert (
        release(total=10**8).linear_estimate(lambda r, n: r / n, lipschitz=1e-8).lipschitz == 1e-8
    )


def test_outputs_refuse_improper_prevalences() -> None:
    for bad in ({2: 1, 1: 1}, {0: 1}, {1: 0}, {1: -1}):
        with pytest.raises(ValueError):
            release(prevalences=bad)


def test_serialisation_round_trips_and_recomputes_the_guarantee() -> None:
    original = dpplug.create("privhist", epsilon=0.5, beta=0.01).release_prevalences(
        {1: 5, 3: 2}, dpplug.SeededSource(1)
    )
    data = original.to_bytes()
    assert AnonymizedHistogram.from_bytes(data) == original
    assert b"guarantee" not in data  # recomputed from the mechanism, never read
    document = json.loads(data)
    document["params"]["epsilon"] = "2"
    changed = AnonymizedHistogram.from_bytes(json.dumps(document).encode())
    assert changed.guarantee == dpplug.create("privhist", epsilon=2).guarantee


def _document(**changes: Any) -> bytes:
    base = json.loads(release().to_bytes())
    return json.dumps({**base, **changes}).encode()


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff\xfe",
        b"[]",
        b"null",
        _document(format="dpplug-anonymized-histogram/0"),
        _document(extra=1),
        _document(total=-1),
        _document(total=1.5),
        _document(total=True),
        _document(total=10**30),
        _document(prevalences=[[0, 1]]),
        _document(prevalences=[[1, 0]]),
        _document(prevalences=[[2, 1], [1, 1]]),
        _document(prevalences=[[1, 1], [1, 1]]),
        _document(prevalences=[[1]]),
        _document(prevalences={"1": 1}),
        _document(prevalences=[[10**11, 10**11]]),
        _document(mechanism="geosample", params={"n": 3, "epsilon": 1}),
        _document(mechanism=3),
        _document(params={"epsilon": "-1"}),
        _document(params={"epsilon": "1", "nope": 1}),
        _document(params=[]),
    ],
)
def test_untrusted_bytes_are_validated(data: bytes) -> None:
    with pytest.raises(dpplug.BadData, match="cannot read an anonymized histogram"):
        AnonymizedHistogram.from_bytes(data)


def test_a_mechanism_that_is_not_installed_is_named() -> None:
    with pytest.raises(dpplug.UnknownMechanism, match="no-such-mechanism"):
        AnonymizedHistogram.from_bytes(_document(mechanism="no-such-mechanism"))


def test_a_document_of_millions_of_prevalences_is_refused() -> None:
    """Built here, not at import: its 3,000,000 pairs cost every run that collects this file."""
    data = _document(prevalences=[[1, 1]] * 3_000_000)
    with pytest.raises(dpplug.BadData, match="cannot read an anonymized histogram"):
        AnonymizedHistogram.from_bytes(data)


def test_the_central_plan_folds_counts_of_counts() -> None:
    plan = ANONYMIZED_HISTOGRAM_RELEASER.central_plan(dpplug.registry().get("privhist").cls)
    folded = plan.empty.copy()
    for label, count in {"a": 3, "b": 1, "c": 3, "d": 7}.items():
        folded = plan.combine(folded, plan.per_bin(None, label, count))
    assert folded == {3: 2, 1: 1, 7: 1}
    assert plan.combine({1: 1}, {1: 2, 4: 1}) == {1: 3, 4: 1}
    mechanism = dpplug.create("privhist", epsilon=2)
    assert isinstance(plan.finish(mechanism, None, folded), AnonymizedHistogram)
