"""Random sources: exact uniform integers, draw counting, seeded reproducibility."""

from __future__ import annotations

import os
import pickle
from collections import Counter

import numpy as np
import pytest
from scipy import stats

import dpplug
from dpplug.randomness import default_source


def test_seeded_sources_are_reproducible_and_distinct() -> None:
    a, b, c = dpplug.SeededSource(7), dpplug.SeededSource(7), dpplug.SeededSource(8)
    draws = [a.uniform(10**30) for _ in range(5)]
    assert draws == [b.uniform(10**30) for _ in range(5)]
    assert draws != [c.uniform(10**30) for _ in range(5)]


def test_uniform_covers_exactly_one_to_d() -> None:
    source = dpplug.SeededSource(1)
    seen = Counter(source.uniform(6) for _ in range(6000))
    assert set(seen) == set(range(1, 7))
    assert source.uniform(1) == 1


def test_uniform_is_uniform_for_big_non_power_of_two_d() -> None:
    """Top decile frequency of U(3·2^200): false alarm 1e-7 (binomial two-sided), fixed seed."""
    d = 3 * 2**200
    source = dpplug.SeededSource(2)
    hits = sum(source.uniform(d) > d - d // 10 for _ in range(20000))
    assert stats.binomtest(hits, 20000, (d // 10) / d).pvalue > 1e-7


def test_power_of_two_uses_exactly_one_draw() -> None:
    source = dpplug.SeededSource(3)
    for _ in range(100):
        source.uniform(2**64)
    assert source.draws == 100


def test_uniform_array_is_exact_and_in_range() -> None:
    source = dpplug.SeededSource(4)
    values = source.uniform_array(5, 50000)
    assert values.dtype == np.int64 and values.min() == 1 and values.max() == 5
    counts = np.bincount(values)[1:]
    assert stats.chisquare(counts).pvalue > 1e-6


def test_bits_array_counts_one_draw_per_value() -> None:
    source = dpplug.SeededSource(5)
    values = source.bits_array(63, 1000)
    assert source.draws == 1000 and int(values.max()) < 2**63


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.uniform(0),
        lambda s: s.bits(-1),
        lambda s: s.bits_array(65, 3),
        lambda s: s.uniform_array(2**63 + 1, 3),
        lambda s: s.bits_array(3, -1),
    ],
)
def test_bad_arguments_raise_before_drawing(call) -> None:  # type: ignore[no-untyped-def]
    source = dpplug.SeededSource(6)
    with pytest.raises(dpplug.BadParameter):
        call(source)
    assert source.draws == 0


def test_the_default_source_is_the_os_csprng() -> None:
    assert isinstance(default_source(None), dpplug.SystemSource)
    with pytest.raises(dpplug.BadParameter, match="RandomSource"):
        default_source(np.random.default_rng(0))  # type: ignore[arg-type]
    with pytest.raises(dpplug.BadParameter):
        dpplug.SeededSource(-1)


def test_prefetched_bytes_are_never_shared() -> None:
    """A prefetching SystemSource serves its buffer in order; neither a pickled copy nor a forked
    child may serve the bytes still pending in the original (their draws would be equal)."""
    source = dpplug.SystemSource(prefetch=64)
    source.bits(63)
    pending = source._buffer[8:]
    assert len(pending) == 56
    copy = pickle.loads(pickle.dumps(source))
    assert copy._buffer == b"" and copy.prefetch == 64
    pid = os.fork()
    if pid == 0:  # the child: no pending bytes inherited
        os._exit(0 if source._buffer == b"" else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert source.random_bytes(8) == pending[:8]  # the parent goes on where it was
