"""The weighted Gaussian and DP-SIPS set unions: calibration targets, bounding, canonical order."""

from fractions import Fraction

import pytest

import dpplug
from dpplug.errors import BadData, BadParameter
from dpplug.guarantee import within_budget
from dpplug.kinds.set_union_selector.thresholded_gaussian import unit_weights


def test_weights_have_unit_norm_on_the_grid() -> None:
    for grid in (128, 1024):
        for t, w in enumerate(unit_weights(grid, 50), start=1):
            assert t * w * w <= grid * grid < t * (w + 1) ** 2


@pytest.mark.parametrize(("items", "one", "all_items"), [(8, 19.5, 55.0), (32, 21, 115)])
def test_issue_targets_users_needed(items: int, one: float, all_items: float) -> None:
    """ε = 1, δ = 1e-5: a label needs ≤ 21 single-item units and ≤ 115 units of 32 items
    (median release: threshold over weight)."""
    m = dpplug.create("weighted-gaussian", epsilon=1, delta=1e-5, max_partitions_contributed=items)
    first = m.calibration.rounds[0]
    assert first.threshold / first.grid <= one
    assert first.threshold / first.weights[-1] <= all_items
    assert within_budget(m.guarantee, 1, Fraction(1, 10**5))


def test_release_is_canonical_and_within_the_union() -> None:
    m = dpplug.create("dp-sips", epsilon=2, delta=1e-3, max_partitions_contributed=2, rounds=2)
    data = {u: ["b", "a", "c"] for u in range(60)}
    out = m.select(data, dpplug.SeededSource(3))
    assert out == sorted(out) and set(out) <= {"a", "b", "c"} and out
    assert (
        m.select(list((u, x) for u, xs in data.items() for x in xs), dpplug.SeededSource(3)) == out
    )


def test_bound_is_a_uniform_choice_of_delta0_labels() -> None:
    m = dpplug.create("weighted-gaussian", epsilon=1, delta=1e-3, max_partitions_contributed=2)
    seen = {m.bound(("a", "b", "c"), dpplug.SeededSource(s)) for s in range(200)}
    assert seen == {("a", "b"), ("a", "c"), ("b", "c")}


def test_bad_input_is_refused() -> None:
    m = dpplug.create("weighted-gaussian", epsilon=1, delta=1e-3)
    for bad in (5, {1: "ab"}, [(1,)], {1: [0.5]}):
        with pytest.raises(BadData):
            m.select(bad)
    with pytest.raises(BadParameter):
        dpplug.create("weighted-gaussian", epsilon=1, delta=1)


def test_dp_sips_releases_more_than_one_round_on_zipf() -> None:
    import random

    rng = random.Random(5)
    data = {
        u: [f"w{int(rng.paretovariate(1.1))}" for _ in range(rng.randint(1, 12))]
        for u in range(8000)
    }
    wg = dpplug.create("weighted-gaussian", epsilon=1, delta=1e-5, max_partitions_contributed=10)
    sips = dpplug.create("dp-sips", epsilon=1, delta=1e-5, max_partitions_contributed=10)
    one = [len(wg.select(data, dpplug.SeededSource(s))) for s in range(3)]
    more = [len(sips.select(data, dpplug.SeededSource(s))) for s in range(3)]
    assert sum(more) > sum(one)
