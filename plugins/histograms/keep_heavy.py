"""KeepHeavy and its exact simulation KH′ (Balcer & Vadhan, full version Alg. 6.1, Alg. 6.4,
Prop. 6.5, App. A; ITCS version Alg. 4–5; docs/mechanisms.md#keepheavy-and-kh), as programs
(:mod:`dpplug.program`).

**KeepHeavy** (:func:`keep_heavy`): the basic histogram over all of X, then only the bins whose
noisy count is *strictly* above the (n+1)-th largest noisy count (never "the top n": with
discrete noise, ties are common and the released set must not depend on tie-breaking). It
releases at most n bins with counts in [1, n]. Its cost is |X| sampler calls, so it is the
reference for tiny universes.

**KH′** (:func:`kh_prime`), for |X| ≥ 2n + 1: noisy counts for the nonempty bins A only; a
uniformly random sequence q_0 … q_n of distinct elements of X ∖ A (App. A's draws
z ← U(|X| − |T|), decoded by a sparse Fisher–Yates shuffle); the top n+1 order statistics of
the m = |X| − |A| empty bins' noise, given to q_0 … q_n in that order; then the KeepHeavy cut
on A ∪ {q_i}. The empty bins outside {q_i} are at most the (n+1)-th empty value, so the cut is
the same as KeepHeavy's, and the output law is identical (tests: exact enumeration on |X| = 5,
n = 2).

Both return the released bins as a tuple of (index, count) in canonical order.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from functools import partial

from dpplug.kinds import CountingQuerySampler
from dpplug.program import Independent, Noise, Program, Uniform

Released = tuple[tuple[int, int], ...]
#: (m, k) → a program for the top k order statistics of m empty bins' noise.
OrderStatistics = Callable[[int, int], Program[tuple[int, ...]]]


def cut(noisy: Sequence[tuple[int, int]], n: int) -> Released:
    """The bins whose noisy count is strictly above the (n+1)-th largest, in index order."""
    cutoff = -1 if len(noisy) <= n else sorted((c for _, c in noisy), reverse=True)[n]
    return tuple(sorted((i, c) for i, c in noisy if c > cutoff))


def keep_heavy(
    sampler: CountingQuerySampler, size: int, indices: Sequence[int], counts: Sequence[int]
) -> Program[Released]:
    """KeepHeavy_M over the universe [0, size) (full version Alg. 6.1)."""
    dense = [0] * size
    for index, count in zip(indices, counts, strict=True):
        dense[index] = count
    noisy = yield Noise(sampler, dense)
    return cut(list(enumerate(noisy)), sampler.count_bounds[1])


def distinct_elements(size: int, taken: Sequence[int], k: int) -> Program[tuple[int, ...]]:
    """A uniformly random sequence of k distinct elements of [0, size) ∖ *taken* (App. A).

    The i-th element is drawn with z ← U(size − |taken| − i), as in App. A, by a Fisher–Yates
    shuffle of the free elements' ranks 0 … m−1 kept sparse (a dict of the positions moved so
    far), so each step costs O(log |taken|) whatever the size of X. The free element of rank f
    is f plus the number of taken elements t_i (sorted) with t_i − i ≤ f.
    """
    below = [t - i for i, t in enumerate(sorted(taken))]  # free elements below each t_i
    free = size - len(below)
    moved: dict[int, int] = {}
    chosen = []
    for i in range(k):
        z = yield Uniform(free - i)
        j = i + z - 1
        rank = moved.get(j, j)
        moved[j] = moved.get(i, i)
        chosen.append(rank + bisect.bisect_right(below, rank))
    return tuple(chosen)


def _noisy(sampler: CountingQuerySampler, counts: Sequence[int]) -> Program[tuple[int, ...]]:
    """The nonempty bins' noisy counts (none for no bins)."""
    return (yield Noise(sampler, counts)) if len(counts) else ()


def kh_prime(
    sampler: CountingQuerySampler,
    size: int,
    indices: Sequence[int],
    counts: Sequence[int],
    order_statistics: OrderStatistics,
) -> Program[Released]:
    """KH′_M (full version Alg. 6.4) with the given order-statistics sampler (exact or
    approximate)."""
    n = sampler.count_bounds[1]
    # Three independent parts, drawn in this order (one Independent draw, so that an exact law
    # enumerates each part once).
    noisy, picked, values = yield Independent(
        partial(_noisy, sampler, counts),
        partial(distinct_elements, size, indices, n + 1),
        partial(order_statistics, size - len(indices), n + 1),
    )
    candidates = [*zip(indices, noisy, strict=True), *zip(picked, values, strict=True)]
    return cut(candidates, n)
