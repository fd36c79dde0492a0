"""Vectorised ``select``: shapes, absent partitions, draw counts (strict time), reproducibility,
exact decisions on prescribed draws, and keep frequencies against π(n).

Statistics: every binomial test below uses a fixed seed and the two-sided level
ALPHA = 1e-6 / (number of binomial tests in this file), so the chance that any of them fails for a
correct selector is at most 1e-6 (Bonferroni). The same counts must reject the wrong rates
π(n)·1.1 and π(n)·0.9 at the same level (power check)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest

import dpplug

from support.selectors import GRID, GRID_SELECTORS, SELECTORS, TGT, Words, floor_grid, selector

PARAMS = {"epsilon": Fraction(1), "delta": Fraction(1, 1000)}


def make(name: str, **extra: Any) -> Any:
    return selector(name, **PARAMS, **extra)


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (3, 4), (2, 3, 5), (0, 3)])
def test_select_keeps_the_shape(name: str, shape: tuple[int, ...]) -> None:
    s = make(name)
    rng = np.random.default_rng(1)
    counts = rng.integers(0, s.saturation + 3, size=shape)
    out = s.select(counts, dpplug.SeededSource(2))
    assert isinstance(out, dpplug.Selection)
    assert out.keep.shape == shape and out.keep.dtype == np.bool_
    if name == TGT:
        assert out.noisy_counts is not None
        assert out.noisy_counts.shape == shape and out.noisy_counts.dtype == np.int64
    else:
        assert out.noisy_counts is None
    # lists (non-empty: see below) and other integer dtypes are accepted too
    forms = [counts.astype(np.int32), counts.astype(np.uint16)]
    if counts.size:
        forms.append(counts.tolist())
    for form in forms:
        assert s.select(form, dpplug.SeededSource(2)).keep.tolist() == out.keep.tolist()


@pytest.mark.parametrize("name", SELECTORS)
def test_select_empty_list(name: str) -> None:
    out = make(name).select([], dpplug.SeededSource(0))
    assert out.keep.shape == (0,)


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("extra", [{}, {"pre_threshold": 3}, {"max_partitions_contributed": 3}])
def test_absent_partitions_never_kept(name: str, extra: dict[str, Any]) -> None:
    s = make(name, **extra)
    counts = np.zeros(20_000, dtype=np.int64)
    counts[::3] = s.saturation  # always kept
    out = s.select(counts, dpplug.SeededSource(4))
    assert not out.keep[counts == 0].any()
    assert out.keep[counts > 0].all()
    if out.noisy_counts is not None:
        assert (out.noisy_counts[counts == 0] == 0).all()


@pytest.mark.parametrize("name", GRID_SELECTORS)
def test_one_draw_per_partition(name: str) -> None:
    """strict_time: exactly one 63-bit draw per partition, whatever the counts."""
    s = make(name)
    assert s.strict_time is True
    source = dpplug.SeededSource(5)
    cases = [
        np.zeros(1000, dtype=np.int64),
        np.full(1000, 1 << 40),
        np.arange(1000) % (s.saturation + 5),
        np.ones((10, 10, 10), dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        np.int64(7),
    ]
    for counts in cases:
        before = source.draws
        s.select(counts, source)
        assert source.draws - before == np.asarray(counts).size


def test_tgt_is_not_strict_time() -> None:
    """k-TSGD draws U(d) by rejection: at least one draw per partition, a number that varies."""
    s = make(TGT)
    assert s.strict_time is False
    source = dpplug.SeededSource(6)
    s.select(np.zeros(1000, dtype=np.int64), source)
    assert source.draws >= 1000


@pytest.mark.parametrize("name", SELECTORS)
def test_seeded_reproducibility(name: str) -> None:
    s = make(name)
    counts = np.arange(5000) % (s.saturation + 2)
    a = s.select(counts, dpplug.SeededSource(42))
    b = s.select(counts, dpplug.SeededSource(42))
    c = s.select(counts, dpplug.SeededSource(43))
    assert (a.keep == b.keep).all()
    assert not (a.keep == c.keep).all()
    if name == TGT:
        assert a.noisy_counts is not None and b.noisy_counts is not None
        assert (a.noisy_counts == b.noisy_counts).all()


@pytest.mark.parametrize("name", GRID_SELECTORS)
@pytest.mark.parametrize("m", [1, 3])
def test_select_decides_u_below_grid_numerator(name: str, m: int) -> None:
    """Through the public API: a partition with n units and draw u is kept iff
    u < 2^63·π(n), so Pr[keep] = π(n) exactly."""
    s = make(name, pre_threshold=m)
    units, draws, expected = [], [], []
    for n in range(s.saturation + 2):
        v = floor_grid(s.keep_probability(n))
        assert v * GRID == s.keep_probability(n)  # π on the grid
        for u in (v - 1, v, 0, (1 << 63) - 1):
            if 0 <= u < 1 << 63:
                units.append(n)
                draws.append(u)
                expected.append(u < v)
    source = Words(draws)
    out = s.select(np.array(units), source)
    assert out.keep.tolist() == expected
    assert source.draws == len(units)


# --- keep frequencies -------------------------------------------------------------------------


def frequency_cases() -> list[tuple[str, int, int]]:
    """(selector, n, sample size) at unit counts whose π(n) lies in [0.05, 0.85] (so π·1.1 is a
    probability and the power check is meaningful)."""
    cases = []
    for name in SELECTORS:
        s = make(name)
        units = [n for n in range(s.saturation) if 0.05 <= s.keep_probability(n) <= 0.85]
        cases += [(name, n, 200_000) for n in units[:3]]
    return cases


FREQUENCY_CASES = frequency_cases()
ALPHA = 1e-6 / len(FREQUENCY_CASES)


@pytest.mark.parametrize(("name", "n", "size"), FREQUENCY_CASES)
def test_keep_frequency(name: str, n: int, size: int) -> None:
    s = make(name)
    p = float(s.keep_probability(n))
    out = s.select(np.full(size, n), dpplug.SeededSource(1000 + n))
    kept = int(out.keep.sum())
    assert binomtest(kept, size, p).pvalue > ALPHA
    assert binomtest(kept, size, p * 1.1).pvalue < ALPHA
    assert binomtest(kept, size, p * 0.9).pvalue < ALPHA


def test_frequency_cases_cover_every_selector() -> None:
    assert {c[0] for c in FREQUENCY_CASES} == set(SELECTORS)
    assert len(FREQUENCY_CASES) >= 8
