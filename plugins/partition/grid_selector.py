"""The common body of the keep-only selectors (optimal, Laplace, Gaussian): parameters, budget
split, keep table, pre-thresholding, guarantee and accuracy. A subclass only says which curve
caps the optimal recurrence (:meth:`GridSelector._target`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from dpplug.errors import BadData, BadParameter, NotSupported
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import PartitionSelector, Selection
from dpplug.params import Schema
from dpplug.plugins.partition.budget import SELECTOR_PARAMS, Budget
from dpplug.plugins.partition.keep_table import GRID_BITS, KeepTable
from dpplug.randomness import RandomSource, default_source


class GridSelector(PartitionSelector):
    """Keeps a partition with n units with probability π̂(n − m + 1) (0 below the pre-threshold
    m), π̂ a :class:`KeepTable`; one 63-bit draw per partition."""

    schema = Schema(SELECTOR_PARAMS)
    strict_time = True

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.budget = self._budget()
        try:
            self.table = KeepTable.build(
                self.budget.exp_epsilon, self.budget.delta, self._target(), self._step_cap()
            )
        except ValueError as exc:
            raise BadParameter(
                f"{self.name}: {exc}; raise epsilon or delta, or lower max_partitions_contributed"
            ) from None
        self.pre_threshold: int = self.params["pre_threshold"]
        self.achieved_delta = self.table.achieved_delta(self.budget.exp_epsilon)
        self.saturation = self.table.saturation + self.pre_threshold - 1
        self.derived = {
            "coordinates": self.budget.coordinates,
            "exp_epsilon_per_partition": self.budget.exp_epsilon,
            "delta_per_partition": self.achieved_delta,
            "always_kept_from": self.saturation,
        }

    def _budget(self) -> Budget:
        """What one partition's table may spend: ε and δ split over the partitions one unit
        changes (docs/mechanisms.md#contributions-to-several-partitions-and-bounded-dp)."""
        return Budget.from_params(self.params)

    def _target(self) -> Callable[[int], int] | None:
        """The curve (grid numerators) the optimal recurrence is capped by; None: optimal."""
        return None

    def _step_cap(self) -> Callable[[int], int] | None:
        """A bound on each step given the previous value (:meth:`KeepTable.build`); None."""
        return None

    @property
    def guarantee(self) -> Guarantee:
        return self.budget.compose(self.per_partition)

    @property
    def per_partition(self) -> Guarantee:
        return Guarantee(self.budget.exp_epsilon, self.achieved_delta, COUNT_SENSITIVITY_1)

    def _shifted(self, units: Any) -> Any:
        """Unit counts as the table sees them after the pre-threshold m: n − m + 1, or 0."""
        return np.maximum(units - (self.pre_threshold - 1), 0)

    def _keep_probability(self, units: int) -> Any:
        return self.table.probability(int(self._shifted(units)))

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        if public is not None:
            raise NotSupported(
                f"{self.name} has no public partitions; release public partitions without "
                "selection, or use truncated-geometric-thresholding with public_threshold"
            )
        flat = self._shifted(unit_counts.reshape(-1))
        return Selection(self.table.keep(flat, source).reshape(unit_counts.shape))

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        """The scalar form of :meth:`select`: one 63-bit draw against the table, the same draw
        :meth:`KeepTable.keep` makes for an element (validated first, drawn whatever the count).

        Written for PipelineDP's per-partition filter, where it runs once per partition: the
        table index is clipped by comparisons rather than ``min``/``max`` calls, and a
        :class:`~dpplug.randomness.SystemSource` serves the draw from its pool of words."""
        draw = default_source(source).bits
        values, saturation, shift = self.table.values, self.table.saturation, self.pre_threshold - 1

        def decide(units: int) -> bool:
            if (
                units.__class__ is not int
                and (isinstance(units, bool) or not isinstance(units, int))
            ) or units < 0:
                raise BadData(f"unit counts must be non-negative ints, got {units!r}")
            index = units - shift
            if index < 0:
                index = 0
            elif index > saturation:
                index = saturation
            return draw(GRID_BITS) < values[index]

        return decide

    def _accuracy(self, beta: Any) -> Accuracy:
        """Partitions with more than ``threshold`` units are kept with probability ≥ 1 − β."""
        bound = ErrorBound(0, beta)
        return Accuracy(
            bound,
            bound,
            threshold=max(self.kept_from(beta) - 1, 0),
            formula="smallest n with π(n) ≥ 1 − β (membership, no count released)",
        )
