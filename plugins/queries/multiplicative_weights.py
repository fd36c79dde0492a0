"""The sparse multiplicative weights data structure and its update (Blum & Roth, "Fast Private
Data Release Algorithms for Sparse Queries", RANDOM 2013, Def. 3.4, Alg. 1, Thm 3.5;
docs/mechanisms.md#sparse-multiplicative-weights).

s weights 𝒟[1..s], all 1/s at first, and a table h from labels to slots filled in the order
labels are first updated. A query is evaluated as Σ_{x: Q(x) > 0} Q(x)·𝒟[h(x)], a label without
a slot reading the weight of the first free slot (every free slot has the same weight: free
slots are only ever renormalised). An update with the query Q and an estimate Â gives every
unassigned label of the support a slot, multiplies 𝒟[h(x)] by e^{−ηQ(x)} if Â is below the
hypothesis's answer and by e^{+ηQ(x)} otherwise (η = α/2), and renormalises all s slots.

**Thm 3.5.** Every sequence of updates in which each query has |Q(D) − Q(𝒟_t)| ≥ α and
|Â_t − Q(D)| < α has length at most 4(ln s + 1/e)/α² < B(α) = 4(ln s + 1)/α² (the potential
Ψ_t = Σ_x D̂[x]·ln(D̂[x]/𝒟_t[h_T(x)]) starts at most ln s, never drops below −1/e, and drops by at
least α²/4 per update; D̂ = D/n may sum to less than 1 when the data has fewer than n rows, which
keeps both bounds). With s the smallest integer with s/(ln s + 1) ≥ 4m/α², at most m·B(α) ≤ s
slots are ever assigned, so the structure never reports FAILURE.

**Cost and representation.** Only assigned slots are stored, as log-weights with a common
normaliser, so an evaluation and an update touch the query's support only: O(m) time, whatever
|X| and s (s can be astronomically large; it is only a count), and memory for the labels assigned
so far. The weights are floats: they are post-processing of released answers, so privacy does
not depend on them; their rounding errors (relative 2^−52 per operation) are negligible against
the per-update drop α²/4 of the potential.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dpplug.errors import PluginFault

Label = Any


class SparseWeights:
    """Def. 3.4's (𝒟, h, ind) of size *slots*, updated with step η = *eta* (Alg. 1)."""

    def __init__(self, slots: int, eta: float) -> None:
        self.slots, self.eta = slots, eta
        self._slot: dict[Label, int] = {}
        self._log_weight: list[float] = []  # unnormalised ln 𝒟[slot] of assigned slots
        self._free_log_weight = -math.log(slots)  # unnormalised ln 𝒟 of every free slot
        self._log_norm = 0.0  # ln Σ of all unnormalised weights

    @property
    def assigned(self) -> int:
        """ind − 1: the number of slots given to labels."""
        return len(self._log_weight)

    def weight(self, label: Label) -> float:
        """𝒟[h(label)], or the free slots' weight 𝒟[ind] for an unassigned label."""
        slot = self._slot.get(label)
        raw = self._free_log_weight if slot is None else self._log_weight[slot]
        return math.exp(raw - self._log_norm)

    def evaluate(self, labels: Sequence[Label], values: Sequence[float]) -> float:
        """Q(𝒟) = Σ_x Q(x)·𝒟[h(x)] for the support *labels* with Q(x) = *values*."""
        return math.fsum(q * self.weight(x) for x, q in zip(labels, values, strict=True))

    def update(self, labels: Sequence[Label], values: Sequence[float], increase: bool) -> None:
        """Alg. 1's update: assign slots to the support's new labels (FAILURE past s), multiply
        each 𝒟[h(x)] by e^{±ηQ(x)} (+ if *increase*: the estimate is not below the hypothesis),
        and renormalise (through the common normaliser, in O(m))."""
        fresh = [x for x in labels if x not in self._slot]
        if self.assigned + len(fresh) > self.slots:
            raise PluginFault(
                f"the sparse multiplicative weights structure of size s = {self.slots} reported "
                "FAILURE (more labels than slots), which Thm 3.5 rules out within its update "
                "bound; report it to dpplug's authors"
            )
        for x in fresh:
            self._slot[x] = self.assigned
            self._log_weight.append(self._free_log_weight)
        sign = 1.0 if increase else -1.0
        change = 0.0
        for x, q in zip(labels, values, strict=True):
            slot = self._slot[x]
            old = self._log_weight[slot]
            new = old + sign * self.eta * q
            change += math.exp(new - self._log_norm) - math.exp(old - self._log_norm)
            self._log_weight[slot] = new
        self._log_norm += math.log1p(change)
