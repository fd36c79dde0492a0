"""Bad input to the partition selectors: dpplug errors (BadParameter / BadData) raised before
any draw (source.draws unchanged), nothing selected."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import dpplug

from support.selectors import GRID_SELECTORS, SELECTORS, TGT, selector

GOOD = {"epsilon": Fraction(1), "delta": Fraction(1, 1000)}
NAN, INF = float("nan"), float("inf")

BAD_PARAMS = [
    # δ ∉ (0, 1)
    {"delta": 0},
    {"delta": 1},
    {"delta": 1.5},
    {"delta": -1e-9},
    {"delta": NAN},
    {"delta": INF},
    {"delta": Fraction(1, 1 << 61)},  # below the smallest δ accepted (2^-60)
    {"delta": "0.1"},
    {"delta": True},
    {"delta": None},
    # ε ≤ 0, NaN, ∞, out of range
    {"epsilon": 0},
    {"epsilon": -1},
    {"epsilon": NAN},
    {"epsilon": INF},
    {"epsilon": -INF},
    {"epsilon": Fraction(1, 2048)},  # below 1/1024
    {"epsilon": 65},
    {"epsilon": "1"},
    {"epsilon": None},
    # ℓ₀ < 1 or not an integer
    {"max_partitions_contributed": 0},
    {"max_partitions_contributed": -2},
    {"max_partitions_contributed": 1.5},
    {"max_partitions_contributed": 2.0},
    {"max_partitions_contributed": Fraction(3, 2)},
    {"max_partitions_contributed": True},
    {"max_partitions_contributed": "2"},
    {"max_partitions_contributed": 1 << 13},
    # pre_threshold < 1 or not an integer
    {"pre_threshold": 0},
    {"pre_threshold": -1},
    {"pre_threshold": 2.5},
    {"pre_threshold": None},
    # replace_one not a bool
    {"replace_one": 1},
    {"replace_one": 0},
    {"replace_one": "True"},
    {"replace_one": None},
    # unknown parameter
    {"n": 10},
]


def bid(params: dict[str, Any]) -> str:
    return "-".join(f"{k}={v!r}" for k, v in params.items())


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("bad", BAD_PARAMS, ids=bid)
def test_bad_parameters(name: str, bad: dict[str, Any]) -> None:
    with pytest.raises(dpplug.BadParameter):
        dpplug.create(name, **{**GOOD, **bad})


@pytest.mark.parametrize("name", SELECTORS)
def test_missing_parameters(name: str) -> None:
    for missing in ("epsilon", "delta"):
        params = {k: v for k, v in GOOD.items() if k != missing}
        with pytest.raises(dpplug.BadParameter, match=missing):
            dpplug.create(name, **params)


@pytest.mark.parametrize("name", GRID_SELECTORS)
def test_per_partition_delta_below_grid(name: str) -> None:
    """δ = 2^-60 split over 4096 partitions leaves δ_c ≈ 2^-72 < 2^-63: BadParameter."""
    with pytest.raises(dpplug.BadParameter, match="max_partitions_contributed"):
        dpplug.create(
            name, epsilon=1, delta=Fraction(1, 1 << 60), max_partitions_contributed=1 << 12
        )


def test_tgt_per_partition_epsilon_below_range() -> None:
    """ε = 1/1024 over 2 coordinates leaves ε_c below truncated-geometric's 1/1024."""
    with pytest.raises(dpplug.BadParameter, match="per-partition"):
        dpplug.create(TGT, epsilon=Fraction(1, 1024), delta=0.1, max_partitions_contributed=2)


@pytest.mark.parametrize("bad", [1.5, "1", True, 1 << 41, -(1 << 41)])
def test_tgt_bad_public_threshold(bad: Any) -> None:
    with pytest.raises(dpplug.BadParameter):
        dpplug.create(TGT, **GOOD, public_threshold=bad)


BAD_COUNTS = [
    [1, -1, 2],
    np.array([-5]),
    [1.0, 2.0],
    np.array([0.5, 3]),
    np.array([1, 2], dtype=np.float32),
    [True, False],
    np.array([True]),
    ["1", "2"],
    [1, "a"],
    np.array([1, 2], dtype=object),
    [1 << 63],
    np.array([1 << 63], dtype=np.uint64),
    [(1 << 62) + 1],  # above the largest unit count
    [1 + 2j],
    None,
    "12",
    {1: 2},
]


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("bad", BAD_COUNTS, ids=repr)
def test_bad_unit_counts(name: str, bad: Any) -> None:
    s = selector(name, **GOOD, **({"public_threshold": 0} if name == TGT else {}))
    source = dpplug.SeededSource(0)
    with pytest.raises(dpplug.BadData):
        s.select(bad, source)
    assert source.draws == 0


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("where", ["counts", "public"])
def test_ragged_input(name: str, where: str) -> None:
    s = selector(name, **GOOD, **({"public_threshold": 0} if name == TGT else {}))
    source = dpplug.SeededSource(0)
    with pytest.raises(dpplug.BadData):
        if where == "counts":
            s.select([[1, 2], [3]], source)
        else:
            s.select([[1, 2], [3, 4]], source, public=[[True, False], [True]])
    assert source.draws == 0


BAD_PUBLIC = [
    [True, False],  # wrong shape
    [[True, False, True]],  # wrong shape (2-D)
    np.ones((3, 1), dtype=bool),
    True,  # a scalar
    [1, 0, 1],  # int, not bool
    np.array([1.0, 0.0, 1.0]),
    ["True", "False", "True"],
    np.array([True, False, None], dtype=object),
]


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("public", BAD_PUBLIC, ids=repr)
def test_bad_public_mask(name: str, public: Any) -> None:
    """Checked before anything else, also for selectors without public partitions."""
    s = selector(name, **GOOD, **({"public_threshold": 0} if name == TGT else {}))
    source = dpplug.SeededSource(0)
    with pytest.raises(dpplug.BadData):
        s.select([0, 3, 9], source, public=public)
    assert source.draws == 0


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("bad", [-1, 1.5, 2.0, True, "3", None, 1 << 70, Fraction(3, 1)])
def test_bad_units_for_exact_laws(name: str, bad: Any) -> None:
    s = selector(name, **GOOD)
    with pytest.raises(dpplug.BadData):
        s.keep_probability(bad)
    with pytest.raises(dpplug.BadData):
        s.output_pmf(bad)


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("source", [0, 1, np.random.default_rng(0), "seed", object()])
def test_bad_source(name: str, source: Any) -> None:
    with pytest.raises(dpplug.BadParameter):
        selector(name, **GOOD).select([1, 2, 3], source)


@pytest.mark.parametrize("name", SELECTORS)
def test_numpy_integer_units_accepted(name: str) -> None:
    s = selector(name, **GOOD)
    for units in (np.int64(4), np.int32(4), np.uint8(4)):
        assert s.keep_probability(units) == s.keep_probability(4)
