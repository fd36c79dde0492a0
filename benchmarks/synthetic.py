"""Synthetic (privacy unit, partition) rows for the PipelineDP benchmarks
(``pipelinedp_adapter.py``, ``scale.py``), from a numpy Generator seeded by the caller (the seed
builds inputs only; no mechanism uses it).

A unit has t rows, t drawn from Zipf(``touch_a``) clipped to [1, ``max_touch``] (most users
touch one partition, a few up to ``max_touch``); each row names a partition drawn from a Zipf
law of exponent ``partition_a`` truncated to ``partitions`` ranks, by inverse CDF
(``searchsorted`` on the cumulative weights), so both the popular head and a long tail of
partitions touched by one unit appear; the rows come in a random order (a unit's rows are not
next to each other, as in data collected over time).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Rows:
    """``size`` rows: unit ``units[i]`` contributes to partition ``partitions[i]``."""

    units: Ints
    partitions: Ints

    @property
    def size(self) -> int:
        return int(self.units.size)

    def as_tuples(self) -> list[tuple[int, int]]:
        """The rows as (unit, partition) tuples of Python ints, as a pipeline reads them."""
        return list(zip(self.units.tolist(), self.partitions.tolist(), strict=True))

    def describe(self) -> str:
        distinct = np.unique(self.partitions).size
        units = int(self.units.max()) + 1 if self.size else 0
        per_unit = np.bincount(self.units)
        return (
            f"{self.size:,} rows, {units:,} units (rows per unit: mean {per_unit.mean():.2f}, "
            f"max {per_unit.max():,}), {distinct:,} distinct partitions"
        )


def zipf_rows(
    size: int,
    partitions: int,
    max_touch: int,
    seed: int,
    chunk: int = 0,
    partition_a: float = 1.0,
    touch_a: float = 2.0,
) -> Rows:
    """*size* rows over *partitions* partition ranks (see the module docstring): chunk *chunk*
    of a larger data set, its units numbered from ``chunk * size`` so chunks share none (a
    cluster builds each chunk where it runs)."""
    rng = np.random.default_rng((seed, chunk))
    touches = np.minimum(rng.zipf(touch_a, size), max_touch)  # enough units for any size
    units = np.repeat(np.arange(touches.size, dtype=np.int64), touches)[:size] + chunk * size
    ranks = np.searchsorted(_cumulative(partitions, partition_a), rng.random(size), side="right")
    order = rng.permutation(size)  # a unit's rows anywhere in the data, as collected
    return Rows(units[order], np.minimum(ranks, partitions - 1).astype(np.int64)[order])


@functools.lru_cache(maxsize=4)
def _cumulative(partitions: int, a: float) -> npt.NDArray[np.float64]:
    """The truncated Zipf law's cumulative distribution over ranks 1 … *partitions*."""
    weights = np.arange(1, partitions + 1, dtype=np.float64) ** -a
    cumulative: npt.NDArray[np.float64] = np.cumsum(weights)
    return cumulative / cumulative[-1]
