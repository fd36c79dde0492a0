"""Both anonymized-histogram releasers on their three input forms: rows, a mapping label →
count and prevalences give the same release from the same seed; bad input is refused with a
dpplug error before anything is drawn; the caller's data is never changed."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest

import dpplug
from dpplug.kinds.anonymized_histogram_releaser.outputs import MAX_ITEMS

CASES = {
    "privhist-high": ("privhist", {"epsilon": 0.5, "smoothing_up_to": 1}),
    "privhist-low": ("privhist", {"epsilon": 3}),
    "sorted-histogram": ("sorted-histogram", {"epsilon": 1, "length": 40}),
}
COUNTS = {"a": 7, "b": 3, "c": 3, "d": 1, "e": 1, "f": 1}
ROWS = [label for label, count in COUNTS.items() for _ in range(count)]
PREVALENCES = {1: 3, 3: 2, 7: 1}


@pytest.fixture(params=sorted(CASES))
def mechanism(request: pytest.FixtureRequest) -> Any:
    name, params = CASES[request.param]
    return dpplug.create(name, **params)


def test_rows_mapping_and_prevalences_give_the_same_release(mechanism: Any) -> None:
    for seed in range(20):
        by_rows = mechanism.release(ROWS, dpplug.SeededSource(seed))
        by_mapping = mechanism.release(COUNTS, dpplug.SeededSource(seed))
        by_prevalences = mechanism.release_prevalences(PREVALENCES, dpplug.SeededSource(seed))
        assert by_rows == by_mapping == by_prevalences
        assert all(isinstance(r, int) and r >= 1 for r in by_rows.prevalences)
        assert all(isinstance(phi, int) and phi >= 1 for phi in by_rows.prevalences.values())
        assert list(by_rows.prevalences) == sorted(by_rows.prevalences)


def test_labels_are_any_hashables_and_zero_counts_are_absent(mechanism: Any) -> None:
    rows = [(1, 2)] * 7 + [None] * 3 + [3.5] * 3 + [True, "x", b"y"]
    mapping = {**COUNTS, "zero": 0}
    seed = dpplug.SeededSource
    assert mechanism.release(rows, seed(4)) == mechanism.release(COUNTS, seed(4))
    assert mechanism.release(mapping, seed(4)) == mechanism.release(COUNTS, seed(4))
    assert mechanism.release(np.array(ROWS), seed(4)) == mechanism.release(ROWS, seed(4))


BAD_DATA: list[tuple[str, Any]] = [
    ("release", {"a": -1}),
    ("release", {"a": 0.5}),
    ("release", {"a": 1.0}),
    ("release", {"a": math.nan}),
    ("release", {"a": True}),
    ("release", {"a": "2"}),
    ("release", {"a": None}),
    ("release", {"a": MAX_ITEMS + 1}),
    ("release", {"a": MAX_ITEMS, "b": 1}),
    ("release", "abc"),
    ("release", b"abc"),
    ("release", 12),
    ("release", None),
    ("release", [[1], [2]]),
    ("release_prevalences", {0: 1}),
    ("release_prevalences", {-1: 2}),
    ("release_prevalences", {1: -1}),
    ("release_prevalences", {1.5: 1}),
    ("release_prevalences", {1: 0.5}),
    ("release_prevalences", {1: math.nan}),
    ("release_prevalences", {True: 1}),
    ("release_prevalences", {1: True}),
    ("release_prevalences", {"1": 1}),
    ("release_prevalences", {10**6: 10**6 + 1}),
    ("release_prevalences", [(1, 2)]),
    ("release_prevalences", None),
]


@pytest.mark.parametrize(("method", "data"), BAD_DATA, ids=[repr(d)[:30] for _, d in BAD_DATA])
def test_bad_data_is_refused_before_any_draw(mechanism: Any, method: str, data: Any) -> None:
    source = dpplug.SeededSource(0)
    with pytest.raises(dpplug.BadData):
        getattr(mechanism, method)(data, source)
    assert source.draws == 0


def test_the_callers_data_is_not_changed(mechanism: Any) -> None:
    rows, counts, prevalences = list(ROWS), dict(COUNTS), dict(PREVALENCES)
    kept = copy.deepcopy((rows, counts, prevalences))
    mechanism.release(rows, dpplug.SeededSource(1))
    mechanism.release(counts, dpplug.SeededSource(1))
    mechanism.release_prevalences(prevalences, dpplug.SeededSource(1))
    assert (rows, counts, prevalences) == kept


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        ("privhist", {"epsilon": 0}, "epsilon"),
        ("privhist", {"epsilon": -1}, "epsilon"),
        ("privhist", {"epsilon": math.nan}, "epsilon"),
        ("privhist", {"epsilon": 1, "total_share": 0.6}, "total_share"),
        ("privhist", {"epsilon": 1, "smoothing_share": 0.5}, "smoothing_share"),
        ("privhist", {"epsilon": 1, "sampler": "geosample"}, "unbounded"),
        ("privhist", {"epsilon": 1, "sampler": "optimal-partition-selection"}, "not a counting"),
        ("privhist", {"epsilon": 1, "sampler": "no-such"}, "no mechanism"),
        ("sorted-histogram", {"epsilon": 1}, "missing parameter length"),
        ("sorted-histogram", {"epsilon": 1, "length": 0}, "length"),
        ("sorted-histogram", {"epsilon": 1, "length": 10**7 + 1}, "length"),
    ],
)
def test_bad_parameters_are_refused(name: str, params: dict[str, Any], match: str) -> None:
    with pytest.raises(dpplug.DpplugError, match=match):
        dpplug.create(name, **params)


def test_sorted_histogram_refuses_more_labels_than_its_length_before_drawing() -> None:
    mechanism = dpplug.create("sorted-histogram", epsilon=1, length=5)
    source = dpplug.SeededSource(0)
    with pytest.raises(dpplug.BadData, match=r"6 labels but .* length = 5"):
        mechanism.release(COUNTS, source)
    assert source.draws == 0
