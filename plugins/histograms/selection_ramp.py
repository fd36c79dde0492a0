"""The keep probabilities of the blanket histogram's selection: a dyadic ramp that rises as fast
as a λ-DP selection allows (docs/blanket-histogram.md).

A nonempty bin of true count c ≥ 1 is kept with probability q(c) = m_c/2^B, independently of
every other bin, and an empty bin never is (q(0) = 0). What the privacy proof needs of q is:

- q(1) ≤ Q (small enough for the padding to hide a bin of count 1);
- for every c ≥ 1, q(c) ≤ q(c + 1) ≤ λ·q(c) and 1 − q(c) ≤ λ·(1 − q(c + 1)): moving one row
  changes the probability of keeping, and of dropping, a nonempty bin by a factor at most λ;
- q(c) < 1.

Thresholding a count plus two-sided geometric noise has these properties (Kerschbaum, Lee and
Wu's selection), with probabilities whose exact values take thousands of bits when q(1) is tiny
and λ close to 1. The ramp has them on a grid of 2^B: m_1 = ⌊Q·2^B⌋ and

    m_{c+1} = min(⌊λ·m_c⌋, 2^B − ⌈(2^B − m_c)/λ⌉),

the largest value both ratio conditions allow (λ = a/b, integer arithmetic), until it stops
growing, which happens only when 2^B − m_c < λ/(λ − 1); from there q stays at its last value (a
plateau keeps both ratios at 1). B is large enough that the ramp climbs from its first step
(m_1·(λ − 1) ≥ 2^64 units) and that the plateau drops a bin with probability below 2^-64/n.
Every condition is checked in integers when the ramp is built. So the keep probabilities are
exact dyadic rationals of B bits, sampled exactly by locating one uniform draw per bin among
them (:class:`~dpplug.inverse_cdf.BoundaryTable`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.enclosure import Enclosure
from dpplug.errors import BadParameter, PluginFault
from dpplug.exact import ceil_div, ceil_log2
from dpplug.inverse_cdf import BoundaryTable
from dpplug.randomness import RandomSource

#: Guard bits: the ramp's first step and its plateau are 2^GUARD_BITS units from stalling.
GUARD_BITS = 64
#: The longest ramp (a list of integers of B bits).
MAX_STEPS = 1 << 18


@dataclass(frozen=True)
class SelectionRamp:
    """q(c) = steps[c − 1]/2^bits for 1 ≤ c ≤ len(steps), steps[-1]/2^bits above, 0 at 0."""

    ratio: Any
    bits: int
    steps: tuple[int, ...]
    _tables: dict[int, BoundaryTable] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, ratio: Any, first: Any, n: int) -> SelectionRamp:
        """The ramp for λ = *ratio* > 1 with q(1) ≤ *first* < 1, up to count *n*."""
        a, b = int(ratio.numerator), int(ratio.denominator)
        climb = ceil_log2(1 / (first * (ratio - 1)))  # m_1·(λ − 1) ≥ 2^GUARD_BITS
        plateau = ceil_log2(n * ratio / (ratio - 1))  # 2^B − m_last < λ/(λ − 1) units
        bits = max(climb, plateau, 0) + GUARD_BITS
        top = 1 << bits
        m = int(first * top // 1)
        steps = [m]
        while len(steps) < n:
            grown = min(m * a // b, top - ceil_div((top - m) * b, a))
            if grown == m:
                break
            if len(steps) == MAX_STEPS:
                raise BadParameter(
                    f"the blanket histogram's selection would need more than {MAX_STEPS:,} "
                    "steps (a tiny ε for the selection over a huge universe); give a larger "
                    "epsilon or selection_share, or declare a smaller universe"
                )
            steps.append(grown)
            m = grown
        ramp = cls(ratio, bits, tuple(steps))
        ramp.check(first)
        return ramp

    def check(self, first: Any) -> None:
        """Every property the privacy proof needs, in integers (PluginFault: a bug)."""
        a, b, top = int(self.ratio.numerator), int(self.ratio.denominator), 1 << self.bits
        steps = self.steps
        ok = 0 < steps[0] and steps[0] <= first * top and steps[-1] < top
        for low, high in pairwise(steps):
            ok = ok and low <= high and high * b <= low * a and (top - low) * b <= (top - high) * a
        if not ok:
            raise PluginFault("the blanket histogram's selection ramp fails its own conditions")

    def units(self, count: int) -> int:
        """m_count (0 for count 0)."""
        if count <= 0:
            return 0
        return self.steps[min(count, len(self.steps)) - 1]

    def keep(self, count: int) -> Any:
        """q(count), exactly."""
        return mpq(self.units(count), 1 << self.bits)

    def drop(self, count: int) -> Any:
        """1 − q(count), exactly."""
        return 1 - self.keep(count)

    @property
    def median(self) -> int:
        """The smallest count kept with probability at least 1/2 (len + 1 if none is)."""
        half = 1 << (self.bits - 1)
        return next((c for c, m in enumerate(self.steps, 1) if m >= half), len(self.steps) + 1)

    def _table(self, count: int) -> BoundaryTable:
        """The boundary q(count) of a uniform V: the bin is kept iff V < q(count)."""
        if count not in self._tables:
            keep = self.keep(count)
            self._tables[count] = BoundaryTable.build([Enclosure.of(keep)], lambda _i: keep)
        return self._tables[count]

    def sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.bool_]:
        """Independent exact Bernoulli(q(c)) for each count c ≥ 1, drawn count value by count
        value in increasing order (one 63-bit draw per bin, more only where a draw lands within
        2^-63 of q)."""
        kept = np.zeros(counts.size, dtype=bool)
        values, groups, sizes = np.unique(counts, return_inverse=True, return_counts=True)
        order = np.argsort(groups, kind="stable")
        ends = np.cumsum(sizes)
        for value, start, end in zip(
            values.tolist(), (ends - sizes).tolist(), ends.tolist(), strict=True
        ):
            where = order[start:end]
            kept[where] = self._table(value).locate(where.size, source) == 0
        return kept
