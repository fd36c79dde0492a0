"""Every releaser is bounded in time and memory at the extremes of its schema (issue 15): n up to
the schema's limit (2^40, or 2^20 where a release is linear in n), universes up to 2^1016 labels
(bytes:127), ε at the smallest its default sampler takes and at 64, β and δ tiny and large.
Construction and accuracy are exercised at the extremes; releases on small datasets (a release
at n = 2^20 is linear in n by design, and timed in benchmarks/histograms.py). No timing is
asserted: the calls must return, and a parameter the schema refuses must say which limit it hit.

The basic histogram's release runs its sampler in chunks: the memory it takes beyond its output
(8 bytes a bin) does not grow with the universe (tracemalloc sees numpy's allocations).
"""

from __future__ import annotations

import tracemalloc
import warnings
from fractions import Fraction
from typing import Any

import pytest

import dpplug
from dpplug.kinds.histogram_releaser.outputs import (
    CompactHistogram,
    DenseHistogram,
    SparseHistogram,
)
from dpplug.plugins.histograms.basic import CHUNK, MAX_DENSE_BINS

TINY = Fraction(1, 2**300)
#: The smallest ε the default samplers take for one count (2^-10), as a releaser's ε.
SMALLEST = Fraction(1, 512)
HUGE = "bytes:127"  # about 2^1016 labels

CASES: dict[str, tuple[str, dict[str, Any], object]] = {
    "basic, 10^8 bins, n = 2^40, largest ε, smallest β": (
        "basic-histogram",
        {"universe": f"range:1:{MAX_DENSE_BINS}", "n": 1 << 40, "epsilon": 64, "beta": TINY},
        None,
    ),
    "basic, n = 2^40, smallest ε": (
        "basic-histogram",
        {"universe": "range:0:99", "n": 1 << 40, "epsilon": SMALLEST, "beta": Fraction(1, 2)},
        {3: 7},
    ),
    "stability, 2^1016 labels, n = 2^40, smallest ε, δ and β": (
        "stability-histogram",
        {"universe": HUGE, "n": 1 << 40, "epsilon": SMALLEST, "delta": TINY, "beta": TINY},
        {b"a": 5, b"\xff" * 127: 2},
    ),
    "stability, largest ε and δ": (
        "stability-histogram",
        {"universe": HUGE, "n": 1 << 40, "epsilon": 64, "delta": 1 - TINY, "beta": 0.5},
        {b"a": 5},
    ),
    "pure-sparse, 2^1016 labels, n = 2^20, smallest ε and β": (
        "pure-sparse-histogram",
        {
            "universe": HUGE,
            "n": 1 << 20,
            "epsilon": SMALLEST,
            "beta": TINY,
            "sampler": "fixedpoint-geometric",
        },
        None,
    ),
    "pure-sparse, 2^1016 labels, n = 2^20, largest ε": (
        "pure-sparse-histogram",
        {"universe": HUGE, "n": 1 << 20, "epsilon": 64, "sampler": "fixedpoint-geometric"},
        None,
    ),
    "pure-sparse, 2^1016 labels, release": (
        "pure-sparse-histogram",
        {"universe": HUGE, "n": 3, "epsilon": SMALLEST, "sampler": "fixedpoint-geometric"},
        {b"a": 2, b"b": 1},
    ),
    "pure-sparse, 2^1016 labels, geosample, largest ε": (
        "pure-sparse-histogram",
        {"universe": HUGE, "n": 3, "epsilon": 64, "beta": 0.5, "sampler": "geosample"},
        {b"a": 3},
    ),
    "pure-sparse, fastsample's largest universe, smallest β": (
        "pure-sparse-histogram",
        {"universe": "bytes:14", "n": 3, "epsilon": 1, "beta": Fraction(1, 2**6)},
        {b"a": 3},
    ),
    "compact, 2^1016 labels, n = 2^20, smallest ε and β": (
        "compact-histogram",
        {
            "universe": HUGE,
            "n": 1 << 20,
            "epsilon": Fraction(1, 400),
            "beta": TINY,
            "sampler": "fixedpoint-geometric",
        },
        None,
    ),
    "compact, n = 2^20, largest ε, fastsample": (
        "compact-histogram",
        {"universe": "bytes:14", "n": 1 << 20, "epsilon": 64, "beta": 0.5},
        None,
    ),
    "compact, 2^1016 labels, release": (
        "compact-histogram",
        {"universe": HUGE, "n": 3, "epsilon": 64, "sampler": "fixedpoint-geometric"},
        {b"a": 2},
    ),
}


@pytest.mark.parametrize(("name", "params", "data"), CASES.values(), ids=CASES.keys())
def test_construction_accuracy_and_release_return_at_the_extremes(
    name: str, params: dict[str, Any], data: object
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpplug.AccuracyWarning)
        releaser = dpplug.create(name, **params)
    for beta in {releaser.params["beta"], Fraction(1, 2)}:
        accuracy = releaser.accuracy(beta)
        assert 0 <= accuracy.per_query.a <= releaser.n
        assert 0 <= accuracy.simultaneous.a <= releaser.n
    assert releaser.guarantee.exp_epsilon >= 1
    if data is not None:
        release = releaser.release(data, dpplug.SeededSource(3))
        assert isinstance(release, DenseHistogram | SparseHistogram | CompactHistogram)
        assert release.guarantee == releaser.guarantee


@pytest.mark.parametrize(
    ("name", "params", "limit"),
    [
        ("basic-histogram", {"universe": f"range:0:{MAX_DENSE_BINS}"}, "compact-histogram"),
        ("pure-sparse-histogram", {"n": (1 << 20) + 1}, "stability-histogram"),
        ("compact-histogram", {"n": (1 << 20) + 1}, "stability-histogram"),
        ("stability-histogram", {"n": (1 << 40) + 1, "delta": 0.5}, "1099511627776"),
        ("pure-sparse-histogram", {"universe": HUGE}, "γ = β/\\(64\\|X\\|\\)"),
        ("compact-histogram", {"universe": HUGE}, "γ = β/\\(2\\|X\\|\\)"),
    ],
)
def test_past_the_schema_the_message_names_the_limit_and_the_alternative(
    name: str, params: dict[str, Any], limit: str
) -> None:
    given = {"universe": "bytes:8", "n": 10, "epsilon": 1, **params}
    with pytest.raises(dpplug.BadParameter, match=limit):
        dpplug.create(name, **given)


def excess_memory(bins: int) -> int:
    """Peak bytes a basic-histogram release over *bins* labels allocates beyond its output."""
    releaser = dpplug.create("basic-histogram", universe=f"range:0:{bins - 1}", n=100, epsilon=1)
    data = {i: 1 for i in range(0, bins, bins // 50)}
    tracemalloc.start()
    try:
        release = releaser.release(data, dpplug.SeededSource(1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - release.counts.nbytes


def test_basic_release_memory_beyond_its_output_does_not_grow_with_the_universe() -> None:
    small, large = excess_memory(2 * CHUNK), excess_memory(8 * CHUNK)
    assert large <= small + CHUNK  # bounded by the chunk, not by the universe
    assert large <= 16 * 8 * CHUNK  # a few chunk-sized temporaries (one call: ~8 outputs)
