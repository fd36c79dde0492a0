"""Prevalence arithmetic shared by the anonymized-histogram releasers (Suresh 2019, §4): exact
integer steps on (r, φ_r) pairs, so a histogram of n items costs O(√n) work, not O(n).
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

Pairs = Sequence[tuple[int, int]]


def ceil_sqrt(x: Any) -> int:
    """⌈√x⌉ for a rational x ≥ 0, exactly: the smallest t with t² ≥ x, i.e. with t² ≥ ⌈x⌉."""
    q = mpq(x)
    m = -(-int(q.numerator) // int(q.denominator))
    return 0 if m <= 0 else math.isqrt(m - 1) + 1


def prevalence(pairs: Pairs, r: int) -> int:
    """φ_r of sorted (r, φ_r) pairs."""
    index = bisect.bisect_left(pairs, (r, 0))
    return pairs[index][1] if index < len(pairs) and pairs[index][0] == r else 0


def small_cumulative(pairs: Pairs, t: int, at_t: int) -> npt.NDArray[np.int64]:
    """φ^{bs}_{r+} for r = 1..t (PRIVHIST step 2(c), small part) of the improper histogram
    equal to *pairs* below t and with φ_t = *at_t* (which may be negative).

    The paper's split φ^{bs}_r = max(0, Σ_{s=r}^{t} φ^b_s − Σ_{s=r+1}^{t} φ^{bs}_s) has the
    cumulative form φ^{bs}_{r+} = max(0, max_{s≥r} Σ_{u=s}^{t} φ^b_u): a negative φ_t removes
    counts from the top of the small part.
    """
    phi = np.zeros(t, dtype=np.int64)  # φ_1 … φ_t
    for r, count in pairs:
        if r >= t:
            break
        phi[r - 1] = count
    phi[t - 1] = at_t
    tail = np.cumsum(phi[::-1])  # Σ_{u=s}^{t} φ_u for s = t, t−1, …, 1
    return np.maximum(np.maximum.accumulate(tail), 0)[::-1]


def large_counts(pairs: Pairs, t: int, at_t1: int) -> list[int]:
    """N^{bℓ}_(1) ≥ N^{bℓ}_(2) ≥ … (PRIVHIST step 2(c), large part): the counts above t + 1 of
    *pairs* and φ_{t+1} = *at_t1* (which may be negative), as sorted counts.

    The paper's split φ^{bℓ}_r = max(0, Σ_{s=t+1}^{r} φ^b_s − Σ_{s=t+1}^{r−1} φ^{bℓ}_s) has the
    cumulative form max(0, max_{s≤r} Σ_{u=t+1}^{s} φ^b_u): a negative φ_{t+1} removes the
    smallest counts of the large part.
    """
    deficit = max(0, -at_t1)
    kept: list[tuple[int, int]] = []
    for r, count in pairs:
        if r <= t + 1:
            continue
        taken = min(deficit, count)
        deficit -= taken
        if count > taken:
            kept.append((r, count - taken))
    ordered = [r for r, count in reversed(kept) for _ in range(count)]
    return ordered + [t + 1] * max(0, at_t1)


def pairs_of_runs(runs: Sequence[tuple[int, int]], positions: Sequence[int]) -> dict[int, int]:
    """φ_r = φ_{r+} − φ_{r′+} for a non-increasing cumulative prevalence given as *runs*
    (value, length) over the points *positions* (r′ the next point, zero beyond the last): a
    step only where a run ends, at that run's last point."""
    pairs: dict[int, int] = {}
    end = -1
    for (value, length), (following, _) in zip(runs, [*runs[1:], (0, 0)], strict=True):
        end += length
        if value > following:
            pairs[positions[end]] = value - following
    return pairs


def add_counts(prevalences: dict[int, int], counts: Iterable[int]) -> dict[int, int]:
    """*prevalences* with the multiset *counts* added (H^{ds} + H^{dℓ}, step L3)."""
    total = Counter(prevalences)
    total.update(counts)
    return dict(total)


def remove_closest(prevalences: dict[int, int], target: int, m: int) -> dict[int, int]:
    """*prevalences* without the m counts closest to *target* (step L4), ties to the larger
    count, so the removal is deterministic; all counts when there are fewer than m."""
    left = dict(prevalences)
    keys = sorted(left)
    above = bisect.bisect_left(keys, target)  # keys[above] ≥ target > keys[above − 1]
    below = above - 1
    while m > 0 and (above < len(keys) or below >= 0):
        up = keys[above] - target if above < len(keys) else None
        down = target - keys[below] if below >= 0 else None
        if down is None or (up is not None and up <= down):
            r, above = keys[above], above + 1
        else:
            r, below = keys[below], below - 1
        taken = min(m, left[r])
        m -= taken
        left[r] -= taken
    return {r: phi for r, phi in left.items() if phi}


def smoothed_totals(pairs: Pairs, boundaries: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """X_i = (s_i − s_{i−1})·φ^v_{s_i+} (PRIVHIST-HIGHPRIVACY H3 and the float-free H4): the
    cumulative prevalences of the histogram smoothed onto the boundaries s_1 < s_2 < …
    (s_0 = 0), scaled to integers.

    H3 splits a count c with s_{i−1} < c ≤ s_i between s_{i−1} and s_i in proportions
    (s_i − c) : (c − s_{i−1}), so it adds 1 to φ^v_{s_j+} for j < i and (c − s_{i−1})/w_i for
    j = i, with w_i = s_i − s_{i−1}: X_i = Σ_c min(max(c − s_{i−1}, 0), w_i), an integer that a
    count moving by one changes in exactly one i, by one. Counts must be at most the last
    boundary.
    """
    starts = np.concatenate(([0], boundaries[:-1]))
    widths = boundaries - starts
    counts = np.array([c for c, _ in pairs], dtype=np.int64)
    phi = np.array([count for _, count in pairs], dtype=np.int64)
    interval = np.searchsorted(boundaries, counts, side="left")  # s_{i−1} < c ≤ s_i
    at = np.zeros(len(boundaries) + 1, dtype=np.int64)
    partial = np.zeros(len(boundaries), dtype=np.int64)
    np.add.at(at, interval, phi)
    np.add.at(partial, interval, (counts - starts[interval]) * phi)
    beyond = np.cumsum(at[::-1])[::-1][1:]  # counts in intervals after i, i.e. c > s_i
    return widths * beyond + partial
