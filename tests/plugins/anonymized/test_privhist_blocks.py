"""PRIVHIST's privacy, block by block, on the code that runs (Suresh 2019, PRIVHIST and
PRIVHIST-HIGHPRIVACY; docs/mechanisms.md#privhist).

For every pair of neighbouring anonymized histograms with at most 6 items (one count changes by
one, or a count of 1 appears), ``PrivHist.program`` is run on both in lockstep, every noise
request of both answered with the same noisy values, over windows of those values wide enough
that the split saturates on both sides. The inputs of each noise block must then move in at most
one coordinate, by at most one (the sensitivity of each two-sided geometric noise):

- ε₁: the number of items, always by exactly one;
- ε₂: with the same Z^b, one coordinate of the small cumulative prevalences and large sorted
  counts (a vector of the same length) by one; or, for a count crossing T | T + 1, Z^b's input by
  one and, with Z^b moved by one to absorb it, the rest not at all. Z^b is not released, so
  either coupling costs one step of G(e^{ε₂}) (the paper's privacy argument for step 2);
- ε₃ (ε ≤ 1): the integers X_i = (s_i − s_{i−1})·φ^v_{s_i+}, for boundaries S that include noisy
  large counts between T′ and 2N.

With the noise of a block added by a sampler whose guarantee is e^{ε_k} for counts one apart,
each block is e^{ε_k}-DP for neighbours, whatever the earlier noisy values; the blocks compose.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import dpplug
from dpplug.conformance.probes.anonymized_histogram_releaser.probe import neighbours, partitions
from dpplug.kinds import Prevalences
from dpplug.plugins.anonymized import PrivHist
from dpplug.program import Noise

ITEMS = 6
TOTALS = (1, 2, 3, 4, 5, 6, 8, 12, 20, 40, 200)


def pairs() -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    for n in range(ITEMS):
        for counts in partitions(n):
            for other in neighbours(counts):
                yield counts, other


def requests(
    mechanism: Any, counts: tuple[int, ...], answer: Callable[[int, Noise], tuple[int, ...]]
) -> list[Noise]:
    """The noise requests of the mechanism's program on *counts*, request j answered with
    answer(j, request)."""
    program = mechanism.program(Prevalences.of_counts(counts))
    seen: list[Noise] = []
    try:
        draw = next(program)
        while True:
            assert isinstance(draw, Noise)
            seen.append(draw)
            draw = program.send(answer(len(seen) - 1, draw))
    except StopIteration:
        return seen


def moved(a: list[int], b: list[int]) -> list[int]:
    """The coordinate differences of two noise inputs of the same length."""
    assert len(a) == len(b), (a, b)
    return [x - y for x, y in zip(a, b, strict=True) if x != y]


def stages(
    mechanism: Any, counts: tuple[int, ...], total: int, y: int, large: Callable[[Noise], Any]
) -> list[Noise]:
    """The requests on *counts* with N = *total*, Z^b's output *y*, and the small and large
    noisy values *large*(request)."""

    def answer(j: int, request: Noise) -> tuple[int, ...]:
        if j == 0:
            return (total,)
        if j == 1:
            return (y,)
        return tuple(large(request) if j == 2 else request.counts)

    return requests(mechanism, counts, answer)


def within_one(a: list[int], b: list[int]) -> bool:
    """Same length, at most one coordinate apart, by at most one."""
    return len(a) == len(b) and moved(a, b) in ([], [1], [-1])


def own(request: Noise) -> list[int]:
    """Noisy values equal to the request's inputs (any values would do: privacy is for all)."""
    return list(request.counts)


def check_pair(mechanism: Any, a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Every block of *a* and *b* over the windows; returns the number of runs compared."""
    runs = 0
    first = requests(mechanism, a, lambda j, r: (0,))
    second = requests(mechanism, b, lambda j, r: (0,))
    assert len(first) == len(second) == 1  # N = 0: the empty release, nothing else drawn
    assert moved(first[0].counts, second[0].counts) in ([1], [-1])  # ε₁: n by exactly one
    for total in TOTALS:
        t = mechanism.split_point(total)
        window = range(-ITEMS - 3, 2 * mechanism.fake_counts(total) + 2 * ITEMS + 4)
        probe = stages(mechanism, a, total, 0, own), stages(mechanism, b, total, 0, own)
        shift = probe[1][1].counts[0] - probe[0][1].counts[0]  # Z^b's input moves by this
        assert shift in (-1, 0, 1)
        same_z = same_y = True
        for y in window:
            runs += 1
            left = stages(mechanism, a, total, y, own)
            assert len(left) == (4 if mechanism.high_privacy else 3)
            assert left[1].sampler is left[2].sampler is mechanism.split_sampler
            right = stages(mechanism, b, total, y + shift, own)  # the same Z^b
            same_z &= within_one(left[2].counts, right[2].counts)
            if shift:  # the same φ^b_{T+1}: Z^b moved one step
                same_y &= left[2].counts == stages(mechanism, b, total, y, own)[2].counts
            if mechanism.high_privacy:
                # ε₃, given the same N and the same noisy small and large values, the large ones
                # between T′ and 2N for large N (boundaries of H2).
                values = list(left[2].counts)
                if total >= 40:
                    values[t:] = [total + 5 * i for i in range(len(values) - t)]
                coupled = y + (0 if shift and same_y else shift)
                ours = stages(mechanism, a, total, y, lambda r, c=values: c)
                theirs = stages(mechanism, b, total, coupled, lambda r, c=values: c)
                assert ours[3].sampler is mechanism.smoothing_sampler
                assert within_one(ours[3].counts, theirs[3].counts), (a, b, total, y)
        # ε₂: with the same Z^b, at most one step in the small and large vector; a count
        # crossing T | T + 1 is absorbed by moving Z^b one step, and the rest is unchanged.
        assert same_z or (shift != 0 and same_y), (a, b, total)
    return runs


def test_a_split_without_the_noisy_crossing_fails_the_check() -> None:
    """Power: PRIVHIST with Z^b's noisy value ignored (the naive split of §4.2, which leaks a
    count crossing T | T + 1) fails the ε₂ check."""

    class NaiveSplit(PrivHist):
        def program(self, prevalences: Prevalences) -> Any:
            inner = super().program(prevalences)
            draw = next(inner)
            while True:
                try:
                    value = yield draw
                    if draw.sampler is self.split_sampler and len(draw.counts) == 1:
                        value = tuple(draw.counts)  # Z^b = 0
                    draw = inner.send(value)
                except StopIteration as stop:
                    return stop.value

    with pytest.raises(AssertionError):
        for a, b in pairs():
            check_pair(NaiveSplit(epsilon=2), a, b)


#: Both branches; the high-privacy one with small ε₁ and ε₃ shares, so that ε₂ is large and the
#: fake counts M (hence the windows) are small: the blocks' code paths do not depend on shares.
CASES = (
    {"epsilon": 1, "total_share": 0.01, "smoothing_share": 0.01, "smoothing_up_to": 1},
    {"epsilon": 2},
)


@pytest.mark.parametrize("params", CASES, ids=["high-privacy", "low-privacy"])
def test_every_block_moves_one_coordinate_by_at_most_one(params: dict[str, Any]) -> None:
    mechanism = dpplug.create("privhist", **params)
    epsilon = params["epsilon"]
    assert mechanism.high_privacy is (epsilon <= 1)  # the first case asks for HIGHPRIVACY
    compared = sum(check_pair(mechanism, a, b) for a, b in pairs())
    assert compared > 1_000
