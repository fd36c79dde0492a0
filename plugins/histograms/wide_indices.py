"""Increasing sets of universe indices of any size, vectorised below 2^64.

A universe holds up to 2^1024 labels (``bytes:8`` alone has a little more than 2^64), so its
indices do not fit in a machine word. :class:`Indices` keeps an increasing set of indices in two
parts: those below 2^64 as a ``uint64`` array (sorted, searched and merged by numpy), and the
others as Python ints (few for universes just above 2^64, all of them for huge ones, where the
work is Python's). Every index of the first part is below every index of the second, so the
order of the whole is the order of the parts.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpplug.universe import WORD

Words = npt.NDArray[np.uint64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Indices:
    """Increasing universe indices: ``small`` (below 2^64, uint64) then ``large`` (ints)."""

    small: Words
    large: list[int]

    @classmethod
    def of(cls, values: Iterable[int]) -> Indices:
        """The indices of increasing *values* (Python ints)."""
        listed = list(values)
        split = bisect.bisect_left(listed, WORD)
        small = np.fromiter(listed[:split], dtype=np.uint64, count=split)
        return cls(small, listed[split:])

    @classmethod
    def from_unsorted(cls, small: Words, large: Iterable[int]) -> Indices:
        """The set of distinct values *small* (below 2^64) and *large* (Python ints, any size),
        sorted."""
        rest = sorted(large)
        split = bisect.bisect_left(rest, WORD)
        low = np.sort(np.concatenate([small, np.array(rest[:split], dtype=np.uint64)]))
        return cls(low, rest[split:])

    def __len__(self) -> int:
        return int(self.small.size) + len(self.large)

    def tolist(self) -> list[int]:
        out: list[int] = self.small.tolist()
        return out + self.large

    def pick(self, mask: npt.NDArray[np.bool_]) -> Indices:
        """The indices where *mask* (over the whole set, in order) is true."""
        cut = self.small.size
        return Indices(
            self.small[mask[:cut]],
            [v for v, keep in zip(self.large, mask[cut:], strict=True) if keep],
        )

    def union(self, other: Indices) -> Indices:
        """The union with a disjoint set."""
        return Indices(
            np.sort(np.concatenate([self.small, other.small])), sorted(self.large + other.large)
        )

    def lookup(self, values: Indices) -> Ints:
        """For each of *values* (in order), its position in this set, or −1 if it is not in it."""
        found = np.full(len(values), -1, dtype=np.int64)
        cut = self.small.size
        if cut and values.small.size:
            where = np.minimum(np.searchsorted(self.small, values.small), cut - 1)
            hit = self.small[where] == values.small
            found[: values.small.size][hit] = where[hit]
        for i, value in enumerate(values.large, values.small.size):
            j = bisect.bisect_left(self.large, value)
            if j < len(self.large) and self.large[j] == value:
                found[i] = cut + j
        return found

    def shifted_by_rank(self, ranks: Indices) -> Indices:
        """r + #{i : v_i − i ≤ r} for each rank r of *ranks*: the free label of rank r when this
        set is taken out of the universe (the free labels below the i-th taken one, v_i, number
        v_i − i, a non-decreasing sequence)."""
        cut = self.small.size
        below_small = self.small - np.arange(cut, dtype=np.uint64)
        below_large = [v - i for i, v in enumerate(self.large, cut)]
        split = bisect.bisect_left(below_large, WORD)  # these fall back under 2^64
        below_small = np.concatenate([below_small, np.array(below_large[:split], dtype=np.uint64)])
        below_large = below_large[split:]
        shift = np.searchsorted(below_small, ranks.small, side="right").astype(np.uint64)
        labels = ranks.small + shift  # may pass 2^64: a suffix, since labels increase
        overflow = int(np.searchsorted(labels < ranks.small, True)) if labels.size else 0
        wrapped = [
            r + s
            for r, s in zip(ranks.small[overflow:].tolist(), shift[overflow:].tolist(), strict=True)
        ]
        below = below_small.size
        rest = [r + below + bisect.bisect_right(below_large, r) for r in ranks.large]
        return Indices(labels[:overflow], wrapped + rest)
