"""Partition selectors (broken: rtg-*, honest: rtg-ok-*)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gmpy2 import mpq

import dpplug
from dpplug.exact import ceil_div, exp_lower
from dpplug.guarantee import COUNT_SENSITIVITY_1, Neighbouring, Relation
from dpplug.params import epsilon_param, probability_param
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.randomness import RandomSource, SeededSource


class LinearOverflow(dpplug.PartitionSelector):
    """FLAW: the docs' linear selector verbatim, keep iff U(den) ≤ units·num in int64: for
    num ≥ 2 the product wraps past 2^63, so huge partitions are never kept (π jumps 1 → 0)."""

    name = "rtg-ps-linear-overflow"
    summary = "Keep a partition of n units with probability min(1, nδ): (0, δ)-DP."
    reference = "Desfontaines, Voss, Gipson, Mandayam 2022, Thm 2 (the case ε = 0)"
    schema = dpplug.Schema((probability_param("delta", "δ per unit."),))
    conformance_cases = ({"delta": mpq(3, 8)}, {"delta": mpq(1, 8)})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.delta = self.params["delta"]
        self.saturation = int(ceil_div(self.delta.denominator, self.delta.numerator))

    @property
    def per_partition(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(1, self.delta, Neighbouring(Relation.ADD_REMOVE))

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(1, self.delta, Neighbouring(Relation.ADD_REMOVE, max_partitions=1))

    def _keep_probability(self, units: int) -> Any:
        return min(mpq(1), units * self.delta)

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        if public is not None:
            raise dpplug.NotSupported(f"{self.name} has no public partitions")
        d = int(self.delta.denominator)
        draws = source.uniform_array(d, unit_counts.size).reshape(unit_counts.shape)
        return dpplug.Selection(draws <= unit_counts * int(self.delta.numerator))

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        bound = dpplug.ErrorBound(0, beta)
        threshold = max(self.kept_from(beta) - 1, 0)
        return dpplug.Accuracy(bound, bound, threshold, "smallest n with nδ ≥ 1 − β")


class LinearNoOverflow(LinearOverflow):
    """CONTROL: the linear selector with the product taken on min(units, saturation), which
    never overflows (π(n) = 1 from the saturation on, so the law is unchanged)."""

    name = "rtg-ok-linear-selection"

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        if public is not None:
            raise dpplug.NotSupported(f"{self.name} has no public partitions")
        d = int(self.delta.denominator)
        draws = source.uniform_array(d, unit_counts.size).reshape(unit_counts.shape)
        capped = np.minimum(unit_counts, self.saturation)
        return dpplug.Selection(draws <= capped * int(self.delta.numerator))


class OneSidedRecurrence(dpplug.PartitionSelector):
    """FLAW: π(n+1) = min(1, L·π(n) + δ), the first half of the optimal recurrence only: the
    drop side 1 − π(n) ≤ L(1 − π(n+1)) + δ fails where π is capped at 1."""

    name = "rtg-ps-one-sided"
    summary = "Keep with π(n+1) = min(1, e^ε π(n) + δ), π(0) = 0 (exact rationals)."
    reference = "Desfontaines, Voss, Gipson, Mandayam 2022, Thm 1 (first regime)"
    schema = dpplug.Schema(
        (
            epsilon_param("ε per partition.", high=8),
            probability_param("delta", "δ per partition.", low=mpq(1, 1 << 30)),
        )
    )
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 10)},
        {"epsilon": mpq(1, 2), "delta": mpq(1, 50)},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.ratio = exp_lower(self.params["epsilon"], 16)
        self.delta = self.params["delta"]
        table = [mpq(0)]
        while table[-1] < 1 and len(table) < 4096:
            table.append(min(mpq(1), self.ratio * table[-1] + self.delta))
        if table[-1] < 1:
            raise dpplug.BadParameter("the table does not reach 1: raise epsilon or delta")
        self.table = table
        self.saturation = len(table) - 1

    @property
    def per_partition(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(self.ratio, self.delta, COUNT_SENSITIVITY_1)

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(
            self.ratio, self.delta, Neighbouring(Relation.ADD_REMOVE, max_partitions=1)
        )

    def _keep_probability(self, units: int) -> Any:
        return self.table[min(units, self.saturation)]

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        if public is not None:
            raise dpplug.NotSupported(f"{self.name} has no public partitions")
        flat = unit_counts.reshape(-1)
        keep = np.zeros(flat.size, dtype=bool)
        for i, n in enumerate(flat.tolist()):
            p = self.table[min(n, self.saturation)]
            keep[i] = source.uniform(int(p.denominator)) <= int(p.numerator)
        return dpplug.Selection(keep.reshape(unit_counts.shape))

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        bound = dpplug.ErrorBound(0, beta)
        return dpplug.Accuracy(bound, bound, max(self.kept_from(beta) - 1, 0), "π(n) ≥ 1 − β")


class FixedSeedDecider(OptimalPartitionSelection):
    """FLAW: decider() without a source uses SeededSource(0) "so PipelineDP runs are
    reproducible": the decisions are a public function of the unit counts (keep prob 0 or 1)."""

    name = "rtg-ps-decider-fixed-seed"
    summary = "Optimal partition selection; reproducible per-partition decider by default."

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        if source is None:
            source = SeededSource(0)  # reproducible pipelines
        return super().decider(source)


from dpplug.plugins.partition.truncated_geometric_thresholding import (  # noqa: E402
    TruncatedGeometricThresholding,
    spending_noise,
)

#: From this many units a partition is "heavy": always kept, so its count gets cheaper noise.
HEAVY = 1 << 20


class HeavyShortNoise(TruncatedGeometricThresholding):
    """FLAW: partitions of at least 2^20 units (far above the saturation, kept anyway) get their
    released count from a k-TSGD at 64·δ_c ("the keep decision no longer costs δ"): a shorter
    truncation whose Pr[X = k′] far exceeds the per-partition δ the guarantee composes."""

    name = "rtg-tgt-heavy-short-noise"
    summary = "truncated-geometric-thresholding; heavy partitions' counts with cheaper noise."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.heavy_noise = spending_noise(
            self.params["epsilon"] / self.budget.coordinates, min(self.budget.delta * 64, mpq(1, 4))
        )

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        selection = super()._select(unit_counts, source, public)
        flat = unit_counts.reshape(-1)
        heavy = flat >= HEAVY
        if heavy.any():
            noisy = selection.noisy_counts.reshape(-1).copy()
            noisy[heavy] = flat[heavy] + self.heavy_noise.sample(
                np.zeros(int(heavy.sum()), dtype=np.int64), source
            )
            keep = selection.keep.reshape(-1) | heavy
            return dpplug.Selection(
                keep.reshape(unit_counts.shape), noisy.reshape(unit_counts.shape)
            )
        return selection
