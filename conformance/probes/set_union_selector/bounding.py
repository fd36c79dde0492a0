"""The bound to Δ₀ on units far larger than the exact checks' (the size dimension of ``select``:
every release bounds its units with :meth:`~dpplug.kinds.SetUnionSelector.bound`).

A unit of t labels keeps a uniform Δ₀-subset of them (Gopi et al. 2020, §3: the contribution
bound is part of the mechanism, and the privacy analysis takes any subset, but the declared law
of a release is that of a uniform one). The exact checks enumerate units of 1–3 labels; here
units of :data:`SIZES` labels (past 2^8, 2^10 and 2^12, where code keyed to large units takes
another path) are bounded many times and two statistics of the kept labels' positions are
tested against their exact laws under a uniform k-subset of t:

- the smallest position i: C(t − 1 − i, k − 1)/C(t, k);
- the span s between the smallest and the largest (k ≥ 2): (t − s)·C(s − 1, k − 2)/C(t, k).

A window of k neighbouring labels, the first k, or a subset drawn from part of the unit fails one
of them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from math import comb
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.conformance.probes.arrays import binned, coarsened
from dpplug.conformance.probes.base import LawTest
from dpplug.kinds.set_union_selector import SetUnionSelector
from dpplug.pmf import Pmf
from dpplug.randomness import SeededSource
from dpplug.surfaces import Dimension

#: Labels of the units bounded.
SIZES = ((1 << 8) + 1, (1 << 10) + 1, (1 << 12) + 1)
#: Bins of about equal mass each statistic is pooled into (a χ² test over thousands of sparse
#: cells has no power against a smooth change).
BINS = 32


def bounding_tests(selector: SetUnionSelector, where: str, samples: int) -> list[LawTest]:
    """The two tests of the module docstring at each size of :data:`SIZES` above Δ₀."""
    k = selector.max_partitions
    tests = []
    for index, t in enumerate(SIZES):
        if t <= k:
            continue
        positions = _Positions(selector, t, samples, 97 + index)
        what = f"{where}: bound() of a unit of {t} labels, {samples} times"
        tests.append(
            LawTest(
                "select",
                (Dimension.SIZE,),
                f"{what}: the smallest kept label's position",
                partial(positions.binned, _smallest_law(t, k), _smallest),
                partial(_exact, _smallest_law(t, k)),
            )
        )
        if k >= 2:
            tests.append(
                LawTest(
                    "select",
                    (Dimension.SIZE,),
                    f"{what}: the span of the kept labels' positions",
                    partial(positions.binned, _span_law(t, k), _span),
                    partial(_exact, _span_law(t, k)),
                )
            )
    return tests


class _Positions:
    """The kept positions of many bounds of one unit, drawn once per seed."""

    def __init__(self, selector: SetUnionSelector, t: int, samples: int, salt: int) -> None:
        self.selector, self.t, self.samples, self.salt = selector, t, samples, salt
        self._seed: int | None = None
        self._kept: npt.NDArray[np.int64] = np.zeros((0, 0), dtype=np.int64)

    def kept(self, seed: int) -> npt.NDArray[np.int64]:
        if self._seed != seed:
            labels = tuple(range(self.t))  # canonical order; a label is its position
            source = SeededSource(seed * 7919 + self.salt)
            rows = [self.selector.bound(labels, source) for _ in range(self.samples)]
            self._kept, self._seed = np.array(rows, dtype=np.int64).reshape(self.samples, -1), seed
        return self._kept

    def binned(
        self, law: Pmf, statistic: Callable[[npt.NDArray[np.int64]], Any], seed: int
    ) -> npt.NDArray[np.int64]:
        """The statistic of each bound, pooled into the bins of :func:`_exact`'s law."""
        kept = self.kept(seed)
        if kept.shape[1] != self.selector.max_partitions:  # not Δ₀ labels: an impossible value
            return np.full(self.samples, -1, dtype=np.int64)
        ends, _ = coarsened(law, BINS)
        return binned(np.asarray(statistic(kept), dtype=np.int64), ends)


def _smallest(kept: npt.NDArray[np.int64]) -> Any:
    return kept.min(axis=1)


def _span(kept: npt.NDArray[np.int64]) -> Any:
    return kept.max(axis=1) - kept.min(axis=1)


def _exact(law: Pmf) -> tuple[Pmf, Any]:
    """The exact law of the bin a statistic falls in (no distance to the true law)."""
    return coarsened(law, BINS)[1], 0


def _smallest_law(t: int, k: int) -> Pmf:
    total = comb(t, k)
    return Pmf({i: mpq(comb(t - 1 - i, k - 1), total) for i in range(t - k + 1)})


def _span_law(t: int, k: int) -> Pmf:
    total = comb(t, k)
    return Pmf({s: mpq((t - s) * comb(s - 1, k - 2), total) for s in range(k - 1, t)})
