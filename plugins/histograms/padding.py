"""A uniformly random set of labels outside a given set, without touching the rest of the
universe: Floyd's algorithm over ranks (Bentley & Floyd, "A sample of brilliance", CACM 1987),
with exact uniform integers, for universes of up to 2^1024 labels.

**Floyd's algorithm.** To choose s distinct ranks out of [0, N): for j = N − s, …, N − 1 draw
t uniform in [0, j]; add t unless it was chosen already, and j otherwise. Every s-subset comes
out with probability 1/C(N, s) (by induction on j: after the step for j the chosen set is a
uniform subset of [0, j] of the size so far). The draws are s exact uniform integers whatever
the outcome, and the set is sorted at the end only.

**Vectorised.** The draws t_i ∈ [0, N − s + i] do not depend on one another, so they are drawn
in blocks (:func:`floyd_draws`: exact rejection sampling per element from ⌈log₂(j + 1)⌉-bit
integers, one or two 64-bit words each for N ≤ 2^128). The choices depend on earlier ones only
through collisions: when the t_i are distinct and all below N − s, none can collide and the set
is {t_i}; otherwise the steps run one by one (:func:`floyd`). With s ≪ N, as for a padding of
n + k labels out of 2^64, the first case has probability above 1 − s²/N.

**Ranks to labels.** The free labels are the universe's indices outside the *taken* set T; the
free label of rank r is r plus the number of taken t_i with t_i − i ≤ r
(:meth:`~.wide_indices.Indices.shifted_by_rank`).

:class:`Padding` is the draw (:mod:`dpplug.program`): sampled as above, and with an exact law
computed from the same :func:`floyd` on every vector of draws, for tiny cases.
"""

from __future__ import annotations

import math
from itertools import product
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.plugins.histograms.wide_indices import Indices
from dpplug.program import Draw
from dpplug.randomness import RandomSource
from dpplug.universe import WORD

Words = npt.NDArray[np.uint64]
#: Floyd's draws: their high and low 64-bit words (N ≤ 2^128), or Python ints.
Draws = tuple[Words, Words] | list[int]
#: Draws made per block (the block's arrays stay in the processor's cache).
BLOCK = 1 << 16
#: The most vectors of draws :meth:`Padding.law` enumerates.
MAX_DRAW_VECTORS = 1 << 18
_MASK = WORD - 1


def _blocks(first: int, size: int) -> list[tuple[int, int, int]]:
    """(start, stop, b): the steps i ∈ [start, stop) whose bound j = first + i has b bits (at
    least 1), in blocks of at most :data:`BLOCK` steps, increasing with i."""
    found = []
    for bits in range(max(1, first.bit_length()), max(1, (first + size - 1).bit_length()) + 1):
        low = 0 if bits == 1 else 1 << (bits - 1)
        start, stop = max(0, low - first), min(size, (1 << bits) - first)
        found += [(i, min(i + BLOCK, stop), bits) for i in range(start, stop, BLOCK)]
    return found


def floyd_draws(free: int, size: int, source: RandomSource) -> Draws:
    """t_i uniform in [0, free − size + i] for i < size, exactly (rejection sampling)."""
    first = free - size
    if free > WORD * WORD:
        out = []
        for j in range(first, free):
            while (t := source.bits(max(1, j.bit_length()))) > j:
                pass
            out.append(t)
        return out
    high, low = np.zeros(size, dtype=np.uint64), np.zeros(size, dtype=np.uint64)
    first_low, first_high = np.uint64(first & _MASK), np.uint64(first >> 64)
    for start, stop, bits in _blocks(first, size):
        steps = np.arange(start, stop, dtype=np.uint64)
        bound_low = first_low + steps  # wraps past 2^64: the carry goes to the high word
        bound_high = first_high + (bound_low < first_low).astype(np.uint64)
        pending: npt.NDArray[np.intp] | slice = slice(None)  # every step, then the rejected
        while True:
            top, bottom = bound_high[pending], bound_low[pending]
            if bits > 64:
                up = source.bits_array(64, bottom.size) >> np.uint64(128 - bits)
                down = source.bits_array(64, bottom.size)
            else:
                up = np.zeros(bottom.size, dtype=np.uint64)
                down = source.bits_array(64, bottom.size) >> np.uint64(64 - bits)
            fits = (up < top) | ((up == top) & (down <= bottom))
            where = np.arange(start, stop)[pending]
            high[where[fits]], low[where[fits]] = up[fits], down[fits]
            if fits.all():
                break
            pending = where[~fits] - start
    return high, low


def floyd(draws: Draws, free: int) -> Indices:
    """The ranks Floyd's algorithm chooses out of [0, *free*) from its draws t_i ∈
    [0, free − s + i], s = len(draws)."""
    if isinstance(draws, tuple):
        high, low = draws
        size = int(low.size)
        wide = high > 0
        large = [
            (h << 64) | w for h, w in zip(high[wide].tolist(), low[wide].tolist(), strict=True)
        ]
        chosen = Indices.from_unsorted(low[~wide], large)
        small = chosen.small
        distinct = bool(np.all(small[1:] != small[:-1])) and len(set(chosen.large)) == len(large)
        top = chosen.large[-1] if chosen.large else int(small[-1]) if small.size else -1
        if distinct and top < free - size:  # no draw can collide with a chosen value
            return chosen
        values = [(h << 64) | w for h, w in zip(high.tolist(), low.tolist(), strict=True)]
    else:
        values = draws
    first = free - len(values)
    picked: set[int] = set()
    for i, t in enumerate(values):
        picked.add(first + i if t in picked else t)
    return Indices.of(sorted(picked))


class Padding(Draw):
    """A uniformly random set of *count* labels of [0, size) outside *taken*, as
    :class:`~.wide_indices.Indices` when sampled and increasing ints in the law."""

    def __init__(self, size: int, taken: Indices, count: int) -> None:
        self.size, self.taken, self.count = size, taken, count
        self.free = size - len(taken)

    def sample(self, source: RandomSource) -> Indices:
        return self.taken.shifted_by_rank(
            floyd(floyd_draws(self.free, self.count, source), self.free)
        )

    def law(self) -> dict[tuple[int, ...], Any]:
        """The law of the chosen set, from :func:`floyd` on every vector of draws (each of
        probability 1/Π_i (free − count + i + 1)); NotSupported past :data:`MAX_DRAW_VECTORS`."""
        first = self.free - self.count
        ranges = [range(first + i + 1) for i in range(self.count)]
        vectors = math.prod(first + i + 1 for i in range(self.count))  # len() overflows past 2^63
        if vectors > MAX_DRAW_VECTORS:
            raise NotSupported(
                f"the law of a padding of {self.count} out of {self.free} labels takes "
                f"more than {MAX_DRAW_VECTORS:,} vectors of draws"
            )
        found: dict[tuple[int, ...], int] = {}
        for draws in product(*ranges):
            key = tuple(self.taken.shifted_by_rank(floyd(list(draws), self.free)).tolist())
            found[key] = found.get(key, 0) + 1
        return {key: mpq(times, vectors) for key, times in found.items()}
