"""Exact inverse-CDF sampling in bulk: where a uniform V falls among rational boundaries.

A finite law with CDF values 0 ≤ c_1 ≤ … ≤ c_K ≤ 1 (exact rationals, possibly with millions of
bits) is sampled by the index #{i : c_i ≤ V} of a uniform V ∈ [0, 1). :class:`BoundaryTable`
keeps, for every boundary, 63-bit integer bounds ⌊c_i·2^63⌋ ≤ c_i·2^63 ≤ ⌈c_i·2^63⌉ (from
rigorous enclosures, :mod:`dpplug.enclosure`), draws the first 63 bits of each V as one integer w
and locates it with two vectorised binary searches: every boundary whose upper bound is at most w
is certainly ≤ V, every one whose lower bound exceeds w is certainly > V. Only when a boundary's
bounds straddle w (probability at most about 2K·2^-63 per draw) are further bits of V drawn, 64
at a time, and compared with the exact c_i until the index is certain. The index is therefore
exact, as if V were drawn to infinite precision; the number of draws is one per sample except
in those rare cases, and never depends on anything but chance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.enclosure import Enclosure, scaled_ceil, scaled_floor
from dpplug.randomness import RandomSource

#: Bits of V located in bulk (one draw of :meth:`RandomSource.bits_array`).
LEAD_BITS = 63
_SCALE = 1 << LEAD_BITS


@dataclass(frozen=True)
class BoundaryTable:
    """63-bit bounds of the boundaries c_1 ≤ … ≤ c_K, and their exact values for refinement."""

    lower: npt.NDArray[np.uint64]
    upper: npt.NDArray[np.uint64]
    exact: Callable[[int], Any]  # i (0-based) ↦ c_{i+1}, an exact rational

    @classmethod
    def build(cls, enclosures: list[Enclosure], exact: Callable[[int], Any]) -> BoundaryTable:
        """The table of boundaries given by *enclosures* (non-decreasing exact values in [0, 1])."""
        lower = [min(max(scaled_floor(e.lo, LEAD_BITS), 0), _SCALE) for e in enclosures]
        upper = [min(max(scaled_ceil(e.hi, LEAD_BITS), 0), _SCALE) for e in enclosures]
        # The exact values are non-decreasing, so a running maximum of lower bounds (minimum of
        # upper bounds from the right) still bounds them.
        low = np.maximum.accumulate(np.array(lower, dtype=np.uint64))
        high = np.minimum.accumulate(np.array(upper, dtype=np.uint64)[::-1])[::-1]
        return cls(low, np.ascontiguousarray(high), exact)

    def locate(self, size: int, source: RandomSource) -> npt.NDArray[np.int64]:
        """#{i : c_i ≤ V} for *size* independent uniform V ∈ [0, 1), exactly."""
        w = source.bits_array(LEAD_BITS, size)
        # #{i : lower_i ≤ w}: every other boundary is certainly above V. Those below it are
        # certainly ≤ V unless the last of them has upper bound > w (bounds are non-decreasing).
        index: npt.NDArray[np.int64] = np.searchsorted(self.lower, w, side="right")
        last = np.maximum(index - 1, 0)
        for i in np.flatnonzero((index > 0) & (self.upper[last] > w)):
            certain = int(np.searchsorted(self.upper, w[i], side="right"))
            index[i] = self._refine(int(w[i]), certain, int(index[i]), source)
        return index

    def _refine(self, prefix: int, first: int, last: int, source: RandomSource) -> int:
        """The index for V ∈ [prefix, prefix + 1)·2^-63 whose boundaries first … last − 1 are
        undecided: draw 64 more bits of V at a time and compare with the exact boundaries."""
        bits = LEAD_BITS
        while first < last:
            prefix, bits = (prefix << 64) | source.bits(64), bits + 64
            low, high = mpq(prefix, 1 << bits), mpq(prefix + 1, 1 << bits)
            values = [self.exact(i) for i in range(first, last)]
            first, last = (
                first + sum(1 for c in values if c <= low),
                first + sum(1 for c in values if c < high),
            )
        return first
