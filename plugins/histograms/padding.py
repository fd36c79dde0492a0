"""A uniformly random set of labels outside a given set, without touching the rest of the
universe: Floyd's algorithm over ranks (Bentley & Floyd, "A sample of brilliance", CACM 1987),
with exact uniform integers, for universes of up to 2^1024 labels.

**Floyd's algorithm.** To choose s distinct ranks out of [0, N): for j = N − s, …, N − 1 draw
t uniform in [0, j]; add t unless it was chosen already, and j otherwise. Every s-subset comes
out with probability 1/C(N, s) (by induction on j: after the step for j the chosen set is a
uniform subset of [0, j] of the size so far). The draws are s exact uniform integers whatever
the outcome, and the set is kept sorted at the end only.

**Vectorised.** The draws t_i ∈ [0, N − s + i] do not depend on one another, so they are drawn
all at once (:func:`floyd_draws`, exact rejection sampling per element, one 64-bit word each
for N ≤ 2^64). The choices depend on earlier ones only through collisions: when the t_i are
distinct and all below N − s, none can collide and the set is {t_i}; otherwise the steps run
one by one (:func:`floyd`). With s ≪ N, as for a padding of n + k labels out of 2^64, the
first case has probability above 1 − s²/N.

**Ranks to labels.** The free labels are the universe's indices outside the *taken* set T
(sorted); the free label of rank r is r plus the number of taken t_i with t_i − i ≤ r (the free
labels below each taken one), a binary search per rank (:func:`free_labels`).

:class:`Padding` is the draw (:mod:`dpplug.program`): sampled as above, and with an exact law
computed from the same :func:`floyd` on every vector of draws, for tiny cases.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from itertools import product
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.program import Draw
from dpplug.randomness import RandomSource

Labels = npt.NDArray[np.uint64]
#: Universes of at most this many labels are handled in 64-bit words.
WORD = 1 << 64
#: The most vectors of draws :meth:`Padding.law` enumerates.
MAX_DRAW_VECTORS = 1 << 18


def floyd(draws: Sequence[int] | Labels, free: int) -> Labels | list[int]:
    """The sorted ranks Floyd's algorithm chooses out of [0, *free*) from its draws t_i ∈
    [0, free − s + i] (s = len(draws)): uint64 for free ≤ 2^64, Python ints otherwise."""
    size = len(draws)
    first = free - size
    if isinstance(draws, np.ndarray):
        ordered = np.sort(draws)
        if size == 0 or (ordered[-1] < first and bool(np.all(ordered[1:] != ordered[:-1]))):
            return ordered
        draws = draws.tolist()
    chosen: set[int] = set()
    for i, t in enumerate(draws):
        chosen.add(first + i if t in chosen else int(t))
    ranks = sorted(chosen)
    return np.array(ranks, dtype=np.uint64) if free <= WORD else ranks


def floyd_draws(free: int, size: int, source: RandomSource) -> Labels | list[int]:
    """t_i uniform in [0, free − size + i] for i < size, exactly (rejection sampling of
    ⌈log₂(j + 1)⌉-bit words, element by element): uint64 for free ≤ 2^64, ints otherwise."""
    first = free - size
    if free > WORD:
        out = []
        for i in range(size):
            j = first + i
            while (t := source.bits(j.bit_length())) > j:
                pass
            out.append(t)
        return out
    bounds = np.arange(size, dtype=np.uint64) + np.uint64(first)
    shifts = np.empty(size, dtype=np.uint64)
    for bits in range(max(1, first.bit_length()), max(1, (free - 1).bit_length()) + 1):
        low, high = (1 << (bits - 1)) - first, (1 << bits) - first  # j with bit length `bits`
        shifts[max(0, low) : max(0, min(size, high))] = 64 - bits
    draws = np.empty(size, dtype=np.uint64)
    pending = np.arange(size)
    while pending.size:
        words = source.bits_array(64, pending.size) >> shifts[pending]
        fits = words <= bounds[pending]
        draws[pending[fits]] = words[fits]
        pending = pending[~fits]
    return draws


def free_labels(ranks: Labels | list[int], taken: Sequence[int]) -> Labels | list[int]:
    """The universe indices of the free labels of the given *ranks* (increasing), the free
    labels being those outside *taken* (increasing)."""
    below = [t - i for i, t in enumerate(taken)]  # free labels below each taken one
    if isinstance(ranks, np.ndarray):
        shift = np.searchsorted(np.array(below, dtype=np.uint64), ranks, side="right")
        labels: Labels = ranks + shift.astype(np.uint64)
        return labels
    return [r + bisect.bisect_right(below, r) for r in ranks]


class Padding(Draw):
    """A uniformly random set of *count* labels of [0, size) outside *taken* (increasing), as
    increasing universe indices: uint64 for universes of at most 2^64 labels, ints otherwise."""

    def __init__(self, size: int, taken: Sequence[int], count: int) -> None:
        self.size, self.taken, self.count = size, tuple(taken), count

    @property
    def free(self) -> int:
        return self.size - len(self.taken)

    def sample(self, source: RandomSource) -> Labels | list[int]:
        ranks = floyd(floyd_draws(self.free, self.count, source), self.free)
        return free_labels(ranks, self.taken)

    def law(self) -> dict[tuple[int, ...], Any]:
        """The law of the chosen set, from :func:`floyd` on every vector of draws (each of
        probability 1/Π_i (free − count + i + 1)); NotSupported past :data:`MAX_DRAW_VECTORS`."""
        first = self.free - self.count
        ranges = [range(first + i + 1) for i in range(self.count)]
        vectors = math.prod(len(r) for r in ranges)
        if vectors > MAX_DRAW_VECTORS:
            raise NotSupported(
                f"the law of a padding of {self.count} out of {self.free} labels takes "
                f"{vectors:,} vectors of draws, more than {MAX_DRAW_VECTORS:,}"
            )
        found: dict[tuple[int, ...], int] = {}
        for draws in product(*ranges):
            chosen = free_labels(floyd(draws, self.free), self.taken)
            key = tuple(int(label) for label in chosen)
            found[key] = found.get(key, 0) + 1
        return {key: mpq(times, vectors) for key, times in found.items()}
