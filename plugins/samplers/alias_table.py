"""Walker's alias method on a dyadic grid, in exact integers (Walker 1977; Vose 1991 for the
linear-time construction), for samplers whose running time must not depend on their output.

**Table.** Outcomes 0 … M − 1 with non-negative integer weights W_0 … W_{M−1} summing to 2^m·K
are spread over 2^m ≥ M columns of capacity K: column i keeps ``threshold[i]`` units for its own
outcome i (0 for the padding columns i ≥ M) and gives the other K − threshold[i] units to
``alias[i]``. Vose's construction moves whole units only (a column short of K takes the missing
units from one column with more, which then counts what it has left), so every step is exact and
the outcome j receives exactly W_j units in all: :meth:`AliasTable.weights` reads them back from
the columns. With a column drawn uniformly (m bits) and a unit of it uniformly, an outcome has
probability exactly W_j/(2^m·K).

**Time.** A draw is one column index and one position inside the column, then a fixed number of
comparisons, whatever the outcome: the property a time-oblivious sampler needs (Kerschbaum, Lee
and Wu 2025, who build their sampler this way; Dov, David, Nguyen and Tran 2023 for the notion).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpplug.errors import PluginFault

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class AliasTable:
    """2^``column_bits`` columns of ``capacity`` units each (see the module docstring)."""

    column_bits: int
    capacity: int
    outcomes: int
    threshold: Ints
    alias: Ints

    def weights(self) -> list[int]:
        """The units each outcome receives over all columns: W_j, read back from the table."""
        found = [0] * self.outcomes
        pairs = zip(self.threshold.tolist(), self.alias.tolist(), strict=True)
        for i, (own, other) in enumerate(pairs):
            if own:
                found[i] += own
            found[other] += self.capacity - own
        return found


def build(weights: Sequence[int], column_bits: int) -> AliasTable:
    """The alias table of *weights* (non-negative integers summing to a multiple of
    2^column_bits, at most 2^column_bits of them), by Vose's construction in exact integers; a
    table that does not read back *weights* is a bug (:class:`~dpplug.errors.PluginFault`)."""
    columns = 1 << column_bits
    total = sum(weights)
    if len(weights) > columns or total % columns or min(weights, default=0) < 0:
        raise PluginFault("an alias table needs at most 2^m non-negative weights summing to 2^m·K")
    capacity = total // columns
    units = [*weights, *[0] * (columns - len(weights))]
    threshold, alias = [capacity] * columns, list(range(columns))
    small = [i for i in range(columns) if units[i] < capacity]
    large = [i for i in range(columns) if units[i] > capacity]
    while small and large:
        short, full = small.pop(), large[-1]
        threshold[short], alias[short] = units[short], full
        units[full] -= capacity - units[short]
        if units[full] <= capacity:
            large.pop()
            if units[full] < capacity:
                small.append(full)
    # A column left over holds exactly K units of its own outcome (the sums balance exactly).
    table = AliasTable(
        column_bits,
        capacity,
        len(weights),
        np.array(threshold, dtype=np.int64),
        np.array(alias, dtype=np.int64),
    )
    if table.weights() != list(weights):
        raise PluginFault("the alias table does not reproduce its weights")
    return table
