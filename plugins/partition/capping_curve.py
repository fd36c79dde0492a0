"""A baseline's keep-probability curve as grid numerators that cap a :class:`KeepTable`
(docs/mechanisms.md#laplace-thresholding, #gaussian-thresholding).

The Laplace and Gaussian baselines are continuous; their curves only *cap* the exact recurrence,
whose own bounds carry the privacy proof, so they may be evaluated in floating point. They are
evaluated with numpy a block of unit counts at a time and lowered by a relative margin of 2^-44,
above the float error: the exponent or normal-CDF argument is at most about 90 in size and
carries a relative error of a few units of 2^-53 (from τ and n − τ), which moves the value by at
most about 100·2^-53 < 2^-46 relatively. So the grid curve stays below the baseline:
⌊2^63·π(n)·(1 − 2^-44)⌋ where π(n) ≤ 1/2, and 2^63 − ⌈2^63·(1 − π(n))·(1 + 2^-44)⌉ above, from
the drop probability 1 − π(n) computed directly (no cancellation near 1). The last unit is
rounded up: where the baseline drops with probability below 2^-63·(1 + 2^-44), the grid keeps
with probability 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from dpplug.plugins.partition.keep_table import ONE

Floats = npt.NDArray[np.float64]

#: The relative margin that keeps the float curve below the baseline.
MARGIN = 2.0**-44
_BLOCK = 4096


class CappingCurve:
    """n ↦ the grid numerator of π(n), from vectorised ``keep(n)`` = π(n) and ``drop(n)`` =
    1 − π(n) (both on float arrays of unit counts)."""

    def __init__(self, keep: Callable[[Floats], Floats], drop: Callable[[Floats], Floats]) -> None:
        self._keep, self._drop = keep, drop
        self._start = -1
        self._block: npt.NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)

    def __call__(self, n: int) -> int:
        if not self._start <= n < self._start + self._block.size:
            self._start = n
            self._block = self._numerators(np.arange(n, n + _BLOCK, dtype=np.float64))
        return int(self._block[n - self._start])

    def _numerators(self, units: Floats) -> npt.NDArray[np.uint64]:
        keep, drop = self._keep(units), self._drop(units)
        low = np.floor(keep * (ONE * (1 - MARGIN))).astype(np.uint64)
        gap = np.ceil(drop * (ONE * (1 + MARGIN))).astype(np.uint64)
        values = np.where(keep <= 0.5, low, np.uint64(ONE) - gap)
        return np.where(gap <= 1, np.uint64(ONE), values).astype(np.uint64)
