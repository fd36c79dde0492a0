"""Keep probabilities on the 2^-63 grid: one 63-bit draw decides a partition, exactly.

A :class:`KeepTable` holds π̂(n) = v(n)/2^63 for n = 0 … N, with π̂(n) = 1 beyond. It is built by
the optimal recurrence of Desfontaines et al. (Lemma 1), optionally capped by a target curve
(the Laplace or Gaussian baselines), rounding down onto the grid at every step:

    v(n+1) = ⌊2^63 · min(target(n+1), L·π̂(n) + δ, 1 − (1 − δ − π̂(n))/L, 1)⌋.

Every term of the min is an upper bound that keeps the four inequalities of Lemma 1 true, and
rounding down keeps them true too (π̂ is non-decreasing, so the other two inequalities hold
trivially), so π̂ is exactly (ln L, δ)-DP for one partition whatever the target; the exact
per-partition δ actually used, max over n of the four inequalities' slack, is computed by
:func:`KeepTable.achieved_delta` and declared. A partition is kept iff a uniform 63-bit integer
is below v(n): a fixed number of draws (one) per partition, vectorised.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.randomness import RandomSource

GRID_BITS = 63
ONE = 1 << GRID_BITS
#: The most entries a table may have (8 MiB as 64-bit integers): the optimal π needs about
#: 2·ln(1/δ)/ε entries, so this bounds the budget per partition from below.
MAX_ENTRIES = 1 << 20


@dataclass(frozen=True)
class KeepTable:
    """Grid numerators v(0) = 0 ≤ v(1) ≤ … ≤ v(N) = 2^63 of the keep probabilities."""

    values: tuple[int, ...]

    @classmethod
    def build(
        cls,
        exp_epsilon: Any,
        delta: Any,
        target: Callable[[int], int] | None = None,
        step_cap: Callable[[int], int] | None = None,
    ) -> KeepTable:
        """The rounded-down recurrence, capped by ``target(n)`` (a grid numerator) if given.

        The target must reach 2^63 eventually (it may round its last step up: the recurrence's
        own bounds, not the target, carry the privacy proof). ``step_cap(v)`` bounds the step
        after the value v (the Gaussian selector's trade-off condition); where it would stop the
        table from growing, the table grows by one grid unit instead, a slack its owner accounts
        for. ValueError if δ is below the grid or the table would exceed :data:`MAX_ENTRIES`.
        """
        a, b = int(exp_epsilon.numerator), int(exp_epsilon.denominator)
        dn, dd = int(mpq(delta).numerator), int(mpq(delta).denominator)
        if dn * ONE < dd:
            raise ValueError("δ per partition is below the grid's resolution 2^-63")
        epsilon = math.log(a) - math.log(b)  # an estimate, to refuse hopeless sizes at once
        first_phase = math.log1p(math.tanh(epsilon / 2) * (dd / dn - 1)) / epsilon
        if first_phase > MAX_ENTRIES:
            raise ValueError(
                f"the keep table would have at least {first_phase:.3g} entries (ε per partition "
                f"{epsilon:.3g}, δ per partition {dn / dd:.3g}; the limit is 2^20)"
            )
        values = [0]
        while values[-1] < ONE:
            v = values[-1]
            grow = (a * v * dd + b * dn * ONE) // (b * dd)  # L·π + δ
            tail = (a * ONE * dd - (ONE * dd - dn * ONE - v * dd) * b) // (a * dd)  # 1 − (1−δ−π)/L
            nxt = min(grow, tail, ONE)
            if target is not None:
                nxt = min(nxt, target(len(values)))
            if step_cap is not None and v > 0:
                nxt = min(nxt, max(step_cap(v), v + 1))
            values.append(max(nxt, v))
            if len(values) > MAX_ENTRIES:
                raise ValueError("the keep table would have more than 2^20 entries")
        return cls(tuple(values))

    @property
    def saturation(self) -> int:
        """The first unit count kept with probability 1."""
        return len(self.values) - 1

    def probability(self, units: int) -> Any:
        """π̂(units) as an exact rational."""
        return mpq(self.values[min(units, self.saturation)], ONE)

    def achieved_delta(self, exp_epsilon: Any) -> Any:
        """The smallest δ for which every neighbouring pair satisfies the four inequalities at L
        (exact: integer arithmetic on the grid numerators)."""
        a, b = int(exp_epsilon.numerator), int(exp_epsilon.denominator)
        worst = 0
        for lo, hi in pairwise(self.values):
            worst = max(
                worst,
                hi * b - a * lo,
                lo * b - a * hi,
                (ONE - lo) * b - a * (ONE - hi),
                (ONE - hi) * b - a * (ONE - lo),
            )
        return mpq(worst, b * ONE)

    @cached_property
    def grid(self) -> npt.NDArray[np.uint64]:
        """The numerators as a numpy array, for vectorised decisions."""
        return np.array(self.values, dtype=np.uint64)

    def keep(self, units: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.bool_]:
        """Exact Bernoulli(π̂(units)) decisions, one 63-bit draw per partition."""
        index = np.minimum(units, self.saturation)
        draws = source.bits_array(GRID_BITS, units.size)
        kept: npt.NDArray[np.bool_] = draws < self.grid[index]
        return kept
